// Internal to the solver library: the path optimizer of path.h (step 2), and the joint-angle
// unwrapping that path.h's rate check and rate_limit.h share.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/path.h"
#include "ikd/ik/tracker.h"
#include "ikd/planning/scene.h"

namespace ikd::ik::internal {

// `angle` moved by whole turns to lie within pi of `near`.
double NearestTurn(double angle, double near);

// Joint angles of every step (rows: samples), each column continuous across +-pi.
Eigen::MatrixXd UnwrappedAngles(const std::vector<IkResult>& steps);

// The largest and the root-mean-square of speeds added one by one (rad/s; 0 for none): how far
// a path's fastest motion stands out of its typical one (the guards of arms without declared
// limits, path.h).
struct PeakAndRms {
  double peak = 0.0;
  double sum_of_squares = 0.0;
  int count = 0;
  void Add(double speed) {
    peak = std::max(peak, speed);
    sum_of_squares += speed * speed;
    ++count;
  }
  double rms() const { return count > 0 ? std::sqrt(sum_of_squares / count) : 0.0; }
};

// Spatial bends the optimizer keeps its paths above, and below pi minus it, by default (rad):
// an azimuth's rate grows as 1 / sin(bend), so a path through a nearly straight or folded-back
// joint spins its azimuth (bench/paths seed 3 spatial-obstacles #19: limb 0 pointing straight
// down, its azimuth at 56 times the velocity limit).
inline constexpr double kDefaultMinBend = 0.2;

// How far a spatial bend must move to leave the band where its azimuth spins: up from
// straight (below min_bend) or down from folded back (above pi - min_bend); 0 between.
double BendGap(double bend, double min_bend);

// Optimizes `steps` (a driver path sampled at their times, >= 3) in place, projecting with
// `projector` (the tracker of the same arm and scene), spatial bends kept within
// [min_bend, pi - min_bend];
// returns the iterations run, or Cancelled when `stop` says so.
absl::StatusOr<int> OptimizePath(const Arm& arm, const planning::Scene* scene,
                                 ArmTracker& projector, double margin, std::vector<IkResult>& steps,
                                 const StopCheck& stop, double min_bend = kDefaultMinBend);

}  // namespace ikd::ik::internal
