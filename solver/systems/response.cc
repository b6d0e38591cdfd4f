#include "ikd/systems/response.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ikd::systems {

using constraints::ConstraintModel;
using constraints::DistanceConstraint;

namespace {

absl::Status ValidateDimension(int dimension) {
  if (dimension != 2 && dimension != 3) {
    return absl::InvalidArgumentError(absl::StrCat("dimension must be 2 or 3, got ", dimension));
  }
  return absl::OkStatus();
}

absl::Status ValidateGeometry(const Eigen::Matrix3Xd& positions,
                              const std::vector<DistanceConstraint>& constraints) {
  const Eigen::Index n = positions.cols();
  if (n == 0) return absl::InvalidArgumentError("positions: need at least one site");
  if (!positions.allFinite()) {
    return absl::InvalidArgumentError("positions: every coordinate must be finite");
  }
  for (size_t c = 0; c < constraints.size(); ++c) {
    const DistanceConstraint& k = constraints[c];
    if (k.i < 0 || k.i >= n || k.j < 0 || k.j >= n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "constraints[%d]: site indices (%d, %d) must be in [0, %d)", c, k.i, k.j, n));
    }
    if (k.i == k.j) {
      return absl::InvalidArgumentError(
          absl::StrFormat("constraints[%d]: joins site %d to itself", c, k.i));
    }
  }
  return absl::OkStatus();
}

// Column c: the unit vector (r_i - r_j)/|r_i - r_j| of constraint c in the first d coordinates.
absl::StatusOr<Eigen::MatrixXd> UnitDirections(const Eigen::Matrix3Xd& positions,
                                               const std::vector<DistanceConstraint>& constraints,
                                               int d) {
  Eigen::MatrixXd u(d, static_cast<Eigen::Index>(constraints.size()));
  for (size_t c = 0; c < constraints.size(); ++c) {
    const DistanceConstraint& k = constraints[c];
    const Eigen::VectorXd r = positions.col(k.i).head(d) - positions.col(k.j).head(d);
    const double norm = r.norm();
    if (!(norm > 0.0) || !std::isfinite(norm)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "constraints[%d]: sites %d and %d coincide, the constraint has no direction", c, k.i,
          k.j));
    }
    u.col(c) = r / norm;
  }
  return u;
}

// The shared core: E = X - C^T G^-1 C with C = B X and G = C B^T = B X B^T (eq. 4.18/4.28/4.38).
// `x` supplies the lower triangle of X. G is factored as L D L^T without pivoting, so pivot d_k
// is the squared X-norm of constraint k's gradient orthogonal to the earlier ones: d_k / G_kk is
// sin^2 of that angle, the scale-free rank test.
absl::StatusOr<Eigen::MatrixXd> ProjectOut(const Eigen::MatrixXd& x, Eigen::MatrixXd c,
                                           const Eigen::MatrixXd& u,
                                           const std::vector<DistanceConstraint>& constraints,
                                           int d, double rank_tolerance) {
  const Eigen::Index l = u.cols();
  Eigen::MatrixXd g(l, l);
  for (Eigen::Index e = 0; e < l; ++e) {
    const int i = constraints[e].i, j = constraints[e].j;
    g.col(e) = c.middleCols(d * i, d) * u.col(e) - c.middleCols(d * j, d) * u.col(e);
  }
  // Unpivoted LDL^T in place: strictly lower part of g holds L, pivots go to `pivot`.
  Eigen::VectorXd pivot(l);
  for (Eigen::Index k = 0; k < l; ++k) {
    const double weight = g(k, k);
    double dk = weight;
    for (Eigen::Index m = 0; m < k; ++m) dk -= g(k, m) * g(k, m) * pivot[m];
    const DistanceConstraint& ck = constraints[k];
    if (!(weight > 0.0)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "constraints[%d] (sites %d-%d): both sites are immovable under the unconstrained "
          "response, B X B^T is singular",
          k, ck.i, ck.j));
    }
    if (!(dk > rank_tolerance * weight)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "constraints[%d] (sites %d-%d) is linearly dependent on constraints[0..%d] in this "
          "configuration (relative pivot %.3g <= rank_tolerance %.3g): the constraint set is "
          "rank-deficient, e.g. a collinear triangle or a duplicated constraint",
          k, ck.i, ck.j, k - 1, dk / weight, rank_tolerance));
    }
    pivot[k] = dk;
    for (Eigen::Index r = k + 1; r < l; ++r) {
      double v = g(r, k);
      for (Eigen::Index m = 0; m < k; ++m) v -= g(r, m) * g(k, m) * pivot[m];
      g(r, k) = v / dk;
    }
  }
  // C^T G^-1 C = W^T W with W = D^-1/2 L^-1 C.
  g.triangularView<Eigen::UnitLower>().solveInPlace(c);
  c = pivot.cwiseSqrt().cwiseInverse().asDiagonal() * c;
  Eigen::MatrixXd e = x;
  e.selfadjointView<Eigen::Lower>().rankUpdate(c.transpose(), -1.0);
  for (Eigen::Index col = 1; col < e.cols(); ++col) {
    for (Eigen::Index row = 0; row < col; ++row) e(row, col) = e(col, row);
  }
  if (!e.allFinite()) {
    return absl::FailedPreconditionError(
        "constrained response overflowed: B X B^T is too ill-conditioned");
  }
  return e;
}

