#include "ikd/ik/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
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

// Step k's joint velocities (the test's own angles of `sites` against `q`, the previous
// answer's) within v_max, and their change from `v` within a_max dt; q and v move on to them.
void ExpectWithinRateLimits(const Eigen::Matrix3Xd& sites, double v_max, double a_max, double dt,
                            int k, std::vector<double>& q, std::vector<double>& v) {
  const std::vector<double> now = Angles(sites);
  for (size_t j = 0; j < q.size(); ++j) {
    const double velocity = std::remainder(now[j] - q[j], 2 * kPi) / dt;
    EXPECT_LE(std::abs(velocity), v_max * (1 + 1e-9)) << "joint " << j << " at step " << k;
    EXPECT_LE(std::abs(velocity - v[j]), a_max * dt * (1 + 1e-9) + 1e-9) << "joint " << j;
    v[j] = velocity;
  }
  q = now;
}

// Least distance between two segments, sampled finely along one (the test's own geometry,
// exact to ~1e-4 m at these lengths).
double SegmentDistance(const Eigen::Vector3d& a0, const Eigen::Vector3d& a1,
                       const Eigen::Vector3d& b0, const Eigen::Vector3d& b1) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= 400; ++i) {
    const Eigen::Vector3d x = a0 + (a1 - a0) * (i / 400.0);
    const Eigen::Vector3d ab = b1 - b0;
    const double u = std::clamp((x - b0).dot(ab) / ab.squaredNorm(), 0.0, 1.0);
    best = std::min(best, (x - b0 - u * ab).norm());
  }
  return best;
}

