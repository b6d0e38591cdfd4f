// The path-level pass of PlanRobotPath (internal): a redundant arm's joint path smoothed in its
// redundant directions, every sample's tool kept on its target.
#pragma once

#include <vector>

#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot::internal {

// Gauss-Seidel sweeps over the interior samples: each moves toward the configuration that
// minimizes the squared second differences of its neighbourhood,
//   q_k* = (-q_{k-2} + 4 q_{k-1} + 4 q_{k+1} - q_{k+2}) / 6   (d/dq_k of sum |D2 q|^2 = 0),
// through the least weighted joint motion that keeps the tool where it is (the null space of
// the tool Jacobian), then Newton steps put the tool back on its target to 1e-12. A move is
// kept only when the sample stays within the joint limits and tolerances and its clearance
// does not fall below min(its clearance, the safety margin) (measured by `tracker`). Samples
// next to one that is not reached stay as they are. Non-redundant targets are left alone.
void SmoothRobotPath(const Robot& robot, const RobotTracker& tracker,
                     const std::vector<ToolTarget>& targets, const RobotIkOptions& options,
                     std::vector<RobotIkResult>& samples);

}  // namespace ikd::robot::internal
