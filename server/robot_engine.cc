// Industrial arms (ArmSpec.robot, the robot/ engine) behind the ArmEngine interface
// (arm_engine.h).
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arm_engine.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ik_problem.h"
#include "ikd/ik/trajectory.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/robot/robot_path.h"
#include "ikd/robot/robot_rate_limit.h"
#include "robot_conversions.h"

namespace ikd::server {
namespace {

struct PlannedRobotPath {
  std::optional<robot::RobotPathResult> result;
  size_t next = 0;  // the sample to answer next (the reactor asks in order, one at a time)
};

// The tool target of every sample time, the orientation held throughout (or none).
std::vector<robot::ToolTarget> ToolTargets(const ik::Trajectory& path,
                                           const std::vector<double>& times,
                                           const std::optional<Eigen::Quaterniond>& orientation) {
  std::vector<robot::ToolTarget> targets(times.size());
  for (size_t k = 0; k < times.size(); ++k) {
    targets[k].position = path.PositionAt(times[k]);
    targets[k].orientation = orientation;
  }
  return targets;
}

// An industrial arm's path of up to kMaxPlannedSamples samples is planned as a whole
// (robot::PlanRobotPath: least joint motion per step, then the rate check) on the worker that
// solves the first sample; a longer one, or one asked for without optimization, streams sample
// by sample from the same tracker (no acceleration statuses).
SampleSolver PlannedRobotSamples(grpc::CallbackServerContext* context,
                                 std::shared_ptr<RobotProblem> problem,
                                 std::vector<robot::ToolTarget> targets, std::vector<double> times,
                                 std::shared_ptr<PlannedRobotPath> planned) {
  return [context, problem, planned, targets = std::move(targets), times = std::move(times)](
             double t, const v1::JointState* previous) -> absl::StatusOr<v1::JointState> {
    if (!planned->result) {
      const robot::RobotStopCheck stop = [context] {
        return context->IsCancelled() || context->deadline() < std::chrono::system_clock::now();
      };
      absl::StatusOr<robot::RobotPathResult> result =
          robot::PlanRobotPath(*problem->robot, problem->scene.get(), targets, times,
                               problem->options, problem->initial, stop);
      if (!result.ok()) return result.status();
      planned->result = *std::move(result);
    }
    const size_t k = planned->next++;
    return RobotJointState(*problem->robot, planned->result->samples.at(k), targets.at(k), t,
                           previous);
  };
}

absl::StatusOr<TrajectoryPlan> PlanRobotTrajectory(grpc::CallbackServerContext* context,
                                                   const v1::SolveTrajectoryRequest& request,
                                                   const ResolvedArmSpec& arm,
                                                   ik::Trajectory trajectory,
                                                   const std::vector<double>& times,
                                                   ModelStore& store, const ModelLimits& limits) {
  absl::StatusOr<std::shared_ptr<RobotProblem>> problem =
      MakeRobotProblem(arm, request.scene(), request.options(), request.initial_positions(), "",
                       "initial_positions", store, limits);
  if (!problem.ok()) return problem.status();
  // The orientation is checked once; every sample holds it.
  absl::StatusOr<robot::ToolTarget> start =
      ToolTargetFromProto(v1::Vector3(), "trajectory", request.has_tool_orientation(),
                          request.tool_orientation(), "tool_orientation");
  if (!start.ok()) return start.status();
  // The tracker is made here, so that a bad start configuration is refused up front.
  absl::StatusOr<robot::RobotTracker> tracker = robot::RobotTracker::Create(
      *(*problem)->robot, PathOptions((*problem)->options), (*problem)->initial,
      (*problem)->scene.get());
  if (!tracker.ok()) return tracker.status();
  auto path = std::make_shared<ik::Trajectory>(std::move(trajectory));
  const std::vector<std::string> names = RobotJointNames(*(*problem)->robot);
  if (times.size() <= kMaxPlannedSamples && !request.options().no_path_optimization()) {
    auto planned = std::make_shared<PlannedRobotPath>();
    auto complete = [planned](v1::TrajectorySummary& summary) {
      if (planned->result) SetRateSummary(planned->result->summary, summary);
    };
    return TrajectoryPlan{
        PlannedRobotSamples(context, *problem, ToolTargets(*path, times, start->orientation),
                            times, planned),
        names, std::move(complete)};
  }
  auto shared_tracker = std::make_shared<robot::RobotTracker>(*std::move(tracker));
  SampleSolver solve = [problem = *problem, tracker = shared_tracker, path,
                        orientation = start->orientation](
                           double t,
                           const v1::JointState* previous) -> absl::StatusOr<v1::JointState> {
    robot::ToolTarget target;
    target.position = path->PositionAt(t);
    target.orientation = orientation;
    // As robot::PlanRobotPath: the first target is a single-pose solve, later ones continue.
    const robot::RobotIkResult result =
        previous == nullptr ? tracker->Solve(target)
                            : tracker->StepTo(target, t - previous->time());
    return RobotJointState(*problem->robot, result, target, t, previous);
  };
  return TrajectoryPlan{std::move(solve), names, {}};
}

// Solve: single-pose IK, continuation from the seed with restarts (robot::SolveRobotIk); with
// max_solutions >= 2 also the distinct branches (robot::SolveBranches).
absl::StatusOr<PoseSolve> PrepareRobotSolve(grpc::CallbackServerContext* context,
                                            const v1::SolveRequest& request,
                                            const ResolvedArmSpec& arm, ModelStore& store,
                                            const ModelLimits& limits) {
  absl::StatusOr<std::shared_ptr<RobotProblem>> problem =
      MakeRobotProblem(arm, request.scene(), request.options(), request.seed_positions(), "",
                       "seed_positions", store, limits);
  if (!problem.ok()) return problem.status();
  absl::StatusOr<robot::ToolTarget> target =
      ToolTargetFromProto(request.target(), "target", request.has_target_orientation(),
                          request.target_orientation(), "target_orientation");
  if (!target.ok()) return target.status();
  absl::StatusOr<std::optional<robot::BranchOptions>> branches =
      BranchOptionsFromProto(request.max_solutions(), request.max_seed_distance());
  absl::StatusOr<std::optional<ik::Posture>> posture =
      PostureFromProto(request.preferred_posture(), request.posture_weight(),
                       (*problem)->robot->num_joints());
  absl::Status valid = branches.ok() ? posture.status() : branches.status();
  if (!valid.ok()) return valid;
  (*problem)->posture = *std::move(posture);
  return PoseSolve([context, problem = *problem, target = *target,
                    branches = *branches](v1::SolveResponse* response) {
    absl::StatusOr<robot::RobotTracker> tracker = robot::RobotTracker::Create(
        *problem->robot, problem->options, problem->initial, problem->scene.get());
    if (!tracker.ok()) return tracker.status();
    SetJointNames(RobotJointNames(*problem->robot), response->mutable_joint_names());
    return SolveRobotPose(
        *problem, *tracker, problem->initial, target, branches,
        [context] { return context->IsCancelled(); }, response->mutable_state(),
        response->mutable_solutions());
  });
}

// An industrial arm's batch: one tracker per chunk, reset to each target's seed.
absl::StatusOr<BatchPlan> RobotBatch(grpc::CallbackServerContext* context,
                                     const v1::SolveBatchRequest& request,
                                     const ResolvedArmSpec& arm, ModelStore& store,
                                     const ModelLimits& model_limits) {
  absl::StatusOr<std::shared_ptr<RobotProblem>> problem =
      MakeRobotProblem(arm, request.scene(), request.options(), request.seed_positions(), "",
                       "seed_positions", store, model_limits);
  if (!problem.ok()) return problem.status();
  absl::StatusOr<std::optional<robot::BranchOptions>> branches =
      BranchOptionsFromProto(request.max_solutions(), request.max_seed_distance());
  if (!branches.ok()) return branches.status();
  absl::StatusOr<std::optional<ik::Posture>> posture = PostureFromProto(
      request.preferred_posture(), request.posture_weight(), (*problem)->robot->num_joints());
  if (!posture.ok()) return posture.status();
  (*problem)->posture = *std::move(posture);
  struct Target {
    robot::ToolTarget pose;
    Eigen::VectorXd seed;
  };
  auto targets = std::make_shared<std::vector<Target>>();
  targets->reserve(request.targets_size());
  for (int i = 0; i < request.targets_size(); ++i) {
    const v1::BatchTarget& in = request.targets(i);
    absl::StatusOr<robot::ToolTarget> pose =
        ToolTargetFromProto(in.position(), TargetField(i, "position"), in.has_orientation(),
                            in.orientation(), TargetField(i, "orientation"));
    if (!pose.ok()) return pose.status();
    absl::StatusOr<Eigen::VectorXd> seed =
        RobotPositions(*(*problem)->robot, in.seed_positions(), (*problem)->initial,
                       TargetField(i, "seed_positions"));
    if (!seed.ok()) return seed.status();
    targets->push_back({*std::move(pose), *std::move(seed)});
  }
  BatchPlan plan;
  plan.targets = request.targets_size();
  plan.joint_names = RobotJointNames(*(*problem)->robot);
  plan.new_solver = [context, problem = *problem, targets,
                     branches = *branches]() -> absl::StatusOr<TargetSolver> {
    absl::StatusOr<robot::RobotTracker> made = robot::RobotTracker::Create(
        *problem->robot, problem->options, problem->initial, problem->scene.get());
    if (!made.ok()) return made.status();
    auto tracker = std::make_shared<robot::RobotTracker>(*std::move(made));
    return TargetSolver([context, problem, targets, branches, tracker](int index,
                                                                        v1::BatchResult& result) {
      const Target& target = (*targets)[index];
      return SolveRobotPose(*problem, *tracker, target.seed, target.pose, branches,
                            [context] { return context->IsCancelled(); }, result.mutable_state(),
                            result.mutable_solutions());
    });
  };
  return plan;
}

// Track: the first target as a single pose (restarts included), as in SolveTrajectory; later
// ones within the joints' rate limits from the last answer (robot_rate_limit.h).
class RobotTrackEngine final : public TrackEngine {
 public:
  RobotTrackEngine(std::shared_ptr<RobotProblem> problem, robot::RateLimitedRobotTracker tracker)
      : problem_(std::move(problem)),
        tracker_(std::move(tracker)),
        joint_names_(RobotJointNames(*problem_->robot)) {}

