#include "ikd/planning/boxed_least_squares.h"

#include <algorithm>
#include <limits>
#include <random>

#include <gtest/gtest.h>
#include <Eigen/Dense>

namespace ikd::planning {
namespace {

struct Problem {
  Eigen::MatrixXd a;
  Eigen::VectorXd b, weight, lo, hi;
  double mu = 0.0;
};

double Objective(const Problem& p, const Eigen::VectorXd& d) {
  return (p.a * d - p.b).squaredNorm() + p.mu * d.dot(p.weight.cwiseProduct(d));
}

// The exact optimum of the convex problem by brute force: every assignment of each variable to
// free, its lower bound or its upper bound, the free ones from the full n x n normal equations,
// the best of the assignments that stay inside the box.
Eigen::VectorXd BruteForce(const Problem& p) {
  const int n = static_cast<int>(p.a.cols());
  int assignments = 1;
  for (int j = 0; j < n; ++j) assignments *= 3;
  Eigen::VectorXd best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int code = 0; code < assignments; ++code) {
    Eigen::VectorXd d = Eigen::VectorXd::Zero(n);
    std::vector<int> free;
    for (int j = 0, c = code; j < n; ++j, c /= 3) {
      if (c % 3 == 0) free.push_back(j);
      if (c % 3 == 1) d[j] = p.lo[j];
      if (c % 3 == 2) d[j] = p.hi[j];
    }
    const int f = static_cast<int>(free.size());
    if (f > 0) {
      Eigen::MatrixXd h(f, f);
      Eigen::VectorXd g(f);
      const Eigen::VectorXd rest = p.b - p.a * d;
      for (int r = 0; r < f; ++r) {
        g[r] = p.a.col(free[r]).dot(rest);
        for (int c = 0; c < f; ++c) h(r, c) = p.a.col(free[r]).dot(p.a.col(free[c]));
        h(r, r) += p.mu * p.weight[free[r]];
      }
      const Eigen::VectorXd x = h.fullPivLu().solve(g);
      for (int r = 0; r < f; ++r) d[free[r]] = x[r];
    }
    bool inside = true;
    for (int j = 0; j < n; ++j)
      inside = inside && d[j] >= p.lo[j] - 1e-12 && d[j] <= p.hi[j] + 1e-12;
    if (inside && Objective(p, d) < best_cost) best_cost = Objective(p, d), best = d;
  }
  return best;
}

Problem RandomProblem(std::mt19937& rng, int m, int n, double damping) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Problem p;
  p.a = Eigen::MatrixXd::NullaryExpr(m, n, [&] { return u(rng); });
  p.b = Eigen::VectorXd::NullaryExpr(m, [&] { return 2.0 * u(rng); });
  p.weight = Eigen::VectorXd::NullaryExpr(n, [&] { return 0.2 + std::abs(u(rng)); });
  p.lo.resize(n);
  p.hi.resize(n);
  for (int j = 0; j < n; ++j) {
    // Mostly boxes about 0, some that exclude it (a joint that must keep moving).
    const double x = 0.5 * u(rng), y = 0.5 * u(rng) + (j % 4 == 3 ? 0.6 : 0.0);
    p.lo[j] = std::min(x, y) - 0.05;
    p.hi[j] = std::max(x, y);
  }
  const Eigen::MatrixXd scaled = p.a * p.weight.cwiseInverse().asDiagonal();
  p.mu = damping * (scaled * p.a.transpose()).trace() / m;
  return p;
}

// 300 random problems (1-4 rows, 2-7 variables): the answer lies in the box and its cost is
// the brute-force optimum's.
TEST(BoxedLeastSquaresTest, MatchesTheBruteForceOptimum) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int m = 1 + trial % 4, n = 2 + trial % 6;
    const double damping = trial % 2 == 0 ? 1e-6 : 1e-2;
    const Problem p = RandomProblem(rng, m, n, damping);
    const Eigen::VectorXd d = BoxedLeastSquares(p.a, p.b, p.weight, p.lo, p.hi, p.mu);
    for (int j = 0; j < n; ++j) {
      ASSERT_GE(d[j], p.lo[j]) << "trial " << trial << " variable " << j;
      ASSERT_LE(d[j], p.hi[j]) << "trial " << trial << " variable " << j;
    }
    const Eigen::VectorXd best = BruteForce(p);
    ASSERT_EQ(best.size(), n) << "trial " << trial;
    EXPECT_NEAR(Objective(p, d), Objective(p, best), 1e-9 * (1.0 + Objective(p, best)))
        << "trial " << trial << " m " << m << " n " << n;
  }
}

// With room to move, a tiny damping and more variables than rows, the target is met exactly
// and the motion is the weighted least-norm one: the heavy variable moves least.
TEST(BoxedLeastSquaresTest, InsideTheBoxItIsTheWeightedLeastNormSolution) {
  Eigen::MatrixXd a(1, 2);
  a << 1.0, 1.0;
  const Eigen::VectorXd b = Eigen::VectorXd::Constant(1, 0.3);
  Eigen::VectorXd weight(2);
  weight << 1.0, 4.0;  // least norm: d = W^-1 a' (a W^-1 a')^-1 b = (0.24, 0.06)
  const Eigen::VectorXd wide = Eigen::VectorXd::Constant(2, 10.0);
  const Eigen::VectorXd d = BoxedLeastSquares(a, b, weight, -wide, wide, 1e-12);
  EXPECT_NEAR(d[0], 0.24, 1e-9);
  EXPECT_NEAR(d[1], 0.06, 1e-9);
  // The light variable boxed at 0.1: the heavy one makes up the rest.
  Eigen::VectorXd hi = wide;
  hi[0] = 0.1;
  const Eigen::VectorXd boxed = BoxedLeastSquares(a, b, weight, -wide, hi, 1e-12);
  EXPECT_DOUBLE_EQ(boxed[0], 0.1);
  EXPECT_NEAR(boxed[1], 0.2, 1e-9);
}

}  // namespace
}  // namespace ikd::planning
