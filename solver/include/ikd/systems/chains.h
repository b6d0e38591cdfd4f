// Chain conformations used by the papers' test systems and by the benchmark: Bailey's helix,
// random coils (ideal random walks), straight chains and rings, all with exact link lengths.
#pragma once

#include <random>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/types.h"

namespace ikd::systems {

// n sites on a helix of the given radius and pitch (rise per turn) with consecutive sites
// exactly `link` apart (Bailey sec. 3: radius 5, pitch 2, unit links). Errors: n < 2,
// non-positive radius or link, negative pitch, or a link longer than one full turn allows.
absl::StatusOr<Eigen::Matrix3Xd> HelixChain(int n, double radius, double pitch, double link);

// n sites of a 3-D (or planar) random walk with unit-vector steps of length `link`.
Eigen::Matrix3Xd RandomCoil(int n, double link, bool planar, std::mt19937_64& rng);

// n sites on the x axis, `link` apart.
Eigen::Matrix3Xd StraightChain(int n, double link);

// n >= 3 sites on a regular polygon in the x-y plane with sides of length `link`.
Eigen::Matrix3Xd RegularRing(int n, double link);

// Constraints (k, k+1, link) of an open chain of n sites, plus (n-1, 0) when `ring`.
std::vector<constraints::DistanceConstraint> ChainConstraints(int n, double link, bool ring);

// Adds independent Gaussian noise of standard deviation `sigma` to every coordinate.
void PerturbGaussian(double sigma, std::mt19937_64& rng, Eigen::Matrix3Xd& positions);

}  // namespace ikd::systems
