// Internal to the solver library: the joint-space start of path.h's driver (step 1). The
// tracker moves the sites the least; where a joint nears straight or folded back, that least
// site motion turns an azimuth fast, and the path can settle on a branch whose rates no local
// optimization brings down (bench/paths seed 2 spatial-obstacles #38: an azimuth wound at
// 2.6 times its limit for 40 samples; seed 3 #19: a bend folded through pi). Resolved-rate
// motion in the angles themselves moves the joints the least instead, as a servo would.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/path.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"

namespace ikd::ik::internal {

// The hand driven along the path from `first` (the arm at times[0]) by the least joint motion
// weighted by the velocity limits, sum_j (dq_j / v_j)^2 (damped least squares), in sub-steps
// of the forward driver's size; each sub-step projected by `projector` onto the limb lengths
// and joint limits with the hand on the path, and pushed out of `options.safety_margin` where
// it entered it. Samples in collision say so (IN_COLLISION); nullopt where a target is not
// reachable as it is (off a planar arm's plane, on or beyond the reachable shell: the tracker
// clamps those) or a projection fails (a joint limit that holds the arm). Cancelled when
// `stop` says so.
absl::StatusOr<std::optional<std::vector<IkResult>>> TrackInJointSpace(
    const Arm& arm, const Trajectory& trajectory, const std::vector<double>& times,
    const IkOptions& options, ArmTracker& projector, const IkResult& first,
    const StopCheck& stop);

}  // namespace ikd::ik::internal