// Least clearance between non-adjacent limbs of radius r.
double SelfClearance(const Eigen::Matrix3Xd& sites, double r) {
  double least = std::numeric_limits<double>::infinity();
  for (int i = 0; i + 1 < sites.cols(); ++i) {
    for (int j = i + 2; j + 1 < sites.cols(); ++j) {
      least = std::min(
          least,
          SegmentDistance(sites.col(i), sites.col(i + 1), sites.col(j), sites.col(j + 1)) - 2 * r);
    }
  }
  return least;
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
    ExpectWithinRateLimits(step->sites, v_max, a_max, dt, k, q, v);
    for (int l = 0; l < arm.num_limbs(); ++l) {
      EXPECT_NEAR((step->sites.col(l + 1) - step->sites.col(l)).norm(), 1.4 / 5, 1e-9);
    }
    const double lag = (step->sites.col(arm.hand()) - goal).norm();
    const Eigen::Vector3d along = (goal - start).normalized();
    overshoot = std::max(overshoot, (step->sites.col(arm.hand()) - goal).dot(along));
    if (step->status == planning::StepStatus::kReached) {
      EXPECT_LT(lag, 1e-9);
      reached = true;
    } else {
      EXPECT_TRUE(step->status == planning::StepStatus::kVelocityLimited ||
                  step->status == planning::StepStatus::kAccelerationLimited);
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

// Jerk-limited servos: the same 0.5 m jump at 1 rad/s, 20 rad/s^2 and 400 rad/s^3 (the
// acceleration may change by 4 rad/s^2 an answer). Measured from the sites with the test's own
// angles and differences (v, a, jerk = (a_k - a_{k-1}) / dt), every answer keeps all three
// limits, and the hand still arrives without swinging past. The same run without the jerk
// limit jumps its acceleration by up to 2 a_max in one answer (the check can fail).
struct JerkRun {
  double jerk = 0.0, acceleration = 0.0, speed = 0.0, overshoot = 0.0;
  bool reached = false;
};

JerkRun RunJump(const JointRateLimit& limits, double dt) {
  const Arm arm = PlanarArm(5, limits);
  auto tracker = RateLimitedTracker::Create(arm, nullptr, IkOptions{});
  EXPECT_TRUE(tracker.ok()) << tracker.status();
  const Eigen::Vector3d start = arm.HomeSites().col(arm.hand());
  EXPECT_TRUE(tracker->StepTo(start, 0.0).ok());
  const Eigen::Vector3d goal = start + Eigen::Vector3d(-0.3, 0.4, 0.0);
  const Eigen::Vector3d along = (goal - start).normalized();
  std::vector<double> q = Angles(tracker->sites());
  std::vector<double> v(q.size(), 0.0), a(q.size(), 0.0);
  JerkRun run;
  for (int k = 1; k <= 600 && !run.reached; ++k) {
    auto step = tracker->StepTo(goal, k * dt);
    EXPECT_TRUE(step.ok()) << step.status();
    const std::vector<double> now = Angles(step->sites);
    for (size_t j = 0; j < q.size(); ++j) {
      const double velocity = std::remainder(now[j] - q[j], 2 * kPi) / dt;
      const double acceleration = (velocity - v[j]) / dt;
      run.speed = std::max(run.speed, std::abs(velocity));
      run.acceleration = std::max(run.acceleration, std::abs(acceleration));
      run.jerk = std::max(run.jerk, std::abs(acceleration - a[j]) / dt);
      v[j] = velocity;
      a[j] = acceleration;
    }
    q = now;
    run.overshoot = std::max(run.overshoot, (step->sites.col(arm.hand()) - goal).dot(along));
    run.reached = step->status == planning::StepStatus::kReached;
  }
  return run;
}

TEST(RateLimitedTrackerTest, JerkLimitedAnswersKeepEveryLimitAndArrive) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double dt = 0.01;
  const JerkRun limited = RunJump({1.0, 20.0, 400.0}, dt);
  EXPECT_TRUE(limited.reached);
  EXPECT_LE(limited.speed, 1.0 * (1 + 1e-9));
  EXPECT_LE(limited.acceleration, 20.0 * (1 + 1e-6));
  EXPECT_LE(limited.jerk, 400.0 * (1 + 1e-6));
  EXPECT_LE(limited.overshoot, 0.005);
  const JerkRun unlimited = RunJump({1.0, 20.0, kInf}, dt);
  EXPECT_GT(unlimited.jerk, 1000.0);
}

// A spatial arm whose hand passes over its base near full stretch (1.1 m of 1.2): the tracker's
// own way straightens the arm, where azimuths are undefined and flip by pi in one answer
// (without the band: a bend of 0.002 rad, and limb 0's azimuth, atan2 of its direction here,
// over its limits at step 192). Under Track's limits every bend stays out of the straight band
// (0.2 rad, measured here as the angle between consecutive limb directions, limb 0's against
// the base's z axis), so limb 0's azimuth keeps its velocity and acceleration limits, and the
// hand still follows.
TEST(RateLimitedTrackerTest, SpatialBendsStayOutOfTheStraightBand) {
  const double v_max = 3.0, a_max = 60.0, dt = 0.01;
  ArmSpec spec;
  spec.planar = false;
  for (int k = 0; k < 3; ++k) spec.limbs.push_back({0.4, 0.01});
  spec.default_rate_limit = {v_max, a_max};
  const Arm arm = *Arm::Create(spec);
  auto tracker = RateLimitedTracker::Create(arm, nullptr, IkOptions{});
  ASSERT_TRUE(tracker.ok()) << tracker.status();
  auto hand_at = [](double t) { return Eigen::Vector3d(0.4 - 0.4 * t, 0.01, 1.1); };
  double azimuth = 0.0, velocity = 0.0, least_bend = kPi, worst_lag = 0.0;
  for (int k = 0; k <= 200; ++k) {
    auto step = tracker->StepTo(hand_at(k * dt), k * dt);
    ASSERT_TRUE(step.ok()) << step.status();
    const Eigen::Vector3d d0 = (step->sites.col(1) - step->sites.col(0)).normalized();
    const double now = std::atan2(d0.y(), d0.x());
    if (k > 0) {
      least_bend = std::min(least_bend, std::acos(std::clamp(d0.z(), -1.0, 1.0)));
      for (int l = 1; l < arm.num_limbs(); ++l) {
        const Eigen::Vector3d a = (step->sites.col(l) - step->sites.col(l - 1)).normalized();
        const Eigen::Vector3d b = (step->sites.col(l + 1) - step->sites.col(l)).normalized();
        least_bend = std::min(least_bend, std::acos(std::clamp(a.dot(b), -1.0, 1.0)));
      }
      const double v = std::remainder(now - azimuth, 2 * kPi) / dt;
      EXPECT_LE(std::abs(v), v_max * (1 + 1e-9)) << "limb 0's azimuth at step " << k;
      if (k > 1) {
        EXPECT_LE(std::abs(v - velocity), a_max * dt * (1 + 1e-9)) << "step " << k;
      }
      velocity = v;
      worst_lag = std::max(worst_lag, (step->sites.col(arm.hand()) - hand_at(k * dt)).norm());
    }
    azimuth = now;
  }
  EXPECT_GE(least_bend, 0.2 - 1e-9);
  EXPECT_LT(worst_lag, 0.1);
}

// Two pillars (vertical capsules of radius 0.06 m) beside the circle, as in the quick start.
struct Pillar {
  Eigen::Vector3d a, b;
  double radius;
};
const std::vector<Pillar> kPillars = {{{0.55, 0.35, -0.6}, {0.55, 0.35, 0.6}, 0.06},
                                      {{0.55, -0.35, -0.6}, {0.55, -0.35, 0.6}, 0.06}};

// Least clearance of the limbs (radius r) to the pillars, the test's own segment distances.
double PillarClearance(const Eigen::Matrix3Xd& sites, double r) {
  double least = std::numeric_limits<double>::infinity();
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    for (const Pillar& p : kPillars) {
      least =
          std::min(least, SegmentDistance(sites.col(k), sites.col(k + 1), p.a, p.b) - r - p.radius);
    }
  }
  return least;
}