absl::Status ValidateDenseResponse(const Eigen::MatrixXd& x, Eigen::Index size) {
  if (x.rows() != size || x.cols() != size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unconstrained: must be %d x %d (dimension * sites), got %d x %d", size,
                        size, x.rows(), x.cols()));
  }
  if (!x.allFinite()) {
    return absl::InvalidArgumentError("unconstrained: every entry must be finite");
  }
  const double scale = x.cwiseAbs().maxCoeff();
  const double asymmetry = (x - x.transpose()).cwiseAbs().maxCoeff();
  if (asymmetry > 1e-12 * scale) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unconstrained: must be symmetric, max |X - X^T| = %.3g > 1e-12 * max |X| = %.3g",
        asymmetry, 1e-12 * scale));
  }
  if (Eigen::LLT<Eigen::MatrixXd> llt(x); llt.info() != Eigen::Success) {
    return absl::InvalidArgumentError("unconstrained: must be positive definite");
  }
  return absl::OkStatus();
}

absl::Status ValidateAll(const Eigen::Matrix3Xd& positions,
                         const std::vector<DistanceConstraint>& constraints,
                         const ResponseOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  return ValidateGeometry(positions, constraints);
}

}  // namespace

absl::Status ResponseOptions::Validate() const {
  if (absl::Status s = ValidateDimension(dimension); !s.ok()) return s;
  if (!(rank_tolerance > 0.0 && rank_tolerance < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank_tolerance must be in (0, 1), got ", rank_tolerance));
  }
  return absl::OkStatus();
}

absl::StatusOr<Eigen::MatrixXd> ConstraintJacobian(
    const Eigen::Matrix3Xd& positions, const std::vector<DistanceConstraint>& constraints,
    int dimension) {
  if (absl::Status s = ValidateDimension(dimension); !s.ok()) return s;
  if (absl::Status s = ValidateGeometry(positions, constraints); !s.ok()) return s;
  absl::StatusOr<Eigen::MatrixXd> u = UnitDirections(positions, constraints, dimension);
  if (!u.ok()) return u.status();
  const int d = dimension;
  Eigen::MatrixXd b =
      Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(constraints.size()), d * positions.cols());
  for (size_t c = 0; c < constraints.size(); ++c) {
    b.row(c).segment(d * constraints[c].i, d) = u->col(c).transpose();
    b.row(c).segment(d * constraints[c].j, d) = -u->col(c).transpose();
  }
  return b;
}

absl::StatusOr<Eigen::MatrixXd> ConstrainedResponse(
    const Eigen::Matrix3Xd& positions, const std::vector<DistanceConstraint>& constraints,
    const Eigen::MatrixXd& unconstrained, const ResponseOptions& options) {
  if (absl::Status s = ValidateAll(positions, constraints, options); !s.ok()) return s;
  const int d = options.dimension;
  if (absl::Status s = ValidateDenseResponse(unconstrained, d * positions.cols()); !s.ok()) {
    return s;
  }
  absl::StatusOr<Eigen::MatrixXd> u = UnitDirections(positions, constraints, d);
  if (!u.ok()) return u.status();
  // C = B X, row c = u^T (X rows of site i) - u^T (X rows of site j): B has 2d entries a row.
  Eigen::MatrixXd c(u->cols(), unconstrained.cols());
  for (Eigen::Index k = 0; k < u->cols(); ++k) {
    const int i = constraints[k].i, j = constraints[k].j;
    c.row(k) = u->col(k).transpose() * unconstrained.middleRows(d * i, d) -
               u->col(k).transpose() * unconstrained.middleRows(d * j, d);
  }
  return ProjectOut(unconstrained, std::move(c), *u, constraints, d, options.rank_tolerance);
}

