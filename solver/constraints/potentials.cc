#include "ikd/constraints/potentials.h"

#include <cmath>

#include <Eigen/Geometry>

#include "absl/strings/str_cat.h"

namespace ikd::constraints {

UniformGravity::UniformGravity(const Eigen::Vector3d& g, Eigen::VectorXd inverse_masses)
    : g_(g), inverse_masses_(std::move(inverse_masses)) {}

double UniformGravity::AddForces(const Eigen::Matrix3Xd& positions,
                                 Eigen::Matrix3Xd& forces) const {
  double energy = 0.0;
  for (Eigen::Index k = 0; k < positions.cols(); ++k) {
    if (inverse_masses_[k] == 0.0) continue;  // fixed sites: no finite mass to pull
    const double mass = 1.0 / inverse_masses_[k];
    forces.col(k) += mass * g_;
    energy -= mass * g_.dot(positions.col(k));
  }
  return energy;
}

absl::StatusOr<BendingPotential> BendingPotential::Create(std::vector<std::array<int, 3>> triples,
                                                          double stiffness,
                                                          double segment_length) {
  if (!std::isfinite(stiffness) || stiffness < 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("stiffness must be finite and >= 0, got ", stiffness));
  }
  if (!std::isfinite(segment_length) || segment_length <= 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("segment_length must be finite and > 0, got ", segment_length));
  }
  for (size_t t = 0; t < triples.size(); ++t) {
    const auto& [a, b, c] = triples[t];
    if (a < 0 || b < 0 || c < 0 || a == b || b == c || a == c) {
      return absl::InvalidArgumentError(absl::StrCat(
          "triples[", t, "] must hold three distinct non-negative site indices"));
    }
  }
  return BendingPotential(std::move(triples), 0.5 * stiffness * segment_length);
}

absl::StatusOr<BendingPotential> BendingPotential::ForChain(int first, int count,
                                                            double stiffness,
                                                            double segment_length) {
  if (first < 0 || count < 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ForChain needs first >= 0 and count >= 3, got first=", first, " count=", count));
  }
  std::vector<std::array<int, 3>> triples;
  for (int s = first + 1; s + 1 < first + count; ++s) triples.push_back({s - 1, s, s + 1});
  return Create(std::move(triples), stiffness, segment_length);
}

double BendingPotential::AddForces(const Eigen::Matrix3Xd& positions,
                                   Eigen::Matrix3Xd& forces) const {
  double energy = 0.0;
  for (const auto& [prev, mid, next] : triples_) {
    const Eigen::Vector3d u = positions.col(mid) - positions.col(prev);
    const Eigen::Vector3d v = positions.col(next) - positions.col(mid);
    const double nu = u.norm(), nv = v.norm();
    const double sine = u.cross(v).norm() / (nu * nv);
    const double cosine = u.dot(v) / (nu * nv);
    // Bailey eq. 23: theta is the deviation from a straight line, from atan2 for accuracy.
    const double theta = std::atan2(sine, cosine);
    energy += prefactor_ * theta * theta;  // Bailey eq. 22
    // dU/dcos = -2 P theta / sin(theta); theta / sin(theta) -> 1 + theta^2 / 6 when straight.
    const double theta_over_sine = sine > 1e-6 ? theta / sine : 1.0 + theta * theta / 6.0;
    const double dU_dcos = -2.0 * prefactor_ * theta_over_sine;
    const Eigen::Vector3d dcos_du = v / (nu * nv) - cosine * u / (nu * nu);
    const Eigen::Vector3d dcos_dv = u / (nu * nv) - cosine * v / (nv * nv);
    forces.col(prev) += dU_dcos * dcos_du;
    forces.col(mid) -= dU_dcos * (dcos_du - dcos_dv);
    forces.col(next) -= dU_dcos * dcos_dv;
  }
  return energy;
}

double ExternalForces::AddForces(const Eigen::Matrix3Xd& positions,
                                 Eigen::Matrix3Xd& forces) const {
  forces += forces_;
  return -(forces_.array() * positions.array()).sum();
}

double ForceField::Evaluate(const Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& forces) const {
  forces.setZero(3, positions.cols());
  double energy = 0.0;
  for (const auto& term : terms_) energy += term->AddForces(positions, forces);
  return energy;
}

}  // namespace ikd::constraints