// The quick-start arm (7 limbs of 0.2 m) with a hobby servo (4 rad/s, 200 rad/s^2), its hand
// once round a circle of radius 0.3 m at 0.4 m/s, a target every 10 ms, in free space and
// beside two pillars: where the tracker's own way would move a joint too fast, the other
// joints make up the rest (the closest state within the limits, kept off the pillars), so the
// hand stays within 2 cm (free) and 3 cm (pillars) of the target (the tracker cut to its
// feasible fraction alone fell 0.43 m and 0.40 m behind), and every answer keeps the limits
// (measured here from the sites), the limb lengths, and the arm clear of itself and of the
// pillars (the test's own segment distances).
class CircleTrackTest : public ::testing::TestWithParam<bool> {};

TEST_P(CircleTrackTest, OtherJointsMakeUpForTheOneAtItsLimit) {
  const bool pillars = GetParam();
  const double v_max = 4.0, a_max = 200.0, dt = 0.01, speed = 0.4, radius = 0.3;
  ArmSpec spec;
  for (int k = 0; k < 7; ++k) spec.limbs.push_back({0.2, 0.02});
  const Arm free_arm = *Arm::Create(spec);
  spec.default_rate_limit = {v_max, a_max};
  const Arm arm = *Arm::Create(spec);
  std::vector<planning::Obstacle> obstacles;
  for (const Pillar& p : kPillars) {
    obstacles.push_back(
        {"pillar" + std::to_string(obstacles.size()), planning::Capsule{p.a, p.b, p.radius}});
  }
  const planning::Scene scene =
      *planning::Scene::Create(pillars ? obstacles : std::vector<planning::Obstacle>{});
  const Eigen::Vector3d centre(0.8, 0.0, 0.0);
  auto on_circle = [&](double t) {
    const double angle = speed * t / radius;
    return Eigen::Vector3d(centre + radius * Eigen::Vector3d(std::cos(angle), std::sin(angle), 0));
  };
  auto settle = ArmTracker::Create(free_arm, &scene, IkOptions{});
  ASSERT_TRUE(settle.ok());
  for (int k = 0; k < 200; ++k) ASSERT_TRUE(settle->StepTo(on_circle(0.0), k * dt).ok());
  auto tracker = RateLimitedTracker::Create(arm, &scene, IkOptions{}, settle->sites());
  ASSERT_TRUE(tracker.ok()) << tracker.status();
  std::vector<double> q = Angles(settle->sites()), v(q.size(), 0.0);
  double max_lag = 0.0;
  const int n = static_cast<int>(std::ceil(2 * kPi * radius / speed / dt));
  for (int k = 0; k <= n; ++k) {
    const Eigen::Vector3d target = on_circle(k * dt);
    auto step = tracker->StepTo(target, k * dt);
    ASSERT_TRUE(step.ok()) << step.status();
    max_lag = std::max(max_lag, (step->sites.col(arm.hand()) - target).norm());
    if (k > 0) {
      ExpectWithinRateLimits(step->sites, v_max, a_max, dt, k, q, v);
    } else {
      q = Angles(step->sites);  // the first answer starts from rest (not limited)
    }
    for (int l = 0; l < arm.num_limbs(); ++l) {
      EXPECT_NEAR((step->sites.col(l + 1) - step->sites.col(l)).norm(), 0.2, 1e-9);
    }
    EXPECT_GT(SelfClearance(step->sites, 0.02), 0.0) << "step " << k;
    if (pillars) {
      EXPECT_GT(PillarClearance(step->sites, 0.02), 0.0) << "step " << k;
    }
  }
  EXPECT_LE(max_lag, pillars ? 0.03 : 0.02);
}

