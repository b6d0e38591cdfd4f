#include "ikd/systems/chains.h"

#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"

namespace ikd::systems {
namespace {

// Chord between helix points a parameter step `dt` apart.
double HelixChord(double radius, double pitch, double dt) {
  const double rise = pitch * dt / (2.0 * std::numbers::pi);
  return std::sqrt(2.0 * radius * radius * (1.0 - std::cos(dt)) + rise * rise);
}

}  // namespace

absl::StatusOr<Eigen::Matrix3Xd> HelixChain(int n, double radius, double pitch, double link) {
  if (n < 2) return absl::InvalidArgumentError(absl::StrCat("n must be >= 2, got ", n));
  if (!(radius > 0.0) || !(link > 0.0) || !(pitch >= 0.0) || !std::isfinite(radius) ||
      !std::isfinite(link) || !std::isfinite(pitch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "radius and link must be finite and > 0, pitch finite and >= 0; got radius=", radius,
        " pitch=", pitch, " link=", link));
  }
  // The chord grows monotonically with the parameter step up to half a turn: bisect there.
  double lo = 0.0, hi = std::numbers::pi;
  if (HelixChord(radius, pitch, hi) < link) {
    return absl::InvalidArgumentError(absl::StrCat(
        "link ", link, " is longer than half a turn of a helix of radius ", radius));
  }
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    (HelixChord(radius, pitch, mid) < link ? lo : hi) = mid;
  }
  const double step = 0.5 * (lo + hi);
  Eigen::Matrix3Xd r(3, n);
  for (int k = 0; k < n; ++k) {
    const double t = k * step;
    r.col(k) << radius * std::cos(t), radius * std::sin(t), pitch * t / (2.0 * std::numbers::pi);
  }
  return r;
}

Eigen::Matrix3Xd RandomCoil(int n, double link, bool planar, std::mt19937_64& rng) {
  std::normal_distribution<double> gauss(0.0, 1.0);
  Eigen::Matrix3Xd r = Eigen::Matrix3Xd::Zero(3, n);
  for (int k = 1; k < n; ++k) {
    Eigen::Vector3d step(gauss(rng), gauss(rng), planar ? 0.0 : gauss(rng));
    r.col(k) = r.col(k - 1) + link * step.normalized();
  }
  return r;
}

Eigen::Matrix3Xd StraightChain(int n, double link) {
  Eigen::Matrix3Xd r = Eigen::Matrix3Xd::Zero(3, n);
  for (int k = 0; k < n; ++k) r(0, k) = k * link;
  return r;
}

Eigen::Matrix3Xd RegularRing(int n, double link) {
  const double radius = link / (2.0 * std::sin(std::numbers::pi / n));
  Eigen::Matrix3Xd r = Eigen::Matrix3Xd::Zero(3, n);
  for (int k = 0; k < n; ++k) {
    const double angle = 2.0 * std::numbers::pi * k / n;
    r.col(k) << radius * std::cos(angle), radius * std::sin(angle), 0.0;
  }
  return r;
}

std::vector<constraints::DistanceConstraint> ChainConstraints(int n, double link, bool ring) {
  std::vector<constraints::DistanceConstraint> constraints;
  for (int k = 0; k + 1 < n; ++k) constraints.push_back({k, k + 1, link});
  if (ring) constraints.push_back({n - 1, 0, link});
  return constraints;
}

void PerturbGaussian(double sigma, std::mt19937_64& rng, Eigen::Matrix3Xd& positions) {
  std::normal_distribution<double> gauss(0.0, sigma);
  for (Eigen::Index k = 0; k < positions.cols(); ++k) {
    for (int d = 0; d < 3; ++d) positions(d, k) += gauss(rng);
  }
}

}  // namespace ikd::systems
