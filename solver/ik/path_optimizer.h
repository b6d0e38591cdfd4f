// Internal to the solver library: the path optimizer of path.h (step 2), and the joint-angle
// unwrapping that path.h's rate check and rate_limit.h share.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/path.h"
#include "ikd/ik/scene.h"
#include "ikd/ik/tracker.h"

namespace ikd::ik::internal {

// `angle` moved by whole turns to lie within pi of `near`.
double NearestTurn(double angle, double near);

// Joint angles of every step (rows: samples), each column continuous across +-pi.
Eigen::MatrixXd UnwrappedAngles(const std::vector<IkStep>& steps);

// Optimizes `steps` (a driver path sampled at their times, >= 3) in place, projecting with
// `projector` (the tracker of the same arm and scene); returns the iterations run, or
// Cancelled when `stop` says so.
absl::StatusOr<int> OptimizePath(const Arm& arm, const Scene* scene, ArmTracker& projector,
                                 double margin, std::vector<IkStep>& steps, const StopCheck& stop);

}  // namespace ikd::ik::internal
