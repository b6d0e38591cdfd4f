// mock_arm's declared-rate check (clients/mock_rates.h) on streams whose rates are known in
// closed form: a joint at constant jerk from rest, q = j t^3 / 6, has v = j t^2 / 2,
// a = j t and jerk j; its backward differences lag by O(dt) but the jerk is exact.
#include "mock_rates.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ikd::clients::mock {
namespace {

constexpr double kDt = 0.01;

// Feeds q(t) = jerk t^3 / 6 for `steps` states to a check with the given limits; true when a
// state was over.
bool FeedCubic(RateCheck& check, double jerk, int steps) {
  bool over = false;
  double previous = 0.0;
  for (int k = 0; k <= steps; ++k) {
    const double t = k * kDt;
    const double q = jerk * t * t * t / 6.0;
    over = check.Observe(t, Eigen::VectorXd::Constant(1, q - previous)) || over;
    previous = q;
  }
  return over;
}

TEST(MockRatesTest, ConstantJerkFromRestIsMeasuredExactly) {
  RateCheck check({DeclaredRate{10.0, 10.0, 50.0}});
  EXPECT_FALSE(FeedCubic(check, 40.0, 20));  // 0.2 s: v <= 0.8, a <= 8, jerk 40 in every step
  // The first difference sees the cubic's first step from rest: jerk j / 6 there, then j.
  EXPECT_NEAR(check.max_jerk_ratio(), 40.0 / 50.0, 1e-6);
  EXPECT_LE(check.max_acceleration_ratio(), 0.8);
}

TEST(MockRatesTest, EachLimitCanFail) {
  RateCheck jerk({DeclaredRate{10.0, 10.0, 30.0}});
  EXPECT_TRUE(FeedCubic(jerk, 40.0, 20));
  EXPECT_NEAR(jerk.max_jerk_ratio(), 40.0 / 30.0, 1e-6);
  RateCheck acceleration({DeclaredRate{10.0, 5.0, 1e9}});
  EXPECT_TRUE(FeedCubic(acceleration, 40.0, 20));  // a reaches 8 > 5
  RateCheck velocity({DeclaredRate{0.5, 1e9, 1e9}});
  EXPECT_TRUE(FeedCubic(velocity, 40.0, 20));  // v reaches 0.8 > 0.5
}

TEST(MockRatesTest, NothingDeclaredIsNeverOver) {
  RateCheck check({DeclaredRate{}});
  EXPECT_FALSE(FeedCubic(check, 1e6, 20));
  EXPECT_EQ(check.max_jerk_ratio(), 0.0);
}

}  // namespace
}  // namespace ikd::clients::mock
