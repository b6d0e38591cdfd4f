#include "solver_base.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace ikd::constraints::internal {
namespace {

// x * 0 is 0 for a finite x and NaN otherwise: one vectorized pass (Eigen's allFinite is a
// scalar loop).
bool AllFinite(const Eigen::Matrix3Xd& m) { return (m.array() * 0.0).sum() == 0.0; }

}  // namespace

absl::StatusOr<ProjectionSummary> SolverBase::ProjectPositions(const Eigen::Matrix3Xd& reference,
                                                               Eigen::Matrix3Xd& positions) {
  if (absl::Status s = model_.CheckCoordinates(reference, "reference positions"); !s.ok()) return s;
  if (absl::Status s = model_.CheckCoordinates(positions, "positions"); !s.ok()) return s;
  if (absl::Status s = model_.CheckFrozen(positions, options_.tolerance); !s.ok()) return s;
  if (model_.active().empty()) return Converged(0, model_.MaxRelativeViolation(positions));
  input_ = positions;
  ProjectionSummary summary = DoProjectPositions(reference, positions);
  if (!AllFinite(positions)) {
    positions = input_;
    summary = NonFinite("positions", summary.iterations);
  } else if (summary.outcome == ProjectionOutcome::kSingular) {
    positions = input_;  // a singular solve leaves nothing meaningful to keep
  }
  return summary;
}

absl::StatusOr<ProjectionSummary> SolverBase::ProjectVelocities(const Eigen::Matrix3Xd& positions,
                                                                Eigen::Matrix3Xd& velocities) {
  if (absl::Status s = model_.CheckCoordinates(positions, "positions"); !s.ok()) return s;
  if (absl::Status s = model_.CheckCoordinates(velocities, "velocities"); !s.ok()) return s;
  if (model_.active().empty()) return Converged(0, 0.0);
  input_ = velocities;
  ProjectionSummary summary = DoProjectVelocities(positions, velocities);
  if (!AllFinite(velocities)) {
    velocities = input_;
    summary = NonFinite("velocities", summary.iterations);
  } else if (summary.outcome == ProjectionOutcome::kSingular) {
    velocities = input_;
  }
  return summary;
}

ProjectionSummary SolverBase::Converged(int iterations, double violation) const {
  return {ProjectionOutcome::kConverged, iterations, violation, {}};
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

ProjectionSummary SolverBase::NonFinite(const char* what, int iterations) const {
  const std::string after = std::string_view(what) == "positions"
                                ? absl::StrFormat(" after %d iterations", iterations)
                                : "";
  return {ProjectionOutcome::kNonFinite, iterations, std::numeric_limits<double>::quiet_NaN(),
          absl::StrFormat("%s produced non-finite %s%s; input left unchanged",
                          MethodName(method()), what, after)};
}

void TridiagonalLu::Resize(int n) {
  n_ = n;
  middle_ = n / 2;
  inverse_pivot_.resize(n);
  outer_scaled_.resize(n);
  inner_scaled_.resize(n);
}

bool TridiagonalLu::EliminateMiddle(const TridiagonalRow& row, double top, double bottom) {
  const int m = middle_;
  const double pivot = row.diag - row.lower * top - row.upper * bottom;
  const double row_scale = std::abs(row.diag) + std::abs(row.lower) + std::abs(row.upper);
  if (!(std::abs(pivot) > 1e-12 * row_scale)) return false;
  inverse_pivot_[m] = 1.0 / pivot;
  middle_lower_ = row.lower * inverse_pivot_[m];
  middle_upper_ = row.upper * inverse_pivot_[m];
  return true;
}

void TridiagonalLu::Solve(double* x) const {
  const int n = n_, m = middle_;
  const double* ip = inverse_pivot_.data();
  const double* outer = outer_scaled_.data();
  const double* inner = inner_scaled_.data();
  double top = 0.0, bottom = 0.0;
  for (int k = 0; k < m; ++k) {  // elimination toward the middle
    const int b = n - 1 - k;
    top = x[k] = x[k] * ip[k] - outer[k] * top;
    if (b > m) bottom = x[b] = x[b] * ip[b] - outer[b] * bottom;
  }
  x[m] = x[m] * ip[m] - middle_lower_ * top - middle_upper_ * bottom;
  top = bottom = x[m];  // kept in registers: a reload would put a store-to-load on the chain
  for (int k = m - 1; k >= 0; --k) {  // substitution outward
    const int b = n - 1 - k;
    top = x[k] -= inner[k] * top;
    if (b > m) bottom = x[b] -= inner[b] * bottom;
  }
}

bool CyclicTridiagonalLu::FactorCorrection(int n, double bottom_left) {
  n_ = n;
  z_.assign(n, 0.0);
  z_[0] = gamma_;
  z_[n - 1] = bottom_left;
  lu_.Solve(z_.data());
  denominator_ = 1.0 + z_[0] + top_right_ * z_[n - 1] / gamma_;
  const double scale = 1.0 + std::abs(z_[0]) + std::abs(top_right_ * z_[n - 1] / gamma_);
  return std::abs(denominator_) > 1e-12 * scale;
}

void CyclicTridiagonalLu::Solve(double* x) const {
  lu_.Solve(x);
  const double factor = (x[0] + top_right_ * x[n_ - 1] / gamma_) / denominator_;
  for (int k = 0; k < n_; ++k) x[k] -= factor * z_[k];
}

}  // namespace ikd::constraints::internal
