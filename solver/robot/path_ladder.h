// Internal to the solver library: the ladder start of PlanRobotPath (robot_path.h, step 6). The
// tracker and the optimizer are local: near a shoulder singularity of a redundant arm (the tool
// close to the base axis) the least joint motion of each step can wind the arm into a posture
// where the base has to spin, and no small change of the path leads out of it. A beam search
// over the redundancy at every fifth sample, in the manner of the ladder graph of ROS-Industrial's
// Descartes planner, keeps several postures alive until the path shows which one it needs.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot::internal {

// A path from `first` (sample 0, kept as it is) through every target at `times` (increasing, as
// PlanRobotPath checks), or nullopt where no target leaves the arm a redundant direction, the
// path has fewer than 3 samples, `first` is off its target or past a joint limit, or the beam
// dies out (no posture on some rung is on its target, within the joint limits and clear by
// the safety margin).
// - Rungs: every 5th sample and the last. On each, up to 16 postures: the children of the last
//   rung's postures (each one's tool put on the new target from where it was, and from 5 moves
//   of up to 0.3 rad in its tool Jacobian's null space), ranked by the fastest joint from rung
//   to rung (its speed over its velocity limit, the worst of the path so far; below half the
//   limit only the sum of squares counts), kept 0.1 rad apart. Each is first carried over the
//   next 8 rungs (its tool put back on each target from the last, nothing else moved): those
//   clear by the margin over all of them are kept first; those blocked on the way fill the beam
//   only where too few are, the later blocked first, then the clearer on the way.
// - The best posture on the last rung is traced back; the samples between rungs are
//   interpolated in joint space (cubic Hermite, Catmull-Rom slopes, held within the joint
//   limits) and put on their targets, with their statuses as the tracker would give them (they
//   need not be clear by the margin, only out of collision, to be REACHED).
// Deterministic in the options' seed. `stop` is asked once per rung (Cancelled).
absl::StatusOr<std::optional<std::vector<RobotIkResult>>> LadderRobotPath(
    const Robot& robot, const planning::Scene* scene, const std::vector<ToolTarget>& targets,
    const std::vector<double>& times, const RobotIkOptions& options, const RobotIkResult& first,
    const std::function<bool()>& stop);

}  // namespace ikd::robot::internal
