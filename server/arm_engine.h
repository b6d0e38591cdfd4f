// The two arm kinds behind one interface, so that the KinematicsService reactors do not branch
// on the kind: chain arms (the ik/ engine: chain_engine.cc) and industrial arms (ArmSpec.robot,
// the robot/ engine: robot_engine.cc). An ArmEngine is made per call from the resolved arm
// spec; each of its methods assembles the request's problem (ik_problem.h) in its kind's own
// validation order, errors naming the request field. What a method returns owns what it needs:
// the engine may be gone before it runs.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ik_conversions.h"
#include "ikd/ik/trajectory.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/step_status.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/v1/kinematics_service.pb.h"
#include "kinematics_service.h"
#include "model_store.h"
#include "validation.h"

namespace ikd::server {

// A target: a chain arm's hand position, or an industrial arm's tool pose (the only kind that
// takes an orientation).
using PoseTarget = robot::ToolTarget;

// The arm of one Track stream: a rate-limited tracker on the stream's private scene. Strictly
// one call at a time (the stream's sequencing).
class TrackEngine {
 public:
  virtual ~TrackEngine() = default;

  // The target's pose, validated (errors name target.*) against where the arm is now.
  virtual absl::StatusOr<PoseTarget> CheckTarget(const v1::TrackTarget& target) const = 0;
  // The solve alone (timed by the caller, before the answer is made): the tracker moves to
  // `target` at `time`, within the arm's rate limits from the last answer.
  virtual absl::Status StepTo(const PoseTarget& target, double time) = 0;
  // The answer when there is no time left to solve `target` (TrackConfig.deadline): the arm
  // braked from the last answer (the trackers' Brake), no solve; Answer() then returns it.
  virtual void Brake(const PoseTarget& target, double time) = 0;
  // Admission's measure of what a solve of this stream costs: a scratch tracker of the same arm
  // on the same scene steps from the stream's start along a circle at a brisk pace
  // (MeanSolveSeconds); s of thread CPU per step. The stream's own tracker is not touched.
  virtual double MeasureSolveSeconds() const = 0;
  // The tracker's steps the move to a checked `target` takes from where the arm is (a
  // solve's cost grows with them); large before the first StepTo.
  virtual int64_t StepsTo(const PoseTarget& target) const = 0;
  // The last StepTo's answer; `previous` (null first) is the last answer, for velocities. One
  // short of its target says why where SaysWhy (its reasons, as Solve's).
  virtual absl::StatusOr<v1::JointState> Answer(const v1::JointState* previous) const = 0;
  virtual const std::vector<std::string>& joint_names() const = 0;
  // The stream's scene copy (maybe empty); the tracker sees edits from the next target on.
  virtual planning::Scene& scene() = 0;
};

// Whether a Track answer of this status lists why it is short of its target (limited by the
// servo limits, held clear of something, blocked, out of reach): not REACHED, and not LATE,
// whose reason is the time (no solve was made).
bool SaysWhy(planning::StepStatus status);

// The mean thread CPU time of a tracker's steps along a circle: `step(time, offset)` moves the
// tracker's hand (tool) to its start plus `offset` at `time`. Step 0 (a first answer's solve,
// with restarts) is not timed; then kCalibrationSteps steps 1 ms apart, the hand at half of
// `reach` (m) a second on a circle of a tenth of it: a brisk motion, since a solve's cost grows
// with the way it has to go.
double MeanSolveSeconds(
    double reach, const std::function<void(double time, const Eigen::Vector3d& offset)>& step);
inline constexpr int kCalibrationSteps = 16;

// Solves the trajectory sample at time t; `previous` is the last sample's state (null first).
// Each kind brings one (ArmEngine::PlanTrajectory).
using SampleSolver =
    std::function<absl::StatusOr<v1::JointState>(double t, const v1::JointState* previous)>;

// What a TrajectoryReactor runs: the sample solver and the joint names of the first message.
struct TrajectoryPlan {
  SampleSolver solve;
  std::vector<std::string> joint_names;
  // Adds what only the plan knows to the summary (may be empty).
  std::function<void(v1::TrajectorySummary&)> complete_summary;
};

// Solve: answers the request into `response` (joint names, state, solutions), on a worker.
using PoseSolve = std::function<absl::Status(v1::SolveResponse* response)>;

// SolveBatch: answers target `index` into `result` (its state, solutions and nothing else).
// One per chunk task, so it may keep state (an industrial arm's tracker) from target to target.
using TargetSolver = std::function<absl::Status(int index, v1::BatchResult& result)>;

// What a BatchReactor runs: a fresh TargetSolver per chunk, and the joint names.
struct BatchPlan {
  int targets = 0;
  std::function<absl::StatusOr<TargetSolver>()> new_solver;
  std::vector<std::string> joint_names;
};

// SolveBatch's path of targets[i].field.
std::string TargetField(int i, const std::string& field);

// One call's arm, made by NewArmEngine: one method per RPC.
class ArmEngine {
 public:
  virtual ~ArmEngine() = default;

