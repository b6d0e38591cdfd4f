// Single-pose IK of an industrial arm with a preferred posture (issue 18; ik/posture.h for the
// cost and the descent): a redundant arm (7 joints for a pose, 4 or more for a position)
// answers, among the configurations that reach the target, the one locally least in the
// posture cost, each joint's difference scaled by its range. A 6-joint arm on a full pose has
// isolated solutions: the descent keeps the one solved unless a pull lands on another that
// costs less.
//
//   tracker.Reset(seed);
//   RobotIkResult r = ikd::robot::SolveWithPosture(tracker, target, {.q = nominal, .weight = 10});
#pragma once

#include "ikd/ik/posture.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {

// RobotTracker::Solve from the tracker's configuration (the seed), then, when solved,
// ik::DescendToPosture: every pull clamped into the joint limits and re-projected by MoveTo
// to the target (kept only when SOLVED: on the target, within the limits, clear of the
// scene). The tracker ends at the answer. The posture's size is the caller's to check
// (ik::Posture::Validate).
RobotIkResult SolveWithPosture(RobotTracker& tracker, const Robot& robot, const ToolTarget& target,
                               const ik::Posture& posture);

// Per joint the width of its range (2 pi for a continuous joint): the posture cost's scale.
Eigen::VectorXd JointRangeScale(const Robot& robot);

}  // namespace ikd::robot
