// Internal to the solver library: the backward start of path.h's driver (step 1). A greedy
// forward pass cannot see an obstacle coming; tracked from the end back to the start, the arm
// meets the same obstacle from the other side and often passes it. The two are joined where
// both are clear.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/path.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"
#include "ikd/planning/scene.h"

namespace ikd::ik::internal {

// A sample the driver could not place: in collision or blocked by a joint limit.
bool Failed(const IkResult& step);

// The driver run backwards: from `end_sites` at the last of `times` to the first, the hand
// following the path between samples (sub-steps as the forward driver's).
absl::StatusOr<std::vector<IkResult>> TrackBackward(const Arm& arm, const planning::Scene* scene,
                                                    const Trajectory& trajectory,
                                                    const std::vector<double>& times,
                                                    const IkOptions& options,
                                                    const Eigen::Matrix3Xd& end_sites,
                                                    const StopCheck& stop);

// `forward` (a driver path with some failed samples: in collision or limit-blocked) joined to
// the backward path tracked from its last configuration: forward up to a window where both are
// clear, the joint angles blended across it (each blended sample rebuilt, its hand put back
// and projected onto the constraints by `projector`), backward after it. Nullopt when no join
// fails on fewer samples than `forward`, or when forward's last sample failed itself.
absl::StatusOr<std::optional<std::vector<IkResult>>> JoinBackwardPath(
    const Arm& arm, const planning::Scene* scene, const Trajectory& trajectory,
    const std::vector<double>& times, const IkOptions& options, ArmTracker& projector,
    const std::vector<IkResult>& forward, const StopCheck& stop);

}  // namespace ikd::ik::internal