  absl::StatusOr<PoseTarget> CheckTarget(const v1::TrackTarget& target) const override {
    // A move's work is bounded by the tracker's own step budget (RobotIkOptions::max_steps).
    return ToolTargetFromProto(target.position(), "target.position", target.has_orientation(),
                               target.orientation(), "target.orientation");
  }

  // The tool sites' largest move (the TCP's, plus the turn times the sites' spacing from it)
  // over the tracker's step, max_step_fraction of the spacing.
  int64_t StepsTo(const PoseTarget& target) const override {
    if (result_.q.size() == 0) return std::numeric_limits<int64_t>::max();
    const robot::Robot& robot = *problem_->robot;
    const Eigen::Isometry3d now = robot::ToolPose(robot.spec(), result_.q);
    double move = (target.position - now.translation()).norm();
    if (target.orientation) {
      move += Eigen::AngleAxisd(now.linear().transpose() * target.orientation->toRotationMatrix())
                  .angle() *
              robot.spacing();
    }
    const double step = problem_->options.max_step_fraction * robot.spacing();
    return static_cast<int64_t>(std::ceil(std::min(move / step, 1e15)));
  }

  absl::Status StepTo(const PoseTarget& target, double time) override {
    result_ = tracker_.StepTo(target, time);
    target_ = target;
    time_ = time;
    return absl::OkStatus();
  }

