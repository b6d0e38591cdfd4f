// Conversions between the KinematicsService wire types (ikd/v1/kinematics_service.proto) and the
// IK solver (solver/include/ikd/ik): arm and scene specs (a reference is resolved through the
// server's store by server/model_refs.h), tracker options, trajectories, start configurations
// and the joint states sent back. Every error names the request path it comes from (INVALID_ARGUMENT with a BadRequest
// field violation, e.g. "trajectory.line.duration", "options.max_step_fraction"); the `path`
// arguments are the prefixes ("arm", "config.arm", ...) so that one function serves Solve,
// SolveTrajectory and Track alike.
//
//   absl::StatusOr<ik::Arm> arm = ArmFromProto(spec, "arm.spec", limits);
//   absl::StatusOr<ik::IkOptions> options = IkOptionsFromProto(request.options(), "options");
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/posture.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"
#include "ikd/planning/scene.h"
#include "ikd/v1/kinematics_service.pb.h"
#include "validation.h"

namespace ikd::server {

using PositionList = google::protobuf::RepeatedField<double>;

// A solver InvalidArgument ("limbs[2].length must be ...") as a FieldViolation below request
// path `prefix` ("arm.spec.limbs[2].length"); other codes unchanged.
absl::Status AtRequestPath(const absl::Status& solver_status, const std::string& prefix);

// The wire spec of an ArmRef (inline or stored: server/model_refs.h) and the request path its
// errors are named at ("arm.spec" or "arm.name").
struct ResolvedArmSpec {
  v1::ArmSpec spec;
  std::string path;
};
// Tracker options; zero fields mean the solver's defaults (see IkOptions in the proto), an
// absent `weights` the default weights.
absl::StatusOr<ik::IkOptions> IkOptionsFromProto(const v1::IkOptions& options,
                                                 const std::string& path);

// The trials of step (c) a request asks for, for either kind of arm: 0 with no_trials, else
// trials_per_step, else (a zero field) `default_trials`.
int TrialsFromProto(const v1::IkOptions& options, int default_trials);

// SolveRequest (SolveBatchRequest) .preferred_posture / .posture_weight for an arm of `size`
// joint positions: none when both are unset; errors name the field and its bound.
absl::StatusOr<std::optional<ik::Posture>> PostureFromProto(
    const google::protobuf::RepeatedField<double>& posture, double weight, int size);

// Sites of a start configuration given as joint positions in the arm's convention (forward
// kinematics); std::nullopt (the arm's home) when `positions` is empty.
absl::StatusOr<std::optional<Eigen::Matrix3Xd>> SitesFromPositions(const ik::Arm& arm,
                                                                   const PositionList& positions,
                                                                   const std::string& path);

// The hand path of a trajectory (any of its variants).
absl::StatusOr<ik::Trajectory> TrajectoryFromProto(const v1::Trajectory& trajectory,
                                                   const std::string& path);

// A target position, every coordinate finite.
absl::StatusOr<Eigen::Vector3d> TargetFromProto(const v1::Vector3& target,
                                                const std::string& path);

// Sub-steps the tracker takes to move the hand from `from` to `to` (moves longer than the arm's
// diameter count as the diameter: the target is clamped to the reachable shell first).
int64_t SubStepsForMove(const ik::Arm& arm, const ik::IkOptions& options,
                        const Eigen::Vector3d& from, const Eigen::Vector3d& to);

// "joint_0", ... (planar) or "joint_0_bend", "joint_0_azimuth", ... (spatial): one name per
// entry of ik::IkResult::angles.
std::vector<std::string> JointNames(const ik::Arm& arm);

v1::StepStatus ToProto(planning::StepStatus status);

// An answer's time, joint positions, their finite-difference velocities from `previous` (zeros
// where there is none or no time has passed: JointState.velocities) and its sites, each repeated
// field sized once (a growth is an allocation, and batches answer 10^5 of these a second).
// Shared by the chain and the industrial answers.
void SetJointMotion(double time, const Eigen::Ref<const Eigen::VectorXd>& positions,
                    const Eigen::Matrix3Xd& sites, const v1::JointState* previous,
                    v1::JointState& out);

// The wire joint state of a solver step towards `target`. Velocities are finite differences
// from `previous` (the stream's previous state; zeros when null or when no time has passed).
// Errors: CheckStateFinite's.
absl::StatusOr<v1::JointState> JointStateFromStep(const ik::IkResult& step,
                                                  const Eigen::Vector3d& target,
                                                  const v1::JointState* previous);

// OK when every number of `state` is finite; else OUT_OF_RANGE naming the field and the time.
// A controller is never sent a NaN or an infinity: inputs that lead there are refused up front
// (ikd/world.h), and this is the net for any such input not yet refused (e.g. two Track
// targets 1e-310 s apart make the finite-difference velocity infinite).
absl::Status CheckStateFinite(const v1::JointState& state);

// Running totals of a trajectory: Add() every sample, then Summary() once at the end.
class SummaryBuilder {
 public:
  void Add(const v1::JointState& state);
  v1::TrajectorySummary Summary(double solve_seconds) const;

 private:
  int reached_ = 0;
  v1::TrajectorySummary totals_;  // everything but fraction_reached and solve_seconds
};

}  // namespace ikd::server
