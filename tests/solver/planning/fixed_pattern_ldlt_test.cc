// FixedPatternLdlt (planning/fixed_pattern_ldlt.h) against a dense solve of the same system
// assembled by the test: the first fill and later refills of one pattern with new values.
#include "ikd/planning/fixed_pattern_ldlt.h"

#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <Eigen/Dense>

namespace ikd::planning {
namespace {

// A KKT-shaped pattern: a tridiagonal SPD block of n unknowns with one constraint row (the
// sum of the unknowns), entries listed in a fixed order, repeated entries included (they add).
std::vector<std::tuple<int, int, double>> Entries(int n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<std::tuple<int, int, double>> entries;
  for (int i = 0; i < n; ++i) {
    entries.emplace_back(i, i, 4.0 + u(rng));
    entries.emplace_back(i, i, u(rng));  // a second term on the same diagonal
    if (i + 1 < n) {
      const double off = -u(rng);
      entries.emplace_back(i, i + 1, off);
      entries.emplace_back(i + 1, i, off);
    }
    entries.emplace_back(n, i, 1.0);
    entries.emplace_back(i, n, 1.0);
  }
  entries.emplace_back(n, n, -1e-9);
  return entries;
}

Eigen::MatrixXd Dense(int size, const std::vector<std::tuple<int, int, double>>& entries) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(size, size);
  for (const auto& [i, j, value] : entries) a(i, j) += value;
  return a;
}

TEST(FixedPatternLdltTest, EveryFillOfThePatternSolvesAsTheDenseSystem) {
  constexpr int kUnknowns = 12, kSize = kUnknowns + 1;
  std::mt19937 rng(7);
  FixedPatternLdlt system;
  for (int fill = 0; fill < 4; ++fill) {
    const auto entries = Entries(kUnknowns, rng);
    system.StartFill();
    for (const auto& [i, j, value] : entries) system.Add(i, j, value);
    ASSERT_TRUE(system.Factor(kSize)) << "fill " << fill;
    const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(kSize, -1.0, 2.0);
    const Eigen::VectorXd expected = Dense(kSize, entries).fullPivLu().solve(b);
    EXPECT_LT((system.Solve(b) - expected).cwiseAbs().maxCoeff(), 1e-10) << "fill " << fill;
  }
}

TEST(FixedPatternLdltTest, ASingularFillIsReported) {
  FixedPatternLdlt system;
  system.StartFill();
  system.Add(0, 0, 1.0);
  system.Add(1, 1, 1.0);
  ASSERT_TRUE(system.Factor(2));
  system.StartFill();
  system.Add(0, 0, 1.0);
  system.Add(1, 1, 0.0);  // the same pattern, now singular
  EXPECT_FALSE(system.Factor(2));
}

}  // namespace
}  // namespace ikd::planning
