// A sampled path's rates against the limits (planning/path_rates.h), on motions whose velocity
// and acceleration are known in closed form: uniform motion (v constant, a = 0) and uniform
// acceleration (a constant; the central difference on uneven times is exact for a parabola).
#include "ikd/planning/path_rates.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace ikd::planning {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(PathRatesTest, UniformMotionAtTwiceTheSpeedLimit) {
  // q = 2 t rad on joint 0 (limit 1 rad/s), joint 1 still; times uneven.
  const std::vector<double> times{0.0, 0.1, 0.25, 0.3, 0.5};
  Eigen::MatrixXd q(5, 2);
  for (int k = 0; k < 5; ++k) q.row(k) << 2.0 * times[k], 0.7;
  const PathRates rates = RatesOfPath(q, times, Eigen::Vector2d(1.0, 1.0),
                                      Eigen::Vector2d(kInf, kInf), Eigen::Vector2d(kInf, kInf));
  EXPECT_EQ(rates.velocity_ratio[0], 0.0);
  for (int k = 1; k < 5; ++k) {
    EXPECT_NEAR(rates.velocity_ratio[k], 2.0, 1e-12) << k;
    EXPECT_TRUE(rates.VelocityOver(k));
    EXPECT_NEAR(rates.acceleration_ratio[k], 0.0, 1e-9) << k;
  }
  EXPECT_NEAR(rates.FeasibleTimeScaling(), 2.0, 1e-12);
}

TEST(PathRatesTest, UniformAccelerationIsExactOnUnevenTimes) {
  // q = a t^2 / 2 with a = 3 rad/s^2 against a limit of 1.5: ratio 2 at every interior sample,
  // 0 at the ends (no second difference there); the time scaling sqrt(2) restores it.
  const std::vector<double> times{0.0, 0.05, 0.2, 0.26, 0.4, 0.41};
  Eigen::MatrixXd q(6, 1);
  for (int k = 0; k < 6; ++k) q(k, 0) = 1.5 * times[k] * times[k];
  const PathRates rates =
      RatesOfPath(q, times, Eigen::VectorXd::Constant(1, kInf), Eigen::VectorXd::Constant(1, 1.5),
                  Eigen::VectorXd::Constant(1, kInf));
  EXPECT_EQ(rates.acceleration_ratio[0], 0.0);
  EXPECT_EQ(rates.acceleration_ratio[5], 0.0);
  for (int k = 1; k < 5; ++k) {
    EXPECT_NEAR(rates.acceleration_ratio[k], 2.0, 1e-9) << k;
    EXPECT_TRUE(rates.AccelerationOver(k));
    EXPECT_FALSE(rates.VelocityOver(k));
  }
  EXPECT_NEAR(rates.FeasibleTimeScaling(), std::sqrt(2.0), 1e-9);
}

TEST(PathRatesTest, JerkOfACubicIsItsThirdDerivative) {
  // q = 0.5 t^3: jerk 3 rad/s^3 everywhere; the central differences are exact on a cubic at a
  // uniform step, so against a limit of 1.5 every sample with both accelerations is at 2x and
  // the timing must stretch by cbrt(2). The ends (k < 2, the last) have no jerk.
  constexpr int n = 8;
  std::vector<double> times(n);
  Eigen::MatrixXd q(n, 1);
  for (int k = 0; k < n; ++k) {
    times[k] = 0.1 * k;
    q(k, 0) = 0.5 * std::pow(times[k], 3);
  }
  const PathRates rates =
      RatesOfPath(q, times, Eigen::VectorXd::Constant(1, kInf), Eigen::VectorXd::Constant(1, kInf),
                  Eigen::VectorXd::Constant(1, 1.5));
  for (int k = 0; k < n; ++k) {
    const bool defined = k >= 2 && k + 1 < n;
    EXPECT_NEAR(rates.jerk_ratio[k], defined ? 2.0 : 0.0, 1e-6) << k;
    EXPECT_EQ(rates.JerkOver(k), defined) << k;
  }
  EXPECT_NEAR(rates.FeasibleTimeScaling(), std::cbrt(2.0), 1e-6);
}

TEST(PathRatesTest, AtTheLimitIsNotOver) {
  // v exactly at its limit, and within the rounding slack above it, is within.
  const std::vector<double> times{0.0, 0.5};
  Eigen::MatrixXd q(2, 1);
  q << 0.0, 0.5 * (1.0 + 1e-12);
  const PathRates rates =
      RatesOfPath(q, times, Eigen::VectorXd::Constant(1, 1.0), Eigen::VectorXd::Constant(1, kInf),
                  Eigen::VectorXd::Constant(1, kInf));
  EXPECT_FALSE(rates.VelocityOver(1));
}

TEST(PathRatesTest, SinglesAndEmptyPathsHaveNoRates) {
  const PathRates one = RatesOfPath(Eigen::MatrixXd::Zero(1, 3), {0.0}, Eigen::Vector3d::Ones(),
                                    Eigen::Vector3d::Ones(), Eigen::Vector3d::Ones());
  EXPECT_EQ(one.max_velocity_ratio, 0.0);
  EXPECT_EQ(one.max_acceleration_ratio, 0.0);
  EXPECT_EQ(one.FeasibleTimeScaling(), 0.0);
}

TEST(PathRatesTest, AnotherStartWhereTheOverrunIsSmallOrLocal) {
  EXPECT_FALSE(RatesWorthAnotherStart(0, 100, 1.0));    // nothing over
  EXPECT_TRUE(RatesWorthAnotherStart(90, 100, 2.9));    // over nearly everywhere, but by < 3x
  EXPECT_TRUE(RatesWorthAnotherStart(60, 100, 50.0));   // far over, on a stretch (<= 2/3)
  EXPECT_FALSE(RatesWorthAnotherStart(90, 100, 50.0));  // far over nearly everywhere
}

}  // namespace
}  // namespace ikd::planning
