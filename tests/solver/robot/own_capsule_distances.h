// The tests' own capsule distances, written apart from link_geometry.h's so that a test of the
// library's clearances does not check them with the code under test.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "ikd/robot/chain.h"

namespace ikd::robot::test {

// The distance from x to the segment a-b.
inline double DistanceToSegment(const Eigen::Vector3d& x, const Eigen::Vector3d& a,
                                const Eigen::Vector3d& b) {
  const Eigen::Vector3d ab = b - a;
  const double length2 = ab.squaredNorm();
  const double t = length2 > 0 ? std::clamp((x - a).dot(ab) / length2, 0.0, 1.0) : 0.0;
  return (x - (a + t * ab)).norm();
}

// A lower bound on the gap between capsules a-b (radius ra) and c-d (radius rc): segment a-b
// sampled at 200 points, each exactly against c-d (the distance is 1-Lipschitz along a-b: at
// most half a spacing less than the least sample).
inline double CapsuleGapLowerBound(const Eigen::Vector3d& a, const Eigen::Vector3d& b, double ra,
                                   const Eigen::Vector3d& c, const Eigen::Vector3d& d, double rc) {
  double least = std::numeric_limits<double>::infinity();
  for (int s = 0; s < 200; ++s) {
    least = std::min(least, DistanceToSegment(a + (b - a) * s / 199.0, c, d));
  }
  return least - (b - a).norm() / 398.0 - ra - rc;
}

// CapsuleGapLowerBound's least over the capsules of links i and j of `spec` (link_shapes),
// placed by the link poses X.
inline double LinkGapLowerBound(const ChainSpec& spec, const std::vector<Eigen::Isometry3d>& X,
                                int i, int j) {
  double least = std::numeric_limits<double>::infinity();
  for (const LinkShape& p : spec.link_shapes[i]) {
    for (const LinkShape& r : spec.link_shapes[j]) {
      least = std::min(least, CapsuleGapLowerBound(X[i] * p.a, X[i] * p.b, p.radius, X[j] * r.a,
                                                   X[j] * r.b, r.radius));
    }
  }
  return least;
}

}  // namespace ikd::robot::test
