// The matrix method for any topology (Ciccotti & Ryckaert 1986; M-SHAKE, Kraeutler 2001):
// linearized constraints A lambda = sigma with A = 2 B(ref) W B(ref)^T, sparse and symmetric
// positive definite for independent constraints; one sparse LDLT per projection, then chord
// iterations as in MILC SHAKE. Trees (skeletons, branched arms) and closed loops alike.
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "absl/strings/str_format.h"
#include "solver_base.h"
#include "solvers.h"

namespace ikd::constraints::internal {
namespace {

// Sparse LDL^T of a symmetric matrix with a fixed pattern (Davis's up-looking LDL algorithm):
// the elimination tree, the pattern of every row of L and the slot of every entry are found
// once from the pattern; a factorization then only does the arithmetic, in flat arrays
// (Eigen's SimplicialLDLT walks the elimination tree again on every call: it took half the
// time of an industrial arm's projection).
class FixedPatternLdlt {
 public:
  // `upper`: the pattern of A's upper triangle, compressed columns (row indices i <= k).
  void Analyze(const Eigen::SparseMatrix<double>& upper) {
    const int n = static_cast<int>(upper.cols());
    std::vector<int> parent(n, -1), flag(n, -1), count(n, 0);
    const int* ap = upper.outerIndexPtr();
    const int* ai = upper.innerIndexPtr();
    // Row k of L: the etree paths from A's entries in column k up to k, each in topological
    // order (a row's entries depend on those below them in the tree).
    row_start_.assign(1, 0);
    pattern_.clear();
    slot_.clear();
    std::vector<int> path, row;
    for (int k = 0; k < n; ++k) {
      flag[k] = k;
      row.clear();
      for (int p = ap[k]; p < ap[k + 1]; ++p) {
        path.clear();
        for (int i = ai[p]; i < k && flag[i] != k; i = parent[i]) {
          if (parent[i] == -1) parent[i] = k;
          path.push_back(i);
          flag[i] = k;
        }
        row.insert(row.begin(), path.begin(), path.end());
      }
      for (int i : row) {
        pattern_.push_back(i);
        slot_.push_back(count[i]++);  // made absolute below, once the column starts are known
      }
      row_start_.push_back(static_cast<int>(pattern_.size()));
    }
    column_start_.assign(n + 1, 0);
    for (int i = 0; i < n; ++i) column_start_[i + 1] = column_start_[i] + count[i];
    row_index_.assign(column_start_[n], 0);
    for (int k = 0; k < n; ++k) {
      for (int q = row_start_[k]; q < row_start_[k + 1]; ++q) {
        slot_[q] += column_start_[pattern_[q]];
        row_index_[slot_[q]] = k;
      }
    }
    values_.assign(column_start_[n], 0.0);
    d_.resize(n);
    inverse_d_.resize(n);
    work_.setZero(n);
  }

  // Factors A (same pattern as analyzed, upper triangle); false when a pivot is not above
  // `min_pivot` (singular to working precision) or not finite.
  bool Factorize(const Eigen::SparseMatrix<double>& upper, double min_pivot) {
    const int n = static_cast<int>(d_.size());
    const int* ap = upper.outerIndexPtr();
    const int* ai = upper.innerIndexPtr();
    const double* ax = upper.valuePtr();
    double* y = work_.data();
    for (int k = 0; k < n; ++k) {
      for (int p = ap[k]; p < ap[k + 1]; ++p) y[ai[p]] += ax[p];
      double d = y[k];
      y[k] = 0.0;
      for (int q = row_start_[k]; q < row_start_[k + 1]; ++q) {
        const int i = pattern_[q];
        const double yi = y[i];
        y[i] = 0.0;
        const int end = slot_[q];
        for (int p = column_start_[i]; p < end; ++p) y[row_index_[p]] -= values_[p] * yi;
        const double l = yi * inverse_d_[i];
        d -= l * yi;
        values_[end] = l;
      }
      if (!(d > min_pivot) || !std::isfinite(d)) {
        work_.setZero();
        return false;
      }
      d_[k] = d;
      inverse_d_[k] = 1.0 / d;
    }
    return true;
  }

