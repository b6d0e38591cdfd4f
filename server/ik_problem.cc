// Problem assembly of the KinematicsService RPCs and their single-pose answers (ik_problem.h).
#include "ik_problem.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ikd/ik/diagnosis.h"
#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/robot_diagnosis.h"
#include "model_refs.h"
#include "reason_conversions.h"
#include "robot_cache.h"
#include "robot_conversions.h"

namespace ikd::server {
namespace {

// Starts of a branch search (BranchOptions): the seed, 63 atlas entries, 64 random ones. With
// 64 in all, 89% of the UR5 poses that have 8 solutions got all 8 (a folded elbow, q3 near
// +-pi, is rare among both kinds of start); with 128, all of them (bench/robot, "Every IK
// branch"), at about 31 ms a call. BranchOptions::attempts defaults to the same.
constexpr int kBranchAttempts = 128;

}  // namespace


// The server's bound on the stochastic trials of one sub-step.
absl::Status CheckTrials(const v1::IkOptions& options, const std::string& path,
                         const ModelLimits& limits) {
  if (options.trials_per_step() <= limits.max_trials_per_step) return absl::OkStatus();
  return FieldViolation(Below(path, "trials_per_step"),
                        absl::StrCat("at most ", limits.max_trials_per_step,
                                     " (--max_trials_per_step), got ", options.trials_per_step()));
}

// The fields every request has (Solve, SolveTrajectory, TrackConfig), at request path
// `prefix` ("" or "config").
absl::StatusOr<std::shared_ptr<IkProblem>> MakeProblem(
    const ResolvedArmSpec& arm_spec, const v1::SceneRef& scene_ref, const v1::IkOptions& options,
    const PositionList& positions, const std::string& prefix, const std::string& positions_field,
    ModelStore& store, const ModelLimits& limits) {
  auto problem = std::make_shared<IkProblem>();
  absl::StatusOr<ik::Arm> arm = ArmFromProto(arm_spec.spec, arm_spec.path, limits);
  if (!arm.ok()) return arm.status();
  problem->arm = std::make_unique<ik::Arm>(*std::move(arm));
  absl::StatusOr<std::unique_ptr<planning::Scene>> scene =
      SceneFromRef(scene_ref, Below(prefix, "scene"), store, limits);
  if (!scene.ok()) return scene.status();
  problem->scene = *std::move(scene);
  if (absl::Status s = CheckTrials(options, Below(prefix, "options"), limits); !s.ok()) return s;
  absl::StatusOr<ik::IkOptions> ik_options = IkOptionsFromProto(options, Below(prefix, "options"));
  if (!ik_options.ok()) return ik_options.status();
  problem->options = *ik_options;
  const std::string positions_path = Below(prefix, positions_field);
  absl::StatusOr<std::optional<Eigen::Matrix3Xd>> sites =
      SitesFromPositions(*problem->arm, positions, positions_path);
  if (!sites.ok()) return sites.status();
  problem->initial_sites = *std::move(sites);
  return problem;
}

absl::StatusOr<std::shared_ptr<RobotProblem>> MakeRobotProblem(
    const ResolvedArmSpec& arm_spec, const v1::SceneRef& scene_ref, const v1::IkOptions& options,
    const PositionList& positions, const std::string& prefix, const std::string& positions_field,
    ModelStore& store, const ModelLimits& limits) {
  absl::StatusOr<std::unique_ptr<planning::Scene>> scene =
      SceneFromRef(scene_ref, Below(prefix, "scene"), store, limits);
  if (!scene.ok()) return scene.status();
  if (absl::Status s = CheckTrials(options, Below(prefix, "options"), limits); !s.ok()) return s;
  absl::StatusOr<robot::RobotIkOptions> robot_options =
      RobotIkOptionsFromProto(options, Below(prefix, "options"));
  if (!robot_options.ok()) return robot_options.status();
  absl::StatusOr<std::shared_ptr<const robot::Robot>> robot =
      SharedRobotCache().Get(arm_spec.spec, arm_spec.path);
  if (!robot.ok()) return robot.status();
  if (robot_options->solver == robot::IkSolver::kAnalytic &&
      robot::AnalyticIkOf(**robot) == nullptr) {
    // Which axes fail which family's condition, as the closed form's own check words it.
    return FieldViolation(
        Below(prefix, "options.solver"),
        absl::StrCat("is ANALYTIC but ",
                     robot::AnalyticIk::Create((*robot)->spec()).status().message()));
  }
  auto problem = std::make_shared<RobotProblem>();
  problem->robot = *std::move(robot);
  absl::StatusOr<Eigen::VectorXd> initial =
      RobotPositions(*problem->robot, positions, RobotHome(*problem->robot, arm_spec.spec.robot()),
                     Below(prefix, positions_field));
  if (!initial.ok()) return initial.status();
  problem->initial = *std::move(initial);
  problem->options = *robot_options;
  problem->scene = *std::move(scene);
  return problem;
}

absl::Status EnsureScene(std::unique_ptr<planning::Scene>& scene) {
  if (scene != nullptr) return absl::OkStatus();
  absl::StatusOr<planning::Scene> empty = planning::Scene::Create({});
  if (!empty.ok()) return empty.status();
  scene = std::make_unique<planning::Scene>(*std::move(empty));
  return absl::OkStatus();
}

// The options of a path's tracker (SolveTrajectory, Track): its first target is solved from
// the initial configuration first, where the arm is, so the path starts on that branch; the
// seed atlas supplies the restarts. A unary Solve takes the nearest start (the default).
robot::RobotIkOptions PathOptions(robot::RobotIkOptions options) {
  options.starts = robot::SolveStarts::kGivenFirst;
  return options;
}

// An orientation is for industrial arms only.
absl::Status CheckNoOrientation(bool has_orientation, const std::string& field) {
  if (!has_orientation) return absl::OkStatus();
  return FieldViolation(field, "only industrial arms (ArmSpec.robot) take a tool orientation");
}

absl::StatusOr<ik::ArmTracker> NewTracker(const IkProblem& problem,
                                          const std::string& positions_path) {
  absl::StatusOr<ik::ArmTracker> tracker = ik::ArmTracker::Create(
      *problem.arm, problem.scene.get(), problem.options, problem.initial_sites);
  if (!tracker.ok()) return AtRequestPath(tracker.status(), positions_path);
  return tracker;
}

// A sample runs to its end once started (cancellation is checked between samples), so the hand
// sub-steps of one move are bounded.
absl::Status CheckSubSteps(const IkProblem& problem, const Eigen::Vector3d& from,
                           const Eigen::Vector3d& to, int64_t limit,
                           const std::string& options_path) {
  const int64_t substeps = SubStepsForMove(*problem.arm, problem.options, from, to);
  if (substeps <= limit) return absl::OkStatus();
  return FieldViolation(
      Below(options_path, "max_step_fraction"),
      absl::StrCat(problem.options.max_step_fraction, " needs ", substeps,
                   " hand sub-steps for a move of ", (to - from).norm(),
                   " m; the server allows at most ", limit,
                   " per sample: raise it (or sample the trajectory more finely)"));
}

// One IK sample, target or pose in the solver metrics: not converged when the solver gave up
// (an industrial arm's NOT_CONVERGED, or limits and limb lengths it could not restore).
void RecordIkStep(Metrics& metrics, const v1::JointState& state) {
  metrics.RecordSolverStep(SolverKind::kIkStep, state.iterations());
  if (state.status() == v1::STEP_STATUS_NOT_CONVERGED ||
      state.status() == v1::STEP_STATUS_JOINT_LIMIT_BLOCKED) {
    metrics.RecordNotConverged(SolverKind::kIkStep);
  }
}

void SetJointNames(const std::vector<std::string>& names,
                   google::protobuf::RepeatedPtrField<std::string>* out) {
  for (const std::string& name : names) *out->Add() = name;
}

absl::StatusOr<std::optional<robot::BranchOptions>> BranchOptionsFromProto(
    int max_solutions, double max_seed_distance) {
  if (max_solutions < 0 || max_solutions > kMaxSolutions) {
    return FieldViolation("max_solutions", absl::StrCat("must be between 0 and ", kMaxSolutions,
                                                        ", got ", max_solutions));
  }
  if (!std::isfinite(max_seed_distance) || max_seed_distance < 0.0) {
    return FieldViolation("max_seed_distance",
                          absl::StrCat("must be finite and >= 0, got ", max_seed_distance));
  }
  if (max_solutions < 2) return std::nullopt;
  robot::BranchOptions branches;
  branches.max_solutions = max_solutions;
  // Enough starts to meet every branch of a 6-DOF arm (8) several times over, whatever the
  // number asked for (about 31 ms a call; a 6R arm with a closed form needs none of them:
  // bench/robot, "Every IK branch").
  branches.attempts = kBranchAttempts;
  if (max_seed_distance > 0.0) branches.max_seed_distance = max_seed_distance;
  return branches;
}

void AddChainReasons(const IkProblem& problem, const Eigen::Matrix3Xd& sites,
                     const Eigen::Vector3d& target, v1::JointState& state) {
  ReasonsToProto(ik::DiagnoseChain(*problem.arm, problem.scene.get(), sites, target,
                                   problem.options.safety_margin),
                 problem.scene.get(), JointNames(*problem.arm), "limb", state.mutable_reasons());
}

void AddRobotReasons(const RobotProblem& problem, const Eigen::VectorXd& q,
                     const robot::ToolTarget& target, v1::JointState& state) {
  ReasonsToProto(
      robot::DiagnoseRobot(*problem.robot, problem.scene.get(), q, target, problem.options),
      problem.scene.get(), RobotJointNames(*problem.robot), "link", state.mutable_reasons());
}

absl::StatusOr<v1::JointState> SolveChainPose(const IkProblem& problem,
                                              const std::optional<Eigen::Matrix3Xd>& initial_sites,
                                              const Eigen::Vector3d& target,
                                              const std::function<bool()>& stop) {
  absl::StatusOr<ik::IkResult> step =
      problem.posture ? ik::SolvePoseWithPosture(*problem.arm, problem.scene.get(), target,
                                                 problem.options, initial_sites, *problem.posture,
                                                 stop)
                      : ik::SolvePose(*problem.arm, problem.scene.get(), target, problem.options,
                                      initial_sites);
  if (!step.ok()) return step.status();
  absl::StatusOr<v1::JointState> state = JointStateFromStep(*step, target, nullptr);
  if (!state.ok() || step->status == planning::StepStatus::kReached) return state;
  AddChainReasons(problem, step->sites, target, *state);
  return state;
}

absl::Status SolveRobotPose(const RobotProblem& problem, robot::RobotTracker& tracker,
                            const Eigen::VectorXd& seed, const robot::ToolTarget& target,
                            const std::optional<robot::BranchOptions>& branches,
                            const std::function<bool()>& stop, v1::JointState* state,
                            google::protobuf::RepeatedPtrField<v1::JointState>* solutions) {
  tracker.Reset(seed);
  absl::StatusOr<robot::RobotIkResult> solved =
      problem.posture
          ? robot::SolveWithPosture(tracker, *problem.robot, target, *problem.posture, stop)
          : tracker.Solve(target);
  if (!solved.ok()) return solved.status();
  const robot::RobotIkResult& result = *solved;
  absl::StatusOr<v1::JointState> answer =
      RobotJointState(*problem.robot, result, target, 0.0, nullptr);
  if (!answer.ok()) return answer.status();
  *state = *std::move(answer);
  if (result.status != planning::StepStatus::kReached) {
    AddRobotReasons(problem, result.q, target, *state);
  }
  if (!branches) return absl::OkStatus();
  absl::StatusOr<std::vector<robot::RobotIkResult>> all = robot::SolveBranches(
      *problem.robot, target, seed, problem.options, *branches, problem.scene.get(), stop);
  if (!all.ok()) return all.status();
  for (const robot::RobotIkResult& branch : *all) {
    absl::StatusOr<v1::JointState> solution =
        RobotJointState(*problem.robot, branch, target, 0.0, nullptr);
    if (!solution.ok()) return solution.status();
    *solutions->Add() = *std::move(solution);
  }
  return absl::OkStatus();
}

}  // namespace ikd::server
