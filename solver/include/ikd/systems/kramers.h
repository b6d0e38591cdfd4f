// Random walk of a Kramers chain in a heat bath (Vesely sec. VII C): every site takes a random
// Gaussian displacement, then the bond constraints are restored along the old bond vectors
// (ikd::constraints::BrownianStep). The walk accumulates the histogram of the angle between
// consecutive bonds.
//
//   ikd::systems::KramersWalkOptions options;  // 2-D trimer, unit bonds
//   options.num_samples = 10000;
//   auto walk = ikd::systems::RunKramersWalk(options);
//   if (!walk.ok()) return walk.status();
//   double p0 = walk->histogram.Density(0);  // estimated p(phi) in bin 0
//
// Stationary law: in the small-step limit the walk is Brownian motion on the constraint
// manifold, uniform in its surface measure. That is the rigid-constraint distribution, which
// differs from the flexible (stiff-spring) one by Fixman's factor sqrt(det H), H = B M^-1 B^T
// of the normalized bond constraints. For the trimer with unit bonds and equal masses
// H = [[2, -cos phi], [-cos phi, 2]], so p(phi) ~ sqrt(4 - cos^2 phi) in 2-D and
// sin(phi) sqrt(4 - cos^2 phi) in 3-D. (Vesely's printed sqrt(1 - cos^2 phi)/4 is not it.)
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ikd/constraints/types.h"

namespace ikd::systems {

struct KramersWalkOptions {
  int num_sites = 3;         // >= 3, so that there is a bond angle
  bool planar = true;        // 2-D (x, y) when true, else 3-D
  double bond_length = 1.0;  // finite, > 0
  // Standard deviation of each coordinate's random displacement per step, finite and in
  // (0, bond_length]; the stationary law carries an O(step_sigma^2) bias.
  double step_sigma = 0.1;
  // Steps before the first sample (>= 0), steps between samples (>= 1: subsampling
  // decorrelates the histogram) and number of samples (>= 1).
  int64_t warmup_steps = 1000;
  int64_t steps_per_sample = 100;
  int64_t num_samples = 1000;
  int histogram_bins = 36;  // bins of phi over [0, pi], >= 1
  constraints::Method method = constraints::Method::kAuto;
  constraints::ProjectionOptions projection;
  uint64_t seed = 1;  // std::mt19937_64 seed: the walk is deterministic for a seed

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

// Counts of the angle phi in [0, pi] between consecutive bond vectors b_k = r_{k+1} - r_k and
// b_{k+1} (phi = 0 for a straight chain), over every sample and every consecutive bond pair.
struct AngleHistogram {
  double bin_width = 0.0;       // pi / number of bins
  std::vector<int64_t> counts;  // counts[k]: phi in [k w, (k + 1) w); phi = pi in the last bin
  int64_t total = 0;

  // counts[bin] / (total * bin_width): the estimated density of phi in that bin.
  double Density(int bin) const;
};

struct KramersWalkResult {
  AngleHistogram histogram;
  Eigen::Matrix3Xd positions;  // final configuration (recentered at each sample)
  int64_t steps = 0;           // steps attempted, warmup included
  // Steps whose projection did not converge; BrownianStep leaves those positions unchanged.
  int64_t rejected_steps = 0;
  // Max over accepted steps of the solver's relative violation, and max |b - l| / l measured
  // directly on the sampled configurations.
  double max_solver_violation = 0.0;
  double max_sampled_bond_error = 0.0;
};

// Called with every sampled configuration (3 x num_sites), after it entered the histogram.
using KramersSampleObserver = std::function<void(const Eigen::Matrix3Xd& positions)>;

// Starts from a random coil drawn from the seeded generator and walks. Errors: invalid options
// (InvalidArgument); a solver error from BrownianStep is passed on.
absl::StatusOr<KramersWalkResult> RunKramersWalk(const KramersWalkOptions& options,
                                                 const KramersSampleObserver& observer = {});

// The angle in [0, pi] between two vectors (atan2 of |a x b| and a . b, accurate near 0 and pi).
double AngleBetween(const Eigen::Vector3d& a, const Eigen::Vector3d& b);

}  // namespace ikd::systems