INSTANTIATE_TEST_SUITE_P(FreeAndPillars, CircleTrackTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Pillars" : "Free"; });

// Two limbs of 0.5 m and radius 0.01 m in the plane at angles q (the test's own kinematics):
// their least clearance to a ball (the test's own distances).
double TwoLimbBallGap(const std::vector<double>& q, const Eigen::Vector3d& ball, double radius) {
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, 3);
  double heading = 0.0, least = std::numeric_limits<double>::infinity();
  for (int l = 0; l < 2; ++l) {
    heading += q[l];
    sites.col(l + 1) =
        sites.col(l) + 0.5 * Eigen::Vector3d(std::cos(heading), std::sin(heading), 0);
    least = std::min(least,
                     SegmentDistance(ball, ball, sites.col(l), sites.col(l + 1)) - 0.01 - radius);
  }
  return least;
}

// The least TwoLimbBallGap over the motion from angles q to the answer's `sites` (the test's
// own angles, continued across +-pi, interpolated linearly in 50 sub-steps); q moves on.
double LeastGapOverMotion(const Eigen::Matrix3Xd& sites, const Eigen::Vector3d& ball, double radius,
                          std::vector<double>& q) {
  std::vector<double> now = Angles(sites);
  for (size_t j = 0; j < now.size(); ++j) now[j] = q[j] + std::remainder(now[j] - q[j], 2 * kPi);
  double least = std::numeric_limits<double>::infinity();
  for (int s = 0; s <= 50; ++s) {
    std::vector<double> between(q.size());
    for (size_t j = 0; j < q.size(); ++j) between[j] = q[j] + (now[j] - q[j]) * s / 50.0;
    least = std::min(least, TwoLimbBallGap(between, ball, radius));
  }
  q = now;
  return least;
}

// A hand driven at 1 m/s at a ball whose target then stops dead 2.5 cm short of it: at 8 rad/s^2
// the arm cannot stop within 2.5 cm, so an arm that follows the target until it stops swings
// 2.6 cm into the ball (without the braking check). Every answer must leave room to brake, so
// the arm slows down early, and neither an answer nor the motion between two (the test's own
// forward kinematics of the linearly interpolated angles, 50 sub-steps, and its own segment
// distances) touches the ball; then it settles on the target.
TEST(RateLimitedTrackerTest, EveryAnswerLeavesRoomToBrakeBeforeAnObstacle) {
  const double v_max = 10.0, a_max = 8.0, dt = 0.01, limb_radius = 0.01, ball_radius = 0.05;
  ArmSpec spec;
  for (int k = 0; k < 2; ++k) spec.limbs.push_back({0.5, limb_radius});
  spec.default_rate_limit = {v_max, a_max};
  const Arm arm = *Arm::Create(spec);
  const Eigen::Vector3d stop(0.3, 0.6, 0.0);
  const Eigen::Vector3d ball = stop + Eigen::Vector3d(0.025 + limb_radius + ball_radius, 0, 0);
  const planning::Scene scene =
      *planning::Scene::Create({{"ball", planning::Sphere{ball, ball_radius}}});
  auto target_at = [&](double t) {  // 1 m/s along +x, then still
    return Eigen::Vector3d(std::min(stop.x(), -0.4 + t), stop.y(), 0.0);
  };
  auto settle = ArmTracker::Create(arm, &scene, IkOptions{});
  ASSERT_TRUE(settle.ok());
  for (int k = 0; k < 200; ++k) ASSERT_TRUE(settle->StepTo(target_at(0.0), k * dt).ok());
  auto tracker = RateLimitedTracker::Create(arm, &scene, IkOptions{}, settle->sites());
  ASSERT_TRUE(tracker.ok()) << tracker.status();
  std::vector<double> q = Angles(settle->sites());
  double least = std::numeric_limits<double>::infinity();
  planning::StepStatus last = planning::StepStatus::kReached;
  for (int k = 0; k <= 150; ++k) {
    auto step = tracker->StepTo(target_at(k * dt), k * dt);
    ASSERT_TRUE(step.ok()) << step.status();
    least = std::min(least, LeastGapOverMotion(step->sites, ball, ball_radius, q));
    last = step->status;
  }
  EXPECT_GT(least, 0.0);
  EXPECT_EQ(last, planning::StepStatus::kReached);
}