  // x = A^-1 x.
  void SolveInPlace(Eigen::VectorXd& x) const {
    const int n = static_cast<int>(d_.size());
    for (int j = 0; j < n; ++j) {
      const double xj = x[j];
      for (int p = column_start_[j]; p < column_start_[j + 1]; ++p) x[row_index_[p]] -= values_[p] * xj;
    }
    for (int j = 0; j < n; ++j) x[j] *= inverse_d_[j];
    for (int j = n - 1; j >= 0; --j) {
      // Two partial sums: the subtractions of one sum wait on each other.
      double even = x[j], odd = 0.0;
      int p = column_start_[j];
      const int end = column_start_[j + 1];
      for (; p + 1 < end; p += 2) {
        even -= values_[p] * x[row_index_[p]];
        odd -= values_[p + 1] * x[row_index_[p + 1]];
      }
      if (p < end) even -= values_[p] * x[row_index_[p]];
      x[j] = even + odd;
    }
  }

 private:
  std::vector<int> row_start_, pattern_, slot_;      // per row k of L: its columns, their slots
  std::vector<int> column_start_, row_index_;        // L by columns (strictly lower)
  std::vector<double> values_;
  Eigen::VectorXd d_, inverse_d_, work_;
};

// How one stored entry A(a, b) is computed: coefficient * (d_a . d_b).
struct EntryRecipe {
  Eigen::Index value_index;
  int a;
  int b;
  double coefficient;
};

class MatrixSolver final : public SolverBase {
 public:
  MatrixSolver(const ConstraintModel& model, const ProjectionOptions& options)
      : SolverBase(model, options) {
    const int m = static_cast<int>(model.active().size());
    const Eigen::VectorXd& w = model.inverse_masses();
    for (int a = 0; a < m; ++a) {
      const DistanceConstraint& c = model.constraints()[model.active()[a]];
      heads_.push_back(c.i);
      tails_.push_back(c.j);
      length_.push_back(c.length);
    }
    // Couplings: links a, b sharing site k, sign +1 if k is the head (i) of a link, -1 if tail.
    std::vector<std::vector<std::pair<int, double>>> incident(model.num_sites());
    for (int a = 0; a < m; ++a) {
      incident[heads_[a]].push_back({a, 1.0});
      incident[tails_[a]].push_back({a, -1.0});
    }
    std::vector<Eigen::Triplet<double>> pattern;
    std::vector<EntryRecipe> recipes;
    for (int a = 0; a < m; ++a) {
      pattern.emplace_back(a, a, 1.0);
      recipes.push_back({0, a, a, w[heads_[a]] + w[tails_[a]]});
    }
    for (int k = 0; k < model.num_sites(); ++k) {
      if (w[k] == 0.0) continue;  // a fixed site couples nothing
      for (const auto& [a, sa] : incident[k]) {
        for (const auto& [b, sb] : incident[k]) {
          if (a <= b) continue;
          pattern.emplace_back(a, b, 1.0);
          recipes.push_back({0, a, b, w[k] * sa * sb});
        }
      }
    }
    Order(m, pattern, recipes);
    links_.resize(m);
    rhs_total_.resize(m);
    lambda_.resize(m);
    permuted_.resize(m);
  }
  Method method() const override { return Method::kMatrix; }

 protected:
  ProjectionSummary DoProjectPositions(const Eigen::Matrix3Xd& reference,
                                       Eigen::Matrix3Xd& positions) override {
    const int m = static_cast<int>(heads_.size());
    // Newton from where the last Newton projection ended (a continuation's next step): its
    // last factorization, made at an iterate within a few Newton steps of the reference, serves
    // the first correction as well as a new one would.
    const bool reuse = options_.newton && newton_end_valid_ && reference == newton_end_;
    newton_end_valid_ = false;
    for (int a = 0; a < m; ++a) {
      if (!reuse) links_[a] = reference.col(heads_[a]) - reference.col(tails_[a]);
      const double d2 = (positions.col(heads_[a]) - positions.col(tails_[a])).squaredNorm();
      rhs_total_[a] = length_[a] * length_[a] - d2;
    }
    if (!reuse && !Factor(2.0)) {
      return Singular(0, "the constraints are linearly dependent at the reference positions "
                         "(rank-deficient set: e.g. a collinear triangle, or collinear links "
                         "between fixed sites)");
    }
    if (options_.newton) {
      ProjectionSummary summary = NewtonIterations(positions);
      if (summary.converged()) newton_end_ = positions, newton_end_valid_ = true;
      return summary;
    }
    const Eigen::Matrix3Xd& unconstrained = input();  // SolverBase's copy of r~
    for (int iteration = 1; iteration <= options_.max_iterations; ++iteration) {
      // Bailey eq. 13-14 with the symmetric matrix A: chord iteration on sigma.
      Solve();
      positions = unconstrained;
      ApplyMultipliers(positions);
      double worst = 0.0;
      for (int a = 0; a < m; ++a) {
        const double d2 = (positions.col(heads_[a]) - positions.col(tails_[a])).squaredNorm();
        worst = MaxKeepingNan(worst, std::abs(std::sqrt(d2) - length_[a]) / length_[a]);
        rhs_total_[a] += length_[a] * length_[a] - d2;
      }
      if (!std::isfinite(worst)) break;
      if (worst <= options_.tolerance) return Converged(iteration, worst);
    }
    return NotConverged(options_.max_iterations, model_.MaxRelativeViolation(positions));
  }

