// Internal to the solver library: the backward start of PlanRobotPath (robot_path.h, step 5),
// the industrial-arm counterpart of ik/path_backward.h. A greedy forward pass cannot see an
// obstacle coming; tracked from the end back to the start, the arm meets it from the other
// side and often passes it. The two are joined where both are clear.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot::internal {

// A sample the tracker could not place: in collision, limit-blocked or not converged.
bool FailedSample(const RobotIkResult& sample);

// `forward` (a tracked path with failed samples) joined to the path tracked backwards from its
// last configuration (a single-pose solve from it where that failed): forward up to a window
// where both are placed, the joint values blended across it (each blended sample's tool put
// back on its target by Newton steps), backward after it; of the windows before forward's
// first failure (every 5 samples), the join that fails least, counting its samples and the
// motions between them (swept_clearance.h). Backward's revolute joints are first turned by the
// whole turns that bring them nearest forward's at the window, where their limits allow: the
// same motion, without a blend across a full turn. Nullopt when the end cannot be placed or no
// join fails on fewer samples than forward.
absl::StatusOr<std::optional<std::vector<RobotIkResult>>> JoinBackwardRobotPath(
    const Robot& robot, const planning::Scene* scene, const std::vector<ToolTarget>& targets,
    const std::vector<double>& times, const RobotIkOptions& options,
    const std::vector<RobotIkResult>& forward, const std::function<bool()>& stop);

}  // namespace ikd::robot::internal