  void Brake(const PoseTarget& target, double time) override {
    result_ = tracker_.Brake(target, time);
    target_ = target;
    time_ = time;
  }

  double MeasureSolveSeconds() const override {
    const robot::Robot& robot = *problem_->robot;
    absl::StatusOr<robot::RateLimitedRobotTracker> scratch = robot::RateLimitedRobotTracker::Create(
        robot, PathOptions(problem_->options), problem_->initial, problem_->scene.get());
    if (!scratch.ok()) return 0.0;  // the stream's own tracker was made from the same inputs
    const Eigen::Isometry3d start = robot::ToolPose(robot.spec(), problem_->initial);
    robot::ToolTarget target;  // full pose targets: the dearer kind
    target.orientation = Eigen::Quaterniond(start.linear());
    // The tool's distance from the base: the reach the motion is scaled to.
    const double reach = (start.translation() - robot.spec().X_WB.translation()).norm();
    return MeanSolveSeconds(reach, [&](double time, const Eigen::Vector3d& offset) {
      target.position = start.translation() + offset;
      scratch->StepTo(target, time);
    });
  }

  absl::StatusOr<v1::JointState> Answer(const v1::JointState* previous) const override {
    absl::StatusOr<v1::JointState> state =
        RobotJointState(*problem_->robot, result_, target_, time_, previous);
    if (state.ok() && SaysWhy(result_.status)) {
      AddRobotReasons(*problem_, result_.q, target_, *state);
    }
    return state;
  }