  ProjectionSummary DoProjectVelocities(const Eigen::Matrix3Xd& positions,
                                        Eigen::Matrix3Xd& velocities) override {
    const int m = static_cast<int>(heads_.size());
    for (int a = 0; a < m; ++a) {
      links_[a] = positions.col(heads_[a]) - positions.col(tails_[a]);
      rhs_total_[a] = -links_[a].dot(velocities.col(heads_[a]) - velocities.col(tails_[a]));
    }
    if (!Factor(1.0)) {
      return Singular(0, "velocity constraint matrix B W B^T is singular (linearly dependent "
                         "constraints at these positions)");
    }
    // Bailey eq. 20 in matrix form: (B W B^T) lambda = -B v, one direct solve.
    Solve();
    ApplyMultipliers(velocities);
    return Converged(1, model_.MaxVelocityViolation(positions, velocities));
  }

 private:
  // Newton's method on g_a(x) = |d_a|^2 - l_a^2 with the minimum-norm (W-weighted) step:
  // 2 B(x) W B(x)^T nu = l^2 - |d(x)|^2, x += W B(x)^T nu, B's rows the links d_a of the
  // linearization. The first step uses the reference links DoProjectPositions factored; the
  // matrix is rebuilt at the current iterate only when an iteration shrank the violation by
  // less than kRefactorRatio (Shamanskii's variant): a small move converges in a chord step or
  // two without refactoring, a large one gets Newton's quadratic convergence.
  ProjectionSummary NewtonIterations(Eigen::Matrix3Xd& positions) {
    constexpr double kRefactorRatio = 0.01;
    constexpr int kDivergenceCheckFrom = 4;
    const int m = static_cast<int>(heads_.size());
    current_links_.resize(m);
    double previous = 0.0;
    for (int a = 0; a < m; ++a) {
      const double d2 = (positions.col(heads_[a]) - positions.col(tails_[a])).squaredNorm();
      previous = MaxKeepingNan(previous, std::abs(std::sqrt(d2) - length_[a]) / length_[a]);
    }
    for (int iteration = 1; iteration <= options_.max_iterations; ++iteration) {
      Solve();
      ApplyMultipliers(positions);
      double worst = 0.0;
      for (int a = 0; a < m; ++a) {
        current_links_[a] = positions.col(heads_[a]) - positions.col(tails_[a]);
        const double d2 = current_links_[a].squaredNorm();
        worst = MaxKeepingNan(worst, std::abs(std::sqrt(d2) - length_[a]) / length_[a]);
        rhs_total_[a] = length_[a] * length_[a] - d2;
      }
      if (!std::isfinite(worst)) break;
      if (worst <= options_.tolerance) return Converged(iteration, worst);
      // From the fourth iteration on, a violation that grows means the iterates are leaving
      // the region where Newton converges (a singular or folded configuration ahead): the
      // rest would be spent in vain (UR5 single poses: 92% of the projections that end
      // unconverged are caught so, 0.1% of those that converge later; from the third
      // iteration 95% and 0.2%, and single poses were lost).
      if (iteration >= kDivergenceCheckFrom && worst > previous) {
        return {ProjectionOutcome::kNotConverged, iteration, worst,
                absl::StrFormat("MATRIX (Newton) diverging: the max relative violation grew "
                                "from %.3g to %.3g at iteration %d", previous, worst, iteration)};
      }
      // Slow, unless one more chord step at this rate would reach the tolerance anyway.
      const bool finishing = worst * (worst / previous) <= options_.tolerance;
      const bool slow = worst > kRefactorRatio * previous && !finishing;
      previous = worst;
      if (!slow || iteration == options_.max_iterations) continue;
      links_.swap(current_links_);
      if (!Factor(2.0)) {
        return Singular(iteration, "the constraints became linearly dependent at an iterate "
                                   "(e.g. collinear links)");
      }
    }
    return NotConverged(options_.max_iterations, model_.MaxRelativeViolation(positions));
  }