// Without declared limits a target inside a ball cannot be reached clear: the plain tracker
// puts the hand on it, inside the ball; Track holds the arm clear instead (the boldest clear
// blend of its last answer and that one, at worst the last answer), says IN_COLLISION, and
// follows again once the target is out. Every answer and every motion between two (the test's
// own kinematics and distances, 50 sub-steps) stays clear of the ball.
TEST(RateLimitedTrackerTest, WithoutLimitsATargetInsideAnObstacleIsHeldClear) {
  ArmSpec spec;
  for (int k = 0; k < 2; ++k) spec.limbs.push_back({0.5, 0.01});
  const Arm arm = *Arm::Create(spec);
  const Eigen::Vector3d ball(0.3, 0.6, 0.0);
  const double ball_radius = 0.05;
  const planning::Scene scene =
      *planning::Scene::Create({{"ball", planning::Sphere{ball, ball_radius}}});
  auto target_at = [&](int k) {  // out, into the ball's centre at k = 10..14, out again
    return k >= 10 && k < 15 ? ball : ball + Eigen::Vector3d(-0.2 + 0.002 * k, 0.0, 0.0);
  };
  auto settle = ArmTracker::Create(arm, &scene, IkOptions{});
  ASSERT_TRUE(settle.ok());
  for (int k = 0; k < 100; ++k) ASSERT_TRUE(settle->StepTo(target_at(0), k * 0.01).ok());
  auto tracker = RateLimitedTracker::Create(arm, &scene, IkOptions{}, settle->sites());
  ASSERT_TRUE(tracker.ok()) << tracker.status();
  std::vector<double> q = Angles(settle->sites());
  double least = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 30; ++k) {
    auto step = tracker->StepTo(target_at(k), k * 0.01);
    ASSERT_TRUE(step.ok()) << step.status();
    least = std::min(least, LeastGapOverMotion(step->sites, ball, ball_radius, q));
    if (k >= 10 && k < 15) {
      EXPECT_EQ(step->status, planning::StepStatus::kInCollision) << "step " << k;
    }
    if (k >= 20) {
      EXPECT_EQ(step->status, planning::StepStatus::kReached) << "step " << k;
    }
  }
  EXPECT_GE(least, 0.0);
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

// Track's LATE answer (Brake): the arm, moving at its limits towards a far goal, brakes for 8
// intervals: every answer LATE with exact limb lengths (the test's own distances), each joint's
// speed never growing and changing by at most a_max dt (the test's own angles), the arm at
// rest after v_max / (a_max dt) = 5 intervals; the stream then goes on from the braked arm
// within the limits again.
TEST(RateLimitedTrackerTest, BrakeSlowsTheArmToRestWithinItsLimits) {
  const double v_max = 1.0, a_max = 20.0, dt = 0.01;
  const Arm arm = PlanarArm(5, {v_max, a_max});
  auto tracker = RateLimitedTracker::Create(arm, nullptr, IkOptions{});
  ASSERT_TRUE(tracker.ok()) << tracker.status();
  const Eigen::Vector3d start = arm.HomeSites().col(arm.hand());
  ASSERT_TRUE(tracker->StepTo(start, 0.0).ok());
  const Eigen::Vector3d goal = start + Eigen::Vector3d(-0.3, 0.4, 0.0);
  std::vector<double> q = Angles(tracker->sites()), v(q.size(), 0.0);
  int k = 1;
  for (; k <= 10; ++k) {
    auto step = tracker->StepTo(goal, k * dt);
    ASSERT_TRUE(step.ok()) << step.status();
    ExpectWithinRateLimits(step->sites, v_max, a_max, dt, k, q, v);
  }
  double fastest = 0.0;
  for (const double speed : v) fastest = std::max(fastest, std::abs(speed));
  ASSERT_GT(fastest, 0.5 * v_max);  // moving: something to brake
  for (int brake = 1; brake <= 8; ++brake, ++k) {
    const std::vector<double> v_before = v;
    const IkResult step = tracker->Brake(goal, k * dt);
    EXPECT_EQ(step.status, planning::StepStatus::kLate) << brake;
    EXPECT_NEAR(step.hand_error, (step.sites.col(arm.hand()) - goal).norm(), 1e-12);
    for (int l = 0; l < arm.num_limbs(); ++l) {
      EXPECT_NEAR((step.sites.col(l + 1) - step.sites.col(l)).norm(), 1.4 / 5, 1e-9);
    }
    ExpectWithinRateLimits(step.sites, v_max, a_max, dt, k, q, v);
    for (size_t j = 0; j < v.size(); ++j) {
      EXPECT_LE(std::abs(v[j]), std::abs(v_before[j]) + 1e-9)
          << "joint " << j << " brake " << brake;
      if (brake >= 5) {
        EXPECT_NEAR(v[j], 0.0, 1e-9) << "joint " << j << " brake " << brake;
      }
    }
  }
  for (int resumed = 0; resumed < 20; ++resumed, ++k) {
    auto step = tracker->StepTo(goal, k * dt);
    ASSERT_TRUE(step.ok()) << step.status();
    ExpectWithinRateLimits(step->sites, v_max, a_max, dt, k, q, v);
  }
}

}  // namespace
}  // namespace ikd::ik