  // Track: the stream's arm from its first message (errors name config.*).
  virtual absl::StatusOr<std::unique_ptr<TrackEngine>> StartTrack(
      const v1::TrackConfig& config) = 0;

  // SolveTrajectory: the samples of `trajectory` at `times` (errors name request fields).
  virtual absl::StatusOr<TrajectoryPlan> PlanTrajectory(grpc::CallbackServerContext* context,
                                                        const v1::SolveTrajectoryRequest& request,
                                                        ik::Trajectory trajectory,
                                                        const std::vector<double>& times) = 0;

  // Solve: the request validated (errors name its fields) before any work.
  virtual absl::StatusOr<PoseSolve> PrepareSolve(grpc::CallbackServerContext* context,
                                                 const v1::SolveRequest& request) = 0;

  // SolveBatch: every target validated before any work, each answered as the Solve of the
  // same pose and seed.
  virtual absl::StatusOr<BatchPlan> PlanBatch(grpc::CallbackServerContext* context,
                                              const v1::SolveBatchRequest& request) = 0;
};

// What an engine is made from; store must outlive the engine (not what it returns).
struct EngineInputs {
  ResolvedArmSpec arm;
  ModelStore* store = nullptr;
  ModelLimits model_limits;
  KinematicsLimits limits;
};

// The engine of the arm's kind: industrial for an ArmSpec.robot, else chain.
std::unique_ptr<ArmEngine> NewArmEngine(ResolvedArmSpec arm, ModelStore& store,
                                        const ModelLimits& model_limits,
                                        const KinematicsLimits& limits);

// The kinds (chain_engine.cc, robot_engine.cc), and what they share.
std::unique_ptr<ArmEngine> NewChainEngine(EngineInputs inputs);
std::unique_ptr<ArmEngine> NewRobotEngine(EngineInputs inputs);

// A path of up to this many samples is planned as a whole (ik::PlanPath, robot::PlanRobotPath)
// on the worker that solves the first sample; a longer one, or one asked for without
// optimization, streams sample by sample (without the plan's rate statuses), so that the
// memory held and the first sample's delay stay bounded (a 10,000-sample plan of a 7-link arm:
// about 2 s, 3 MB).
constexpr size_t kMaxPlannedSamples = 10000;

// The rate fields of a planned path's summary: ik::PathSummary (chain arms) or
// robot::RobotPathSummary (industrial arms), which name them alike.
template <class Summary>
void SetRateSummary(const Summary& s, v1::TrajectorySummary& summary) {
  summary.set_feasible_time_scaling(s.feasible_time_scaling);
  summary.set_max_velocity_ratio(s.max_velocity_ratio);
  summary.set_max_acceleration_ratio(s.max_acceleration_ratio);
  summary.set_max_jerk_ratio(s.max_jerk_ratio);
}

}  // namespace ikd::server
