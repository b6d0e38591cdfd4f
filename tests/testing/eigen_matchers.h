// Test helpers: compare Eigen matrices with a tolerance and say where they differ.
#pragma once

#include <string>

#include <Eigen/Core>
#include <gtest/gtest.h>

namespace ikd::testing {

template <typename A, typename B>
::testing::AssertionResult CompareMatrices(const Eigen::MatrixBase<A>& a,
                                           const Eigen::MatrixBase<B>& b, double tolerance) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    return ::testing::AssertionFailure() << "shapes differ: " << a.rows() << "x" << a.cols()
                                         << " vs " << b.rows() << "x" << b.cols();
  }
  for (Eigen::Index c = 0; c < a.cols(); ++c) {
    for (Eigen::Index r = 0; r < a.rows(); ++r) {
      const double diff = std::abs(a(r, c) - b(r, c));
      if (!(diff <= tolerance)) {
        return ::testing::AssertionFailure()
               << "entry (" << r << ", " << c << "): " << a(r, c) << " vs " << b(r, c)
               << " differ by " << diff << " > " << tolerance;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ikd::testing
