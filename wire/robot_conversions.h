// Conversions between the wire's industrial arms (ArmSpec.robot, ikd/v1/types.proto) and the
// solver's (solver/include/ikd/robot): the robot of a spec, with every error at its request
// path ("arm.spec.robot.dh.rows[2]", "arm.spec.robot.urdf.tip_link"), tool targets, and the
// joint states sent back.
//
//   absl::StatusOr<robot::Robot> robot = RobotFromProto(spec.robot(), "arm.spec.robot");
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/v1/kinematics_service.pb.h"
#include "ikd/v1/types.pb.h"

namespace ikd::server {

// The industrial arm of an ArmSpec whose `robot` is set; `path` names the ArmSpec ("arm.spec").
// Every other ArmSpec field must be unset.
absl::StatusOr<robot::Robot> RobotFromArmSpec(const v1::ArmSpec& spec, const std::string& path);

// The home configuration of the spec (home_positions, else the middle of the ranges).
Eigen::VectorXd RobotHome(const robot::Robot& robot, const v1::RobotSpec& spec);

// Joint values given on the wire (`path`), one per joint and finite; the home when empty.
absl::StatusOr<Eigen::VectorXd> RobotPositions(const robot::Robot& robot,
                                               const google::protobuf::RepeatedField<double>& positions,
                                               const Eigen::VectorXd& home, const std::string& path);

// A tool target: the position, plus the orientation when `has_orientation` (a unit quaternion
// within 1e-6, named `orientation_path` otherwise).
absl::StatusOr<robot::ToolTarget> ToolTargetFromProto(const v1::Vector3& position,
                                                      const std::string& position_path,
                                                      bool has_orientation,
                                                      const v1::Quaternion& orientation,
                                                      const std::string& orientation_path);

// An industrial arm's options from the chain tracker's IkOptions (`path` names them: "options"
// or "config.options"); zero fields: the defaults. Honoured: seed, trials_per_step / no_trials
// and safety_margin (step (c) with the same meaning), max_step_fraction (the tool-site step,
// as a fraction of the sites' spacing) and time_budget_seconds (the single-pose solve's
// budget); no_path_optimization is SolveTrajectory's own. Refused, naming the field: the
// chain-only tolerance, weights, patience and explore_unconstrained, which an industrial arm
// would ignore.
absl::StatusOr<robot::RobotIkOptions> RobotIkOptionsFromProto(const v1::IkOptions& options,
                                                              const std::string& path);

// The joint names of the chain ("joint1", ... for DH tables and presets; URDF's own names).
std::vector<std::string> RobotJointNames(const robot::Robot& robot);

// The wire joint state of a move towards `target` at `time`. Velocities are finite differences
// from `previous` (zeros when null).
// Errors: CheckStateFinite's (ik_conversions.h).
absl::StatusOr<v1::JointState> RobotJointState(const robot::Robot& robot,
                                               const robot::RobotIkResult& result,
                                               const robot::ToolTarget& target, double time,
                                               const v1::JointState* previous);

}  // namespace ikd::server