  const std::vector<std::string>& joint_names() const override { return joint_names_; }
  planning::Scene& scene() override { return *problem_->scene; }

 private:
  const std::shared_ptr<RobotProblem> problem_;  // the tracker points into its robot and scene
  robot::RateLimitedRobotTracker tracker_;
  const std::vector<std::string> joint_names_;
  robot::RobotIkResult result_;  // the last StepTo's, for target_ at time_
  PoseTarget target_;
  double time_ = 0.0;
};

class RobotEngine final : public ArmEngine {
 public:
  explicit RobotEngine(EngineInputs inputs) : in_(std::move(inputs)) {}

  absl::StatusOr<std::unique_ptr<TrackEngine>> StartTrack(
      const v1::TrackConfig& config) override {
    absl::StatusOr<std::shared_ptr<RobotProblem>> problem =
        MakeRobotProblem(in_.arm, config.scene(), config.options(), config.initial_positions(),
                         "config", "initial_positions", *in_.store, in_.model_limits);
    if (!problem.ok()) return problem.status();
    if (absl::Status s = EnsureScene((*problem)->scene); !s.ok()) return s;
    absl::StatusOr<robot::RateLimitedRobotTracker> tracker =
        robot::RateLimitedRobotTracker::Create(*(*problem)->robot,
                                               PathOptions((*problem)->options),
                                               (*problem)->initial, (*problem)->scene.get());
    if (!tracker.ok()) return AtRequestPath(tracker.status(), "config");
    return std::make_unique<RobotTrackEngine>(*std::move(problem), *std::move(tracker));
  }

  absl::StatusOr<TrajectoryPlan> PlanTrajectory(grpc::CallbackServerContext* context,
                                                const v1::SolveTrajectoryRequest& request,
                                                ik::Trajectory trajectory,
                                                const std::vector<double>& times) override {
    return PlanRobotTrajectory(context, request, in_.arm, std::move(trajectory), times,
                               *in_.store, in_.model_limits);
  }

  absl::StatusOr<PoseSolve> PrepareSolve(grpc::CallbackServerContext* context,
                                         const v1::SolveRequest& request) override {
    return PrepareRobotSolve(context, request, in_.arm, *in_.store, in_.model_limits);
  }

  absl::StatusOr<BatchPlan> PlanBatch(grpc::CallbackServerContext* context,
                                      const v1::SolveBatchRequest& request) override {
    return RobotBatch(context, request, in_.arm, *in_.store, in_.model_limits);
  }

 private:
  const EngineInputs in_;
};

}  // namespace

std::unique_ptr<ArmEngine> NewRobotEngine(EngineInputs inputs) {
  return std::make_unique<RobotEngine>(std::move(inputs));
}

}  // namespace ikd::server
