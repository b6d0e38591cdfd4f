// The path-level pass of PlanRobotPath (internal): a redundant arm's joint path optimized as a
// whole in its redundant directions, every sample's tool kept on its target.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"

#include "ikd/planning/scene.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot::internal {

// The optimizer aims every rate at this fraction of its limit, so that the Newton return and
// the remaining nonlinearity do not carry one over (nor a servo's tracking error).
inline constexpr double kRateAim = 0.9;

// Gauss-Newton (Levenberg-Marquardt) over the whole path, in the spirit of TrajOpt: every
// sample moves only in the null space of its tool Jacobian, q_k + N_k z_k, and one sparse
// (banded) least-squares system in all the z_k at once minimizes
//   - the joint accelerations (second differences at `times`) over each joint's limit
//     (max_acceleration, else max_velocity per second); where a declared acceleration limit is
//     passed, a hinge above 90% of it and Lawson's reweighting toward the least maximum;
//   - the joint speeds over their limits (least motion), with a hinge above 90% of a limit;
//   - the distance from the tracker's path (its posture pull: no drift on closed paths);
//   - the link clearances below 3 safety margins (a hinge; `scene` may be null).
// After each solve Newton steps put every tool back on its target; a sample's move is kept
// only within the joint limits and tolerances and when its clearance does not fall below
// min(its clearance, the safety margin); samples whose moves were refused are held and the
// step solved again (a corner held by its clearance is rounded by its neighbours), and the
// whole step is kept only when the cost fell. The
// first sample, the last unless `free_end`, samples not on their targets, and non-redundant
// targets stay as they are; a sample in collision that the clearance term pushes out becomes
// REACHED.
// `stop` is asked before every linearization: Cancelled when it says so (`samples` untouched).
absl::Status OptimizeRobotPath(const Robot& robot, const planning::Scene* scene,
                               const std::vector<ToolTarget>& targets,
                               const std::vector<double>& times, const RobotIkOptions& options,
                               std::vector<RobotIkResult>& samples,
                               const std::function<bool()>& stop = {}, bool free_end = false);

}  // namespace ikd::robot::internal
