// Internal: the input checks and failure handling every constraint solver shares.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "ikd/constraints/solver.h"

namespace ikd::constraints::internal {

class SolverBase : public ConstraintSolver {
 public:
  SolverBase(const ConstraintModel& model, const ProjectionOptions& options)
      : model_(model), options_(options) {}

  // The generic path: full input checks, a copy of the input, DoProject*, a finiteness pass
  // over the output. A solver that fuses these into its own passes overrides them.
  absl::StatusOr<ProjectionSummary> ProjectPositions(const Eigen::Matrix3Xd& reference,
                                                     Eigen::Matrix3Xd& positions) override;
  absl::StatusOr<ProjectionSummary> ProjectVelocities(const Eigen::Matrix3Xd& positions,
                                                      Eigen::Matrix3Xd& velocities) override;

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
  // `what` is "positions" or "velocities"; the input must have been restored.
  ProjectionSummary NonFinite(const char* what, int iterations) const;

  // The input of the projection in progress (positions or velocities), copied before
  // DoProject* runs; a member so that repeated calls reuse its storage.
  const Eigen::Matrix3Xd& input() const { return input_; }
  Eigen::Matrix3Xd& mutable_input() { return input_; }

  const ConstraintModel& model_;
  const ProjectionOptions options_;

 private:
  Eigen::Matrix3Xd input_;  // restored when a projection fails
};

// One row k of a tridiagonal matrix: lower = A(k, k-1), diag = A(k, k), upper = A(k, k+1).
struct TridiagonalRow {
  double lower = 0.0;
  double diag = 0.0;
  double upper = 0.0;
};

// Tridiagonal solver (lower of row 0 and upper of row n-1 unused). Factor once, solve many
// times. Both sweeps are latency-bound recurrences, so the Thomas elimination runs from both
// ends at once and meets in the middle row (a twisted, or "burn at both ends",
// factorization): two independent chains of n/2 steps instead of one of n. No pivoting, as
// in the Thomas algorithm. Rows come from a callable, row(k) -> TridiagonalRow, evaluated
// inside the elimination loop where the recurrence leaves the arithmetic units idle.
class TridiagonalLu {
 public:
  // False when a pivot vanishes relative to its row (singular or needs pivoting).
  template <typename RowFn>
  bool Factor(int n, RowFn&& row);
  void Solve(double* x) const;  // in place: x <- A^-1 x, n entries

 private:
  void Resize(int n);
  // One elimination step toward the middle; `outer` is the entry facing the end the step
  // came from, `inner` the one facing the middle. False on a vanishing pivot.
  bool Eliminate(int k, double outer, double diag, double inner, double& previous_inner) {
    const double pivot = diag - outer * previous_inner;
    const double row_scale = std::abs(diag) + std::abs(outer) + std::abs(inner);
    if (!(std::abs(pivot) > 1e-12 * row_scale)) return false;
    // The division, not a multiply by 1 / pivot, carries the recurrence: one step shorter.
    previous_inner = inner / pivot;
    inner_scaled_[k] = previous_inner;
    inverse_pivot_[k] = 1.0 / pivot;
    outer_scaled_[k] = outer * inverse_pivot_[k];
    return true;
  }
  bool EliminateMiddle(const TridiagonalRow& row, double top, double bottom);

  int n_ = 0;
  int middle_ = 0;
  std::vector<double> inverse_pivot_;  // 1 / pivot
  std::vector<double> outer_scaled_;   // outer entry / pivot: the elimination sweep
  std::vector<double> inner_scaled_;   // inner entry / pivot: the substitution sweep
  double middle_lower_ = 0.0;          // A(m, m-1) / pivot(m)
  double middle_upper_ = 0.0;          // A(m, m+1) / pivot(m)
};

// Rows 0..m-1 are eliminated downward, rows n-1..m+1 upward, row m = n / 2 last.
template <typename RowFn>
bool TridiagonalLu::Factor(int n, RowFn&& row) {
  Resize(n);
  const int m = middle_;
  double top = 0.0, bottom = 0.0;  // inner_scaled_ of the rows just above and below
  for (int k = 0; k < m; ++k) {
    const int b = n - 1 - k;  // rows k and b: two independent chains, interleaved
    const TridiagonalRow down = row(k);
    if (!Eliminate(k, k > 0 ? down.lower : 0.0, down.diag, down.upper, top)) return false;
    if (b > m) {
      const TridiagonalRow up = row(b);
      if (!Eliminate(b, b + 1 < n ? up.upper : 0.0, up.diag, up.lower, bottom)) return false;
    }
  }
  TridiagonalRow middle = row(m);
  if (m == 0) middle.lower = 0.0;
  if (m + 1 == n) middle.upper = 0.0;
  return EliminateMiddle(middle, top, bottom);
}

// Cyclic tridiagonal matrix (corner entries A(0, n-1) = lower of row 0, A(n-1, 0) = upper of
// row n-1) solved by the Sherman-Morrison correction (Numerical Recipes sec. 2.7), for rings.
class CyclicTridiagonalLu {
 public:
  template <typename RowFn>
  bool Factor(int n, RowFn&& row);
  void Solve(double* x) const;

 private:
  bool FactorCorrection(int n, double bottom_left);

  int n_ = 0;
  TridiagonalLu lu_;
  std::vector<double> z_;
  double gamma_ = 0.0;
  double top_right_ = 0.0;
  double denominator_ = 0.0;
};

template <typename RowFn>
bool CyclicTridiagonalLu::Factor(int n, RowFn&& row) {
  // A = A' + u v^T with u = (gamma, 0.., bottom_left), v = (1, 0.., top_right / gamma).
  const TridiagonalRow first = row(0);
  const double bottom_left = row(n - 1).upper;
  gamma_ = first.diag != 0.0 ? -first.diag : -1.0;
  top_right_ = first.lower;
  const double last_shift = bottom_left * top_right_ / gamma_;
  const bool ok = lu_.Factor(n, [&](int k) {
    TridiagonalRow r = row(k);
    if (k == 0) r.diag -= gamma_;
    if (k == n - 1) r.diag -= last_shift;
    return r;
  });
  return ok && FactorCorrection(n, bottom_left);
}

}  // namespace ikd::constraints::internal
