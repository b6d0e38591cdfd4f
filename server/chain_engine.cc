// Chain arms (the ik/ engine) behind the ArmEngine interface (arm_engine.h).
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arm_engine.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ik_problem.h"
#include "ikd/ik/path.h"
#include "ikd/ik/rate_limit.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"

namespace ikd::server {
namespace {

// The longest hand move between consecutive samples (from the start configuration to the
// first sample, then sample to sample) against the sub-step limit.
absl::Status CheckTrajectorySubSteps(const IkProblem& problem, const ik::Trajectory& trajectory,
                                     const std::vector<double>& times, int64_t limit) {
  Eigen::Vector3d from = problem.InitialHand();
  for (double t : times) {
    const Eigen::Vector3d to = trajectory.PositionAt(t);
    if (absl::Status s = CheckSubSteps(problem, from, to, limit, "options"); !s.ok()) return s;
    from = to;
  }
  return absl::OkStatus();
}

// A chain arm's path of up to kMaxPlannedSamples samples is planned as a whole (ik::PlanPath:
// the driver, then the path-level optimizer and the rate check) on the worker that solves the
// first sample; a longer one, or one asked for without optimization, streams from the driver
// sample by sample as each is solved (no rate statuses).
struct PlannedArmPath {
  std::optional<ik::PathResult> result;
  size_t next = 0;  // the sample to answer next (the reactor asks in order, one at a time)
};

// The plan's sample solver: the whole path on the first call, then one step per call.
SampleSolver PlannedSamples(grpc::CallbackServerContext* context,
                            std::shared_ptr<IkProblem> problem,
                            std::shared_ptr<ik::Trajectory> path, std::vector<double> times,
                            std::shared_ptr<PlannedArmPath> planned) {
  return [context, problem, planned, path, times = std::move(times)](
             double t, const v1::JointState* previous) -> absl::StatusOr<v1::JointState> {
    if (!planned->result) {
      const ik::StopCheck stop = [context] {
        return context->IsCancelled() || context->deadline() < std::chrono::system_clock::now();
      };
      absl::StatusOr<ik::PathResult> result =
          ik::PlanPath(*problem->arm, problem->scene.get(), *path, times, problem->options,
                       problem->initial_sites, stop);
      if (!result.ok()) return result.status();
      planned->result = *std::move(result);
    }
    const ik::IkResult& step = planned->result->steps.at(planned->next++);
    return JointStateFromStep(step, path->PositionAt(t), previous);
  };
}

// The driver's sample solver, one sample per call.
absl::StatusOr<SampleSolver> DrivenSamples(std::shared_ptr<IkProblem> problem,
                                           std::shared_ptr<ik::Trajectory> path) {
  absl::StatusOr<ik::PathDriver> driver = ik::PathDriver::Create(
      *problem->arm, problem->scene.get(), *path, problem->options, problem->initial_sites);
  if (!driver.ok()) return AtRequestPath(driver.status(), "initial_positions");
  auto shared_driver = std::make_shared<ik::PathDriver>(*std::move(driver));
  return SampleSolver([problem, path, driver = std::move(shared_driver)](
                          double t,
                          const v1::JointState* previous) -> absl::StatusOr<v1::JointState> {
    absl::StatusOr<ik::IkResult> step = driver->StepTo(t);
    if (!step.ok()) return step.status();
    return JointStateFromStep(*step, path->PositionAt(t), previous);
  });
}

absl::StatusOr<TrajectoryPlan> PlanArmTrajectory(grpc::CallbackServerContext* context,
                                                 const v1::SolveTrajectoryRequest& request,
                                                 const ResolvedArmSpec& arm,
                                                 ik::Trajectory trajectory,
                                                 const std::vector<double>& times,
                                                 ModelStore& store, const ModelLimits& model_limits,
                                                 const KinematicsLimits& limits) {
  if (absl::Status s = CheckNoOrientation(request.has_tool_orientation(), "tool_orientation");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(arm, request.scene(), request.options(), request.initial_positions(), "",
                  "initial_positions", store, model_limits);
  if (!problem.ok()) return problem.status();
  absl::Status bounded =
      CheckTrajectorySubSteps(**problem, trajectory, times, limits.max_substeps_per_sample);
  if (!bounded.ok()) return bounded;
  // The tracker is made here, so that a bad start configuration is refused up front.
  if (absl::StatusOr<ik::ArmTracker> tracker = NewTracker(**problem, "initial_positions");
      !tracker.ok()) {
    return tracker.status();
  }
  auto path = std::make_shared<ik::Trajectory>(std::move(trajectory));
  const std::vector<std::string> names = JointNames(*(*problem)->arm);
  if (times.size() > kMaxPlannedSamples || !(*problem)->options.optimize_path) {
    absl::StatusOr<SampleSolver> driven = DrivenSamples(*problem, path);
    if (!driven.ok()) return driven.status();
    return TrajectoryPlan{*std::move(driven), names, {}};
  }
  auto planned = std::make_shared<PlannedArmPath>();
  auto complete = [planned](v1::TrajectorySummary& summary) {
    if (planned->result) SetRateSummary(planned->result->summary, summary);
  };
  return TrajectoryPlan{PlannedSamples(context, *problem, path, times, planned), names,
                        std::move(complete)};
}

// A chain arm's Solve: one answer (max_solutions is for industrial arms), from the seed.
absl::StatusOr<PoseSolve> PrepareChainSolve(grpc::CallbackServerContext* context,
                                            const v1::SolveRequest& request,
                                            const ResolvedArmSpec& arm, ModelStore& store,
                                            const ModelLimits& model_limits,
                                            const KinematicsLimits& limits) {
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(arm, request.scene(), request.options(), request.seed_positions(), "",
                  "seed_positions", store, model_limits);
  if (!problem.ok()) return problem.status();
  absl::StatusOr<Eigen::Vector3d> target = TargetFromProto(request.target(), "target");
  absl::Status valid = target.status();
  if (valid.ok()) {
    valid = CheckNoOrientation(request.has_target_orientation(), "target_orientation");
  }
  if (valid.ok() && request.max_solutions() > 1) {
    valid = FieldViolation("max_solutions", "more than one solution is for industrial arms "
                                            "(an arm with a robot spec); a chain arm answers one");
  }
  if (valid.ok()) {
    valid = CheckSubSteps(**problem, (*problem)->InitialHand(), *target,
                          limits.max_substeps_per_sample, "options");
  }
  absl::StatusOr<std::optional<ik::Posture>> posture =
      PostureFromProto(request.preferred_posture(), request.posture_weight(),
                       (*problem)->arm->num_angles());
  if (valid.ok()) valid = posture.status();
  if (valid.ok()) (*problem)->posture = *std::move(posture);
  if (!valid.ok()) return valid;
  return PoseSolve([context, problem = *problem, target = *target](v1::SolveResponse* response) {
    absl::StatusOr<v1::JointState> state = SolveChainPose(
        *problem, problem->initial_sites, target, [context] { return context->IsCancelled(); });
    if (!state.ok()) return state.status();
    SetJointNames(JointNames(*problem->arm), response->mutable_joint_names());
    *response->mutable_state() = *std::move(state);
    return absl::OkStatus();
  });
}

// A chain arm's batch: every target and seed checked as Solve checks them.
absl::StatusOr<BatchPlan> ChainBatch(grpc::CallbackServerContext* context,
                                     const v1::SolveBatchRequest& request,
                                     const ResolvedArmSpec& arm, ModelStore& store,
                                     const ModelLimits& model_limits,
                                     const KinematicsLimits& limits) {
  if (request.max_solutions() > 1) {
    return FieldViolation("max_solutions", "more than one solution is for industrial arms "
                                           "(an arm with a robot spec); a chain arm answers one");
  }
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(arm, request.scene(), request.options(), request.seed_positions(), "",
                  "seed_positions", store, model_limits);
  if (!problem.ok()) return problem.status();
  absl::StatusOr<std::optional<ik::Posture>> posture = PostureFromProto(
      request.preferred_posture(), request.posture_weight(), (*problem)->arm->num_angles());
  if (!posture.ok()) return posture.status();
  (*problem)->posture = *std::move(posture);
  struct Target {
    Eigen::Vector3d position;
    std::optional<Eigen::Matrix3Xd> seed;  // nullopt: the request's
  };
  auto targets = std::make_shared<std::vector<Target>>();
  targets->reserve(request.targets_size());
  for (int i = 0; i < request.targets_size(); ++i) {
    const v1::BatchTarget& in = request.targets(i);
    absl::StatusOr<Eigen::Vector3d> position =
        TargetFromProto(in.position(), TargetField(i, "position"));
    if (!position.ok()) return position.status();
    if (absl::Status s = CheckNoOrientation(in.has_orientation(), TargetField(i, "orientation"));
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::optional<Eigen::Matrix3Xd>> seed =
        SitesFromPositions(*(*problem)->arm, in.seed_positions(), TargetField(i, "seed_positions"));
    if (!seed.ok()) return seed.status();
    const Eigen::Vector3d from =
        *seed ? (*seed)->col((*problem)->arm->hand()) : (*problem)->InitialHand();
    if (absl::Status s =
            CheckSubSteps(**problem, from, *position, limits.max_substeps_per_sample, "options");
        !s.ok()) {
      return s;
    }
    targets->push_back({*position, *std::move(seed)});
  }
  BatchPlan plan;
  plan.targets = request.targets_size();
  plan.joint_names = JointNames(*(*problem)->arm);
  plan.new_solver = [context, problem = *problem, targets]() -> absl::StatusOr<TargetSolver> {
    return TargetSolver([context, problem, targets](int index, v1::BatchResult& result) {
      const Target& target = (*targets)[index];
      absl::StatusOr<v1::JointState> state =
          SolveChainPose(*problem, target.seed ? target.seed : problem->initial_sites,
                         target.position, [context] { return context->IsCancelled(); });
      if (!state.ok()) return state.status();
      *result.mutable_state() = *std::move(state);
      return absl::OkStatus();
    });
  };
  return plan;
}

// Track: live answers keep the arm's servo limits relative to the previous answer
// (rate_limit.h).
class ChainTrackEngine final : public TrackEngine {
 public:
  ChainTrackEngine(std::shared_ptr<IkProblem> problem, ik::RateLimitedTracker tracker,
                   const KinematicsLimits& limits)
      : problem_(std::move(problem)),
        tracker_(std::move(tracker)),
        limits_(limits),
        joint_names_(JointNames(*problem_->arm)) {}

  absl::StatusOr<PoseTarget> CheckTarget(const v1::TrackTarget& target) const override {
    if (absl::Status s = CheckNoOrientation(target.has_orientation(), "target.orientation");
        !s.ok()) {
      return s;
    }
    absl::StatusOr<Eigen::Vector3d> position =
        TargetFromProto(target.position(), "target.position");
    if (!position.ok()) return position.status();
    // No solve is running (strict sequencing), so the tracker's hand can be read here.
    const Eigen::Vector3d hand = tracker_.sites().col(problem_->arm->hand());
    absl::Status bounded = CheckSubSteps(*problem_, hand, *position,
                                         limits_.max_substeps_per_sample, "config.options");
    if (!bounded.ok()) return bounded;
    PoseTarget pose;
    pose.position = *position;
    return pose;
  }

  int64_t StepsTo(const PoseTarget& target) const override {
    const Eigen::Vector3d hand = tracker_.sites().col(problem_->arm->hand());
    return SubStepsForMove(*problem_->arm, problem_->options, hand, target.position);
  }

  absl::Status StepTo(const PoseTarget& target, double time) override {
    absl::StatusOr<ik::IkResult> step = tracker_.StepTo(target.position, time);
    if (!step.ok()) return step.status();
    step_ = *std::move(step);
    target_ = target.position;
    return absl::OkStatus();
  }

  void Brake(const PoseTarget& target, double time) override {
    step_ = tracker_.Brake(target.position, time);
    target_ = target.position;
  }

  double MeasureSolveSeconds() const override {
    absl::StatusOr<ik::RateLimitedTracker> scratch = ik::RateLimitedTracker::Create(
        *problem_->arm, problem_->scene.get(), problem_->options, problem_->initial_sites);
    if (!scratch.ok()) return 0.0;  // the stream's own tracker was made from the same inputs
    const Eigen::Vector3d hand = scratch->sites().col(problem_->arm->hand());
    return MeanSolveSeconds(problem_->arm->max_reach(),
                            [&](double time, const Eigen::Vector3d& offset) {
                              (void)scratch->StepTo(hand + offset, time);
                            });
  }

  absl::StatusOr<v1::JointState> Answer(const v1::JointState* previous) const override {
    absl::StatusOr<v1::JointState> state = JointStateFromStep(*step_, target_, previous);
    if (state.ok() && SaysWhy(step_->status)) {
      AddChainReasons(*problem_, step_->sites, target_, *state);
    }
    return state;
  }

  const std::vector<std::string>& joint_names() const override { return joint_names_; }
  planning::Scene& scene() override { return *problem_->scene; }

 private:
  const std::shared_ptr<IkProblem> problem_;  // the tracker points into its arm and scene
  ik::RateLimitedTracker tracker_;
  const KinematicsLimits limits_;
  const std::vector<std::string> joint_names_;
  std::optional<ik::IkResult> step_;  // the last StepTo's, at target_
  Eigen::Vector3d target_ = Eigen::Vector3d::Zero();
};

class ChainEngine final : public ArmEngine {
 public:
  explicit ChainEngine(EngineInputs inputs) : in_(std::move(inputs)) {}

  absl::StatusOr<std::unique_ptr<TrackEngine>> StartTrack(
      const v1::TrackConfig& config) override {
    absl::StatusOr<std::shared_ptr<IkProblem>> problem =
        MakeProblem(in_.arm, config.scene(), config.options(), config.initial_positions(),
                    "config", "initial_positions", *in_.store, in_.model_limits);
    if (!problem.ok()) return problem.status();
    if (absl::Status s = EnsureScene((*problem)->scene); !s.ok()) return s;
    absl::StatusOr<ik::RateLimitedTracker> tracker =
        ik::RateLimitedTracker::Create(*(*problem)->arm, (*problem)->scene.get(),
                                       (*problem)->options, (*problem)->initial_sites);
    if (!tracker.ok()) return AtRequestPath(tracker.status(), "config.initial_positions");
    return std::make_unique<ChainTrackEngine>(*std::move(problem), *std::move(tracker),
                                              in_.limits);
  }

  absl::StatusOr<TrajectoryPlan> PlanTrajectory(grpc::CallbackServerContext* context,
                                                const v1::SolveTrajectoryRequest& request,
                                                ik::Trajectory trajectory,
                                                const std::vector<double>& times) override {
    return PlanArmTrajectory(context, request, in_.arm, std::move(trajectory), times, *in_.store,
                             in_.model_limits, in_.limits);
  }

  absl::StatusOr<PoseSolve> PrepareSolve(grpc::CallbackServerContext* context,
                                         const v1::SolveRequest& request) override {
    return PrepareChainSolve(context, request, in_.arm, *in_.store, in_.model_limits,
                             in_.limits);
  }

  absl::StatusOr<BatchPlan> PlanBatch(grpc::CallbackServerContext* context,
                                      const v1::SolveBatchRequest& request) override {
    return ChainBatch(context, request, in_.arm, *in_.store, in_.model_limits, in_.limits);
  }

 private:
  const EngineInputs in_;
};

}  // namespace

std::unique_ptr<ArmEngine> NewChainEngine(EngineInputs inputs) {
  return std::make_unique<ChainEngine>(std::move(inputs));
}

}  // namespace ikd::server
