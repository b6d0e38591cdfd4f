#include "ikd/ik/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

namespace ikd::ik {
namespace {

constexpr double kPi = std::numbers::pi;

Arm PlanarArm(int n, JointRateLimit limits) {
  ArmSpec spec;
  for (int k = 0; k < n; ++k) spec.limbs.push_back({1.4 / n, 0.01});
  spec.default_rate_limit = limits;
  return *Arm::Create(spec);
}

// The test's own planar joint angles: limb 0's direction, then signed turns between limbs.
std::vector<double> Angles(const Eigen::Matrix3Xd& sites) {
  std::vector<double> q;
  double heading = 0.0;
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    const Eigen::Vector3d d = sites.col(k + 1) - sites.col(k);
    const double absolute = std::atan2(d.y(), d.x());
    q.push_back(k == 0 ? absolute : std::remainder(absolute - heading, 2 * kPi));
    heading = absolute;
  }
  return q;
}

// A target 0.5 m away in one 10 ms step at 1 rad/s and 20 rad/s^2: every answer moves each
// joint by at most v_max dt and changes its velocity by at most a_max dt (measured here from
// the sites), keeps exact limb lengths, says it is limited while the hand lags, and reaches
// the target once the limits allow, without swinging past it.
TEST(RateLimitedTrackerTest, AnswersKeepTheServoLimitsAndCatchUp) {
  const double v_max = 1.0, a_max = 20.0, dt = 0.01;
  const Arm arm = PlanarArm(5, {v_max, a_max});
  auto tracker = RateLimitedTracker::Create(arm, nullptr, IkOptions{});
  ASSERT_TRUE(tracker.ok()) << tracker.status();
  const Eigen::Vector3d start = arm.HomeSites().col(arm.hand());
  ASSERT_TRUE(tracker->StepTo(start, 0.0).ok());
  const Eigen::Vector3d goal = start + Eigen::Vector3d(-0.3, 0.4, 0.0);
  std::vector<double> q = Angles(tracker->sites()), v(q.size(), 0.0);
  int limited = 0;
  bool reached = false;
  double overshoot = 0.0;  // m past the goal along the way
  for (int k = 1; k <= 400 && !reached; ++k) {
    auto step = tracker->StepTo(goal, k * dt);
    ASSERT_TRUE(step.ok()) << step.status();
    const std::vector<double> now = Angles(step->sites);
    for (size_t j = 0; j < q.size(); ++j) {
      const double velocity = std::remainder(now[j] - q[j], 2 * kPi) / dt;
      EXPECT_LE(std::abs(velocity), v_max * (1 + 1e-9)) << "joint " << j << " at step " << k;
      EXPECT_LE(std::abs(velocity - v[j]), a_max * dt * (1 + 1e-9) + 1e-9) << "joint " << j;
      v[j] = velocity;
    }
    q = now;
    for (int l = 0; l < arm.num_limbs(); ++l) {
      EXPECT_NEAR((step->sites.col(l + 1) - step->sites.col(l)).norm(), 1.4 / 5, 1e-9);
    }
    const double lag = (step->sites.col(arm.hand()) - goal).norm();
    const Eigen::Vector3d along = (goal - start).normalized();
    overshoot = std::max(overshoot, (step->sites.col(arm.hand()) - goal).dot(along));
    if (step->status == StepStatus::kReached) {
      EXPECT_LT(lag, 1e-9);
      reached = true;
    } else {
      EXPECT_TRUE(step->status == StepStatus::kVelocityLimited ||
                  step->status == StepStatus::kAccelerationLimited);
      EXPECT_NEAR(step->hand_error, lag, 1e-12);
      ++limited;
    }
  }
  EXPECT_TRUE(reached);
  EXPECT_GT(limited, 10);
  // The joints brake for the target as for a position limit: the hand arrives without swinging
  // past (2.1 cm past and back without the braking).
  EXPECT_LE(overshoot, 0.005);
}

// Without declared limits the limiter is the tracker itself, bit for bit.
TEST(RateLimitedTrackerTest, NoLimitsNoChange) {
  const Arm arm = PlanarArm(5, {});
  auto limited = RateLimitedTracker::Create(arm, nullptr, IkOptions{});
  auto plain = ArmTracker::Create(arm, nullptr, IkOptions{});
  ASSERT_TRUE(limited.ok() && plain.ok());
  const Eigen::Vector3d start = arm.HomeSites().col(arm.hand());
  for (int k = 0; k < 50; ++k) {
    const Eigen::Vector3d target = start + Eigen::Vector3d(-0.01 * k, 0.008 * k, 0.0);
    auto a = limited->StepTo(target, 0.01 * k);
    auto b = plain->StepTo(target, 0.01 * k);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(0, std::memcmp(a->sites.data(), b->sites.data(), sizeof(double) * a->sites.size()));
    EXPECT_EQ(a->status, b->status);
  }
}

}  // namespace
}  // namespace ikd::ik
