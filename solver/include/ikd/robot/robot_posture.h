// Single-pose IK of an industrial arm with a preferred posture (issue 18; ik/posture.h for the
// cost and the descent): a redundant arm (7 joints for a pose, 4 or more for a position)
// answers, among the configurations that reach the target, the one locally least in the
// posture cost, each joint's difference scaled by its range. A 6-joint arm on a full pose has
// isolated solutions: the descent keeps the one solved unless a pull lands on another that
// costs less.
//
//   tracker.Reset(seed);
//   auto r = ikd::robot::SolveWithPosture(tracker, robot, target, {.q = nominal, .weight = 10});
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "ikd/ik/posture.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {

// RobotTracker::Solve from the tracker's configuration (the seed), then, when solved,
// ik::DescendToPosture: every pull clamped into the joint limits and re-projected by StepTo
// to the target (kept only when REACHED: on the target, within the limits, clear of the
// scene). The tracker ends at the answer. `stop` ends the descent early with what it kept.
// Errors only for bad input: the posture's size or values, its weight
// (ik::Posture::Validate). The answer's `projections` count every re-projection; its other
// step figures (iterations, velocity_ratio) are the kept re-projection's.
absl::StatusOr<RobotIkResult> SolveWithPosture(RobotTracker& tracker, const Robot& robot,
                                               const ToolTarget& target,
                                               const ik::Posture& posture,
                                               const std::function<bool()>& stop = {});

// The posture cost's metric of an industrial arm: per joint the width of its range, and whether
// it turns freely (no limits, or a range of a full turn or more).
ik::JointMetric RobotJointMetric(const Robot& robot);

}  // namespace ikd::robot