  // The recipes of A's diagonal: the first one per constraint.
  std::span<const EntryRecipe> diagonal_recipes() const { return {recipes_.data(), heads_.size()}; }

  // Fills A = scale * B W B^T from links_ and factors it; false when (numerically) singular.
  bool Factor(double scale) {
    double* values = matrix_.valuePtr();
    double largest_diagonal = 0.0;
    for (const EntryRecipe& r : recipes_) {
      values[r.value_index] = scale * r.coefficient * links_[r.a].dot(links_[r.b]);
    }
    for (const EntryRecipe& r : diagonal_recipes()) {
      largest_diagonal = std::max(largest_diagonal, values[r.value_index]);
    }
    return ldlt_.Factorize(matrix_, 1e-12 * largest_diagonal);
  }

  // The fill-reducing (AMD) order of A's pattern, once: constraint a becomes row order_[a];
  // matrix_ holds the reordered upper triangle and each recipe its entry there.
  void Order(int m, const std::vector<Eigen::Triplet<double>>& lower_pattern,
             std::vector<EntryRecipe>& recipes) {
    Eigen::SparseMatrix<double> lower(m, m);
    lower.setFromTriplets(lower_pattern.begin(), lower_pattern.end());
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Lower> amd;
    amd.analyzePattern(lower);
    order_.resize(m);
    for (int a = 0; a < m; ++a) order_[a] = amd.permutationP().indices()[a];
    std::vector<Eigen::Triplet<double>> upper_pattern;
    for (const EntryRecipe& r : recipes) {
      upper_pattern.emplace_back(std::min(order_[r.a], order_[r.b]),
                                 std::max(order_[r.a], order_[r.b]), 1.0);
    }
    matrix_.resize(m, m);
    matrix_.setFromTriplets(upper_pattern.begin(), upper_pattern.end());
    matrix_.makeCompressed();
    for (EntryRecipe& r : recipes) {
      r.value_index = &matrix_.coeffRef(std::min(order_[r.a], order_[r.b]),
                                        std::max(order_[r.a], order_[r.b])) -
                      matrix_.valuePtr();
    }
    recipes_ = std::move(recipes);
    ldlt_.Analyze(matrix_);
  }

  // lambda_ = A^-1 rhs_total_ through the reordered factors.
  void Solve() {
    for (size_t a = 0; a < order_.size(); ++a) permuted_[order_[a]] = rhs_total_[a];
    ldlt_.SolveInPlace(permuted_);
    for (size_t a = 0; a < order_.size(); ++a) lambda_[a] = permuted_[order_[a]];
  }

  // x_i += w_i sum_a lambda_a s_{a,i} d_a (Vesely eq. 7; for velocities Bailey eq. 18).
  void ApplyMultipliers(Eigen::Matrix3Xd& x) const {
    const Eigen::VectorXd& w = model_.inverse_masses();
    for (size_t a = 0; a < heads_.size(); ++a) {
      x.col(heads_[a]) += (w[heads_[a]] * lambda_[a]) * links_[a];
      x.col(tails_[a]) -= (w[tails_[a]] * lambda_[a]) * links_[a];
    }
  }

  std::vector<int> heads_, tails_;
  std::vector<double> length_;
  std::vector<EntryRecipe> recipes_;
  std::vector<int> order_;
  Eigen::SparseMatrix<double> matrix_;  // A in order_, upper triangle
  FixedPatternLdlt ldlt_;
  std::vector<Eigen::Vector3d> links_;
  std::vector<Eigen::Vector3d> current_links_;  // Newton: the iterate's links
  // Newton: where the last converged projection ended; links_ and the factors are still those
  // of its last linearization.
  Eigen::Matrix3Xd newton_end_;
  bool newton_end_valid_ = false;
  Eigen::VectorXd rhs_total_, lambda_, permuted_;
};

}  // namespace

std::unique_ptr<ConstraintSolver> MakeMatrixSolver(const ConstraintModel& model,
                                                   const ProjectionOptions& options) {
  return std::make_unique<MatrixSolver>(model, options);
}

}  // namespace ikd::constraints::internal