absl::StatusOr<Eigen::MatrixXd> ConstrainedResponseDiagonal(
    const Eigen::Matrix3Xd& positions, const std::vector<DistanceConstraint>& constraints,
    const Eigen::VectorXd& unconstrained_diagonal, const ResponseOptions& options) {
  if (absl::Status s = ValidateAll(positions, constraints, options); !s.ok()) return s;
  const int d = options.dimension;
  const Eigen::Index size = d * positions.cols();
  const Eigen::VectorXd& x = unconstrained_diagonal;
  if (x.size() != size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unconstrained_diagonal: must have %d entries (dimension * sites), got %d",
                        size, x.size()));
  }
  for (Eigen::Index k = 0; k < size; ++k) {
    if (!std::isfinite(x[k]) || x[k] < 0.0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unconstrained_diagonal[", k, "] must be finite and >= 0, got ", x[k]));
    }
  }
  absl::StatusOr<Eigen::MatrixXd> u = UnitDirections(positions, constraints, d);
  if (!u.ok()) return u.status();
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(u->cols(), size);
  for (Eigen::Index k = 0; k < u->cols(); ++k) {
    const int i = constraints[k].i, j = constraints[k].j;
    c.row(k).segment(d * i, d) = x.segment(d * i, d).cwiseProduct(u->col(k)).transpose();
    c.row(k).segment(d * j, d) = -x.segment(d * j, d).cwiseProduct(u->col(k)).transpose();
  }
  const Eigen::MatrixXd dense = x.asDiagonal();
  return ProjectOut(dense, std::move(c), *u, constraints, d, options.rank_tolerance);
}

absl::StatusOr<Eigen::MatrixXd> ConstrainedProjector(
    const Eigen::Matrix3Xd& positions, const std::vector<DistanceConstraint>& constraints,
    const ResponseOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  return ConstrainedResponseDiagonal(
      positions, constraints, Eigen::VectorXd::Ones(options.dimension * positions.cols()), options);
}

absl::StatusOr<Eigen::MatrixXd> ConstrainedMobility(const ConstraintModel& model,
                                                    const Eigen::Matrix3Xd& positions,
                                                    const ResponseOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (absl::Status s = model.CheckCoordinates(positions, "positions"); !s.ok()) return s;
  const int d = options.dimension;
  Eigen::VectorXd x(d * model.num_sites());
  for (int k = 0; k < model.num_sites(); ++k) {
    x.segment(d * k, d).setConstant(model.inverse_masses()[k]);
  }
  std::vector<DistanceConstraint> active;
  active.reserve(model.active().size());
  for (int index : model.active()) active.push_back(model.constraints()[index]);
  return ConstrainedResponseDiagonal(positions, active, x, options);
}

absl::StatusOr<Eigen::MatrixXd> IsotropicResponse(const Eigen::MatrixXd& response, int dimension) {
  if (absl::Status s = ValidateDimension(dimension); !s.ok()) return s;
  const Eigen::Index size = response.rows();
  if (response.cols() != size || size == 0 || size % dimension != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "response: must be square with a size that is a positive multiple of dimension %d, "
        "got %d x %d",
        dimension, response.rows(), response.cols()));
  }
  const Eigen::Index n = size / dimension;
  Eigen::MatrixXd iso(n, n);
  for (Eigen::Index b = 0; b < n; ++b) {
    for (Eigen::Index a = 0; a < n; ++a) {
      iso(a, b) =
          response.block(dimension * a, dimension * b, dimension, dimension).trace() / dimension;
    }
  }
  return iso;
}

absl::StatusOr<Eigen::MatrixXd> OrientationAverage(const Eigen::MatrixXd& response, int dimension) {
  absl::StatusOr<Eigen::MatrixXd> iso = IsotropicResponse(response, dimension);
  if (!iso.ok()) return iso.status();
  const Eigen::Index n = iso->rows();
  Eigen::MatrixXd average = Eigen::MatrixXd::Zero(dimension * n, dimension * n);
  for (Eigen::Index b = 0; b < n; ++b) {
    for (Eigen::Index a = 0; a < n; ++a) {
      for (int k = 0; k < dimension; ++k) {
        average(dimension * a + k, dimension * b + k) = (*iso)(a, b);
      }
    }
  }
  return average;
}

}  // namespace ikd::systems
