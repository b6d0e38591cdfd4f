#include "ikd/constraints/model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ikd::constraints {
namespace {

constexpr int kMaxSites = 10'000'000;

absl::Status ValidateInverseMasses(const Eigen::VectorXd& w) {
  if (w.size() == 0) return absl::InvalidArgumentError("inverse_masses: need at least one site");
  if (w.size() > kMaxSites) {
    return absl::InvalidArgumentError(
        absl::StrCat("inverse_masses: at most ", kMaxSites, " sites, got ", w.size()));
  }
  for (Eigen::Index k = 0; k < w.size(); ++k) {
    if (!std::isfinite(w[k]) || w[k] < 0.0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inverse_masses[", k, "] must be finite and >= 0 (0 = fixed site), got ", w[k]));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateConstraints(int num_sites, const std::vector<DistanceConstraint>& cs) {
  std::set<std::pair<int, int>> pairs;
  for (size_t k = 0; k < cs.size(); ++k) {
    const DistanceConstraint& c = cs[k];
    if (c.i < 0 || c.i >= num_sites || c.j < 0 || c.j >= num_sites) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "constraints[%d]: site indices (%d, %d) must be in [0, %d)", k, c.i, c.j, num_sites));
    }
    if (c.i == c.j) {
      return absl::InvalidArgumentError(
          absl::StrFormat("constraints[%d]: joins site %d to itself", k, c.i));
    }
    if (!std::isfinite(c.length) || c.length <= 0.0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "constraints[", k, "].length must be finite and > 0, got ", c.length));
    }
    if (!pairs.insert(std::minmax(c.i, c.j)).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "constraints[%d]: duplicate constraint on sites (%d, %d); the set would be "
          "rank-deficient",
          k, c.i, c.j));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConstraintModel> ConstraintModel::Create(
    Eigen::VectorXd inverse_masses, std::vector<DistanceConstraint> constraints) {
  if (absl::Status s = ValidateInverseMasses(inverse_masses); !s.ok()) return s;
  const int n = static_cast<int>(inverse_masses.size());
  if (absl::Status s = ValidateConstraints(n, constraints); !s.ok()) return s;

  ConstraintModel model;
  std::vector<DistanceConstraint> active_constraints;
  for (int k = 0; k < static_cast<int>(constraints.size()); ++k) {
    const DistanceConstraint& c = constraints[k];
    if (inverse_masses[c.i] == 0.0 && inverse_masses[c.j] == 0.0) {
      model.frozen_.push_back(k);
    } else {
      model.active_.push_back(k);
      active_constraints.push_back(c);
    }
  }
  model.topology_ = AnalyzeTopology(n, active_constraints);
  for (ConstraintComponent& component : model.topology_.components) {
    for (int& c : component.constraints) c = model.active_[c];  // back to caller's indices
  }
  model.inverse_masses_ = std::move(inverse_masses);
  model.constraints_ = std::move(constraints);
  return model;
}

double ConstraintModel::MaxRelativeViolation(const Eigen::Matrix3Xd& positions) const {
  double worst = 0.0;
  for (const DistanceConstraint& c : constraints_) {
    const double r = (positions.col(c.i) - positions.col(c.j)).norm();
    worst = MaxKeepingNan(worst, std::abs(r - c.length) / c.length);
  }
  return worst;
}

double ConstraintModel::MaxVelocityViolation(const Eigen::Matrix3Xd& positions,
                                             const Eigen::Matrix3Xd& velocities) const {
  double v_scale = 0.0;
  for (const DistanceConstraint& c : constraints_) {
    v_scale = MaxKeepingNan(v_scale, (velocities.col(c.i) - velocities.col(c.j)).norm());
  }
  if (v_scale == 0.0) return 0.0;
  double worst = 0.0;
  for (const DistanceConstraint& c : constraints_) {
    const double along = (positions.col(c.i) - positions.col(c.j))
                             .dot(velocities.col(c.i) - velocities.col(c.j));
    worst = MaxKeepingNan(worst, std::abs(along) / (c.length * v_scale));
  }
  return worst;
}

absl::Status ConstraintModel::CheckCoordinates(const Eigen::Matrix3Xd& m,
                                               const char* what) const {
  if (m.cols() != num_sites()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": expected 3 x ", num_sites(), " (one column per site), got 3 x ", m.cols()));
  }
  // x * 0 is 0 for a finite x and NaN otherwise: one vectorized pass (Eigen's allFinite is a
  // scalar loop); the loop below names the first bad column.
  if ((m.array() * 0.0).sum() == 0.0) return absl::OkStatus();
  for (Eigen::Index k = 0; k < m.cols(); ++k) {
    if (!m.col(k).allFinite()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "[", k, "] is not finite (NaN or infinity)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ConstraintModel::CheckFrozen(const Eigen::Matrix3Xd& positions,
                                          double tolerance) const {
  for (int k : frozen_) {
    const DistanceConstraint& c = constraints_[k];
    const double r = (positions.col(c.i) - positions.col(c.j)).norm();
    const double violation = std::abs(r - c.length) / c.length;
    if (violation > tolerance) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "constraints[%d] joins fixed sites %d and %d at distance %.17g but its length is "
          "%.17g (relative violation %.3g > tolerance %.3g); fixed sites cannot be moved",
          k, c.i, c.j, r, c.length, violation, tolerance));
    }
  }
  return absl::OkStatus();
}

}  // namespace ikd::constraints
