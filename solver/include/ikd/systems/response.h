// Constrained response matrices of the projection method (thesis "constraint dynamics by
// projection", ch. 4): for a configuration R with distance constraints and an unconstrained
// linear response X (K^-1, D^-1 or M^-1), the constrained response
//
//   X_c = X - X B^T (B X B^T)^-1 B X          (L eq. 4.18, E eq. 4.28, N eq. 4.38)
//
// maps a force F on the sites to the constrained displacement (L F), velocity (E F) or
// acceleration at rest (N F). With X = identity it is the orthogonal projector onto the
// tangent space of the constraint manifold.
//
//   ikd::systems::ResponseOptions options;    // dimension 3
//   auto e = ikd::systems::ConstrainedProjector(positions, constraints, options);
//   if (!e.ok()) return e.status();           // bad input, or a rank-deficient constraint set
//   Eigen::VectorXd velocity = *e * force;    // force ordered (x1, y1, z1, x2, ...)
//
// Matrices are (d n) x (d n), site-major: row/column d*k + a is coordinate a of site k, with
// d = options.dimension (2: only the x, y rows of `positions` are used).
#pragma once

#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ikd/constraints/model.h"
#include "ikd/constraints/types.h"

namespace ikd::systems {

struct ResponseOptions {
  // 2 (planar: x, y) or 3.
  int dimension = 3;
  // A constraint whose X-weighted gradient makes sin^2(angle) <= rank_tolerance with the span
  // of the gradients of the constraints before it is reported as linearly dependent (a
  // collinear triangle, a duplicated constraint). In (0, 1).
  double rank_tolerance = 1e-10;

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

// The constraint Jacobian B of eq. 4.10, l x (d n), for the normalized constraints
// g_c = |r_i - r_j| - l_c: row c holds +u at site i and -u at site j, u = (r_i - r_j)/|r_i - r_j|.
// The squared form g = |r_ij|^2 - l^2 gives the rows scaled by 2|r_ij|, B' = S B; the response
// matrices do not change since B'^T (B' X B'^T)^-1 B' = B^T (B X B^T)^-1 B for any invertible
// diagonal S. The normalized rows keep B X B^T well scaled whatever the bond lengths.
// Lengths are not used: the response is defined for any configuration.
// Errors: InvalidArgument for a bad dimension, a non-finite position, a site index out of range
// or i == j; FailedPrecondition when the two sites of a constraint coincide (no direction).
absl::StatusOr<Eigen::MatrixXd> ConstraintJacobian(
    const Eigen::Matrix3Xd& positions,
    const std::vector<constraints::DistanceConstraint>& constraints, int dimension = 3);

// X - X B^T (B X B^T)^-1 B X for a dense `unconstrained` X, (d n) x (d n), symmetric (to 1e-12
// relative) and positive definite: K^-1 gives L (eq. 4.18), D^-1 gives E (eq. 4.28), M^-1 gives
// N (eq. 4.38). B X B^T is factored by an unpivoted LDL^T in constraint order, so the first
// dependent constraint is the one named. The result is exactly symmetric.
// Errors: InvalidArgument (shapes, non-finite values, X not symmetric or not positive definite,
// options); FailedPrecondition for coincident constraint sites or a rank-deficient constraint
// set (names the constraint and its sites). Never returns NaN.
absl::StatusOr<Eigen::MatrixXd> ConstrainedResponse(
    const Eigen::Matrix3Xd& positions,
    const std::vector<constraints::DistanceConstraint>& constraints,
    const Eigen::MatrixXd& unconstrained, const ResponseOptions& options = {});

// The same for a diagonal X given by its d n diagonal entries, each finite and >= 0 (0 = an
// immovable coordinate, e.g. a fixed site's inverse mass); cheaper than the dense form. A
// constraint whose both sites are immovable makes B X B^T singular: FailedPrecondition.
absl::StatusOr<Eigen::MatrixXd> ConstrainedResponseDiagonal(
    const Eigen::Matrix3Xd& positions,
    const std::vector<constraints::DistanceConstraint>& constraints,
    const Eigen::VectorXd& unconstrained_diagonal, const ResponseOptions& options = {});

// X = identity: E of the thesis sec. 4.6 (D^-1 = 1), the orthogonal projector onto the
// tangent space of the constraint manifold (E^2 = E = E^T, E B^T = 0, trace d n - l).
absl::StatusOr<Eigen::MatrixXd> ConstrainedProjector(
    const Eigen::Matrix3Xd& positions,
    const std::vector<constraints::DistanceConstraint>& constraints,
    const ResponseOptions& options = {});

// N of eq. 4.38 for a model: X = M^-1 from the model's inverse masses (fixed sites immovable),
// over the model's active constraints (constraints between two fixed sites carry no force).
absl::StatusOr<Eigen::MatrixXd> ConstrainedMobility(const constraints::ConstraintModel& model,
                                                    const Eigen::Matrix3Xd& positions,
                                                    const ResponseOptions& options = {});

// Ensemble helpers. A response R of a configuration rotated by Q (block-diagonal) is
// Q R Q^T, so averaging over all orientations (the orthogonal group O(d)) replaces every
// d x d block R_ab by (tr R_ab / d) I: thesis eq. 4.48 gets it from the three axis orientations.

// n x n matrix of the block traces over d: (tr R_ab) / d. InvalidArgument unless `response` is
// square with a size that is a positive multiple of `dimension` (2 or 3).
absl::StatusOr<Eigen::MatrixXd> IsotropicResponse(const Eigen::MatrixXd& response, int dimension);

// The orientation average itself, (d n) x (d n): IsotropicResponse(R) (x) I_d.
absl::StatusOr<Eigen::MatrixXd> OrientationAverage(const Eigen::MatrixXd& response, int dimension);

}  // namespace ikd::systems
