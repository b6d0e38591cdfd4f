// Internal to the solver library: the branch graph of PlanRobotPath (robot_path.h, step 6) for
// the arms the ladder cannot serve, those without redundancy on their targets. A 6R arm with a
// closed form (analytic_ik.h) has up to 8 configurations on each full-pose target; which of them
// the path starts on decides whether it can pass an obstacle or a joint limit further on, and
// at a singularity, where branches meet, which one it leaves on. As the planning graph of
// ROS-Industrial's Descartes, every branch of every sample is a node and the cheapest joint
// motion through them is found by dynamic programming; unlike it, a node's turn copy is the one
// nearest its parent, and an edge is only kept within the joints' velocity limits, so that the
// path never jumps between branches.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot::internal {

// Most nodes kept on one sample (the cheapest): branches that continue one another collapse to
// one node each, so the beam only binds where many starts survive.
inline constexpr int kBranchGraphBeam = 32;
// A joint's largest move between two samples where it declares no velocity limit (rad): more is
// a jump between branches.
inline constexpr double kBranchGraphJump = 0.5;

// A path through every target at `times` (increasing), or nullopt where the graph does not
// apply (no closed form, a redundant arm, a target without orientation, fewer than 2 samples)
// or finds no path (some sample has no node reachable from the last within the limits).
// - Sample 0: q0 where it stands on the first target (within the tolerances and the limits,
//   clear by the safety margin); otherwise every branch of the first target, each joint on the
//   full-turn copy nearest q0.
// - Sample k: every branch of target k, each joint on the copy nearest its parent's, kept where
//   within the joint limits, no joint moves more than its velocity limit over the interval
//   (kBranchGraphJump without one) and the links are out of collision; a parent none of whose
//   branches continues it (a singular target, where the closed form returns one representative
//   of a continuum) is continued by Newton steps of least joint motion instead.
// - Cost, as the tracker's (robot_ik.h): motion_weight x the velocity-weighted squared joint
//   motion of every interval (sample 0's from q0 included) plus clearance_weight x each link's
//   squared shortfall below 1.25 x the safety margin.
// - The cheapest end is traced back; each sample's status as the tracker would give it.
// Deterministic. `stop` is asked once per sample (Cancelled).
absl::StatusOr<std::optional<std::vector<RobotIkResult>>> BranchGraphRobotPath(
    const Robot& robot, const planning::Scene* scene, const std::vector<ToolTarget>& targets,
    const std::vector<double>& times, const RobotIkOptions& options, const Eigen::VectorXd& q0,
    const std::function<bool()>& stop);

}  // namespace ikd::robot::internal
