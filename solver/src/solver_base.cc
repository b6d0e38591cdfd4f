#include "solver_base.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace ikd::internal {

absl::StatusOr<ProjectionSummary> SolverBase::ProjectPositions(const Eigen::Matrix3Xd& reference,
                                                               Eigen::Matrix3Xd& positions) {
  if (absl::Status s = model_.CheckCoordinates(reference, "reference positions"); !s.ok()) return s;
  if (absl::Status s = model_.CheckCoordinates(positions, "positions"); !s.ok()) return s;
  if (absl::Status s = model_.CheckFrozen(positions, options_.tolerance); !s.ok()) return s;
  if (model_.active().empty()) return Converged(0, model_.MaxRelativeViolation(positions));
  const Eigen::Matrix3Xd input = positions;
  ProjectionSummary summary = DoProjectPositions(reference, positions);
  if (!positions.allFinite()) {
    positions = input;
    summary.outcome = ProjectionOutcome::kNonFinite;
    summary.message = absl::StrFormat(
        "%s produced non-finite positions after %d iterations; input left unchanged",
        MethodName(method()), summary.iterations);
  } else if (summary.outcome == ProjectionOutcome::kSingular) {
    positions = input;  // a singular solve leaves nothing meaningful to keep
  }
  return summary;
}

absl::StatusOr<ProjectionSummary> SolverBase::ProjectVelocities(const Eigen::Matrix3Xd& positions,
                                                                Eigen::Matrix3Xd& velocities) {
  if (absl::Status s = model_.CheckCoordinates(positions, "positions"); !s.ok()) return s;
  if (absl::Status s = model_.CheckCoordinates(velocities, "velocities"); !s.ok()) return s;
  if (model_.active().empty()) return Converged(0, 0.0);
  const Eigen::Matrix3Xd input = velocities;
  ProjectionSummary summary = DoProjectVelocities(positions, velocities);
  if (!velocities.allFinite()) {
    velocities = input;
    summary.outcome = ProjectionOutcome::kNonFinite;
    summary.message = absl::StrFormat(
        "%s produced non-finite velocities; input left unchanged", MethodName(method()));
  } else if (summary.outcome == ProjectionOutcome::kSingular) {
    velocities = input;
  }
  return summary;
}

ProjectionSummary SolverBase::Converged(int iterations, double violation) const {
  return {ProjectionOutcome::kConverged, iterations, violation, ""};
}

ProjectionSummary SolverBase::NotConverged(int iterations, double violation) const {
  return {ProjectionOutcome::kNotConverged, iterations, violation,
          absl::StrFormat("%s did not converge within max_iterations=%d: max relative "
                          "violation %.3g > tolerance %.3g",
                          MethodName(method()), options_.max_iterations, violation,
                          options_.tolerance)};
}

ProjectionSummary SolverBase::Singular(int iterations, const std::string& why) const {
  return {ProjectionOutcome::kSingular, iterations, 0.0,
          absl::StrFormat("%s: singular constraint system: %s", MethodName(method()), why)};
}

bool TridiagonalLu::Factor(const Eigen::VectorXd& lower, const Eigen::VectorXd& diag,
                           const Eigen::VectorXd& upper) {
  const Eigen::Index n = diag.size();
  lower_ = lower;
  inverse_pivot_.resize(n);
  upper_prime_.resize(n);
  double previous_upper_prime = 0.0;
  for (Eigen::Index k = 0; k < n; ++k) {
    const double sub = k > 0 ? lower[k] : 0.0;
    const double super = k + 1 < n ? upper[k] : 0.0;
    const double pivot = diag[k] - sub * previous_upper_prime;
    const double row_scale = std::abs(diag[k]) + std::abs(sub) + std::abs(super);
    if (!(std::abs(pivot) > 1e-12 * row_scale)) return false;
    inverse_pivot_[k] = 1.0 / pivot;
    upper_prime_[k] = super * inverse_pivot_[k];
    previous_upper_prime = upper_prime_[k];
  }
  return true;
}

void TridiagonalLu::Solve(Eigen::VectorXd& x) const {
  const Eigen::Index n = x.size();
  x[0] *= inverse_pivot_[0];
  for (Eigen::Index k = 1; k < n; ++k) x[k] = (x[k] - lower_[k] * x[k - 1]) * inverse_pivot_[k];
  for (Eigen::Index k = n - 2; k >= 0; --k) x[k] -= upper_prime_[k] * x[k + 1];
}

bool CyclicTridiagonalLu::Factor(const Eigen::VectorXd& lower, const Eigen::VectorXd& diag,
                                 const Eigen::VectorXd& upper, double top_right,
                                 double bottom_left) {
  const Eigen::Index n = diag.size();
  // A = A' + u v^T with u = (gamma, 0.., bottom_left), v = (1, 0.., top_right / gamma).
  gamma_ = diag[0] != 0.0 ? -diag[0] : -1.0;
  top_right_ = top_right;
  Eigen::VectorXd modified = diag;
  modified[0] -= gamma_;
  modified[n - 1] -= bottom_left * top_right / gamma_;
  if (!lu_.Factor(lower, modified, upper)) return false;
  z_ = Eigen::VectorXd::Zero(n);
  z_[0] = gamma_;
  z_[n - 1] = bottom_left;
  lu_.Solve(z_);
  denominator_ = 1.0 + z_[0] + top_right_ * z_[n - 1] / gamma_;
  const double scale = 1.0 + std::abs(z_[0]) + std::abs(top_right_ * z_[n - 1] / gamma_);
  return std::abs(denominator_) > 1e-12 * scale;
}

void CyclicTridiagonalLu::Solve(Eigen::VectorXd& x) const {
  const Eigen::Index n = x.size();
  lu_.Solve(x);
  const double factor = (x[0] + top_right_ * x[n - 1] / gamma_) / denominator_;
  x -= factor * z_;
}

}  // namespace ikd::internal
