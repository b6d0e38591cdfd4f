// Internal: the input checks and failure handling every constraint solver shares.
#pragma once

#include <string>

#include "ikd/constraints/solver.h"

namespace ikd::internal {

class SolverBase : public ConstraintSolver {
 public:
  SolverBase(const ConstraintModel& model, const ProjectionOptions& options)
      : model_(model), options_(options) {}

  absl::StatusOr<ProjectionSummary> ProjectPositions(const Eigen::Matrix3Xd& reference,
                                                     Eigen::Matrix3Xd& positions) final;
  absl::StatusOr<ProjectionSummary> ProjectVelocities(const Eigen::Matrix3Xd& positions,
                                                      Eigen::Matrix3Xd& velocities) final;

 protected:
  // Called with validated, finite input and at least one active constraint.
  virtual ProjectionSummary DoProjectPositions(const Eigen::Matrix3Xd& reference,
                                               Eigen::Matrix3Xd& positions) = 0;
  virtual ProjectionSummary DoProjectVelocities(const Eigen::Matrix3Xd& positions,
                                                Eigen::Matrix3Xd& velocities) = 0;

  // Summary helpers with messages that name the method, the figures and the bound.
  ProjectionSummary Converged(int iterations, double violation) const;
  ProjectionSummary NotConverged(int iterations, double violation) const;
  ProjectionSummary Singular(int iterations, const std::string& why) const;

  const ConstraintModel& model_;
  const ProjectionOptions options_;
};

// Thomas algorithm for a tridiagonal matrix: lower[k] = A(k, k-1), diag[k] = A(k, k),
// upper[k] = A(k, k+1) (lower[0] and upper[n-1] unused). Factor once, solve many times.
class TridiagonalLu {
 public:
  // False when a pivot vanishes relative to its row (singular or needs pivoting).
  bool Factor(const Eigen::VectorXd& lower, const Eigen::VectorXd& diag,
              const Eigen::VectorXd& upper);
  void Solve(Eigen::VectorXd& x) const;  // in place: x <- A^-1 x

 private:
  Eigen::VectorXd lower_;
  Eigen::VectorXd inverse_pivot_;
  Eigen::VectorXd upper_prime_;
};

// Cyclic tridiagonal matrix (corner entries A(0, n-1) = top_right, A(n-1, 0) = bottom_left)
// solved by the Sherman-Morrison correction (Numerical Recipes sec. 2.7), for rings.
class CyclicTridiagonalLu {
 public:
  bool Factor(const Eigen::VectorXd& lower, const Eigen::VectorXd& diag,
              const Eigen::VectorXd& upper, double top_right, double bottom_left);
  void Solve(Eigen::VectorXd& x) const;

 private:
  TridiagonalLu lu_;
  Eigen::VectorXd z_;
  double gamma_ = 0.0;
  double top_right_ = 0.0;
  double denominator_ = 0.0;
};

}  // namespace ikd::internal
