// Problem assembly of the KinematicsService RPCs (Solve, SolveBatch, SolveTrajectory, Track):
// a request's arm, scene, options and start configuration turned into what the chain-arm
// engine (ik/) or the industrial-arm engine (robot/) solves with, every error naming the
// request field; and the single-pose answers that Solve and SolveBatch share, so that a batch
// target is answered with the same bytes as the Solve of the same pose and seed.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/posture.h"
#include "ikd/ik/tracker.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_branches.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/robot/robot_posture.h"
#include "ikd/v1/kinematics_service.pb.h"
#include "metrics.h"
#include "model_store.h"
#include "validation.h"

namespace ikd::server {

// Everything one call solves with. The tracker keeps pointers to arm and scene, so they live
// here, on the heap, for the whole call.
struct IkProblem {
  std::unique_ptr<ik::Arm> arm;
  std::unique_ptr<planning::Scene> scene;  // null: free space
  ik::IkOptions options;
  std::optional<Eigen::Matrix3Xd> initial_sites;  // null: home
  std::optional<ik::Posture> posture;             // Solve, SolveBatch: the preferred posture

  Eigen::Vector3d InitialHand() const {
    if (initial_sites) return initial_sites->col(arm->hand());
    return arm->HomeSites().col(arm->hand());
  }
};

// An industrial arm's call (robot_conversions.h): the robot, its start configuration and the
// solver options (the IkOptions seed; the chain tracker's other options do not apply).
struct RobotProblem {
  std::shared_ptr<const robot::Robot> robot;  // shared with other requests (SharedRobotCache)
  std::unique_ptr<planning::Scene> scene;     // null: free space
  Eigen::VectorXd initial;
  robot::RobotIkOptions options;
  std::optional<ik::Posture> posture;  // Solve, SolveBatch: the preferred posture
};

// The server's bound on the stochastic trials of one sub-step.
absl::Status CheckTrials(const v1::IkOptions& options, const std::string& path,
                         const ModelLimits& limits);

// The fields every request has (Solve, SolveBatch, SolveTrajectory, TrackConfig), at request
// path `prefix` ("" or "config"); the start configuration from `positions` (field
// `positions_field`).
absl::StatusOr<std::shared_ptr<IkProblem>> MakeProblem(
    const ResolvedArmSpec& arm_spec, const v1::SceneRef& scene_ref, const v1::IkOptions& options,
    const PositionList& positions, const std::string& prefix, const std::string& positions_field,
    ModelStore& store, const ModelLimits& limits);

absl::StatusOr<std::shared_ptr<RobotProblem>> MakeRobotProblem(
    const ResolvedArmSpec& arm_spec, const v1::SceneRef& scene_ref, const v1::IkOptions& options,
    const PositionList& positions, const std::string& prefix, const std::string& positions_field,
    ModelStore& store, const ModelLimits& limits);

// Track: always a scene (maybe empty), so that scene updates have somewhere to go.
absl::Status EnsureScene(std::unique_ptr<planning::Scene>& scene);

// The options of a path's tracker (SolveTrajectory, Track): its first target is solved from
// the initial configuration first, where the arm is, so the path starts on that branch.
robot::RobotIkOptions PathOptions(robot::RobotIkOptions options);

// An orientation is for industrial arms only.
absl::Status CheckNoOrientation(bool has_orientation, const std::string& field);

absl::StatusOr<ik::ArmTracker> NewTracker(const IkProblem& problem,
                                          const std::string& positions_path);

// The hand sub-steps of one move from `from` to `to` against `limit` (a sample runs to its end
// once started, so they are bounded); the error names options_path's max_step_fraction.
absl::Status CheckSubSteps(const IkProblem& problem, const Eigen::Vector3d& from,
                           const Eigen::Vector3d& to, int64_t limit,
                           const std::string& options_path);

// One IK sample, target or pose in the solver metrics.
void RecordIkStep(Metrics& metrics, const v1::JointState& state);

void SetJointNames(const std::vector<std::string>& names,
                   google::protobuf::RepeatedPtrField<std::string>* out);

// SolveRequest (SolveBatchRequest) .max_solutions: 2..kMaxSolutions asks for the branches.
inline constexpr int kMaxSolutions = 64;

// The branch options of max_solutions and max_seed_distance, or nullopt for a single answer;
// errors name the field.
absl::StatusOr<std::optional<robot::BranchOptions>> BranchOptionsFromProto(
    int max_solutions, double max_seed_distance);

// Why an answer of `problem`'s arm at `sites` (chain) or `q` (industrial) is short of `target`
// (ik/diagnosis.h, robot/robot_diagnosis.h, read from the answer itself), appended to
// `state.reasons`: Solve's and SolveBatch's answers that are not REACHED, and Track's limited
// or held ones.
void AddChainReasons(const IkProblem& problem, const Eigen::Matrix3Xd& sites,
                     const Eigen::Vector3d& target, v1::JointState& state);
void AddRobotReasons(const RobotProblem& problem, const Eigen::VectorXd& q,
                     const robot::ToolTarget& target, v1::JointState& state);

// A chain arm's answer to one pose from `initial_sites` (nullopt: home); `stop` ends a
// preferred posture's descent early (a cancelled call).
absl::StatusOr<v1::JointState> SolveChainPose(const IkProblem& problem,
                                              const std::optional<Eigen::Matrix3Xd>& initial_sites,
                                              const Eigen::Vector3d& target,
                                              const std::function<bool()>& stop = {});

// An industrial arm's answer to one pose, solved by `tracker` (made for `problem`; reusable
// from pose to pose) from `seed`, and with `branches` every distinct branch found into
// `solutions`; `stop` ends the branch search (Cancelled).
absl::Status SolveRobotPose(const RobotProblem& problem, robot::RobotTracker& tracker,
                            const Eigen::VectorXd& seed, const robot::ToolTarget& target,
                            const std::optional<robot::BranchOptions>& branches,
                            const std::function<bool()>& stop, v1::JointState* state,
                            google::protobuf::RepeatedPtrField<v1::JointState>* solutions);

}  // namespace ikd::server
