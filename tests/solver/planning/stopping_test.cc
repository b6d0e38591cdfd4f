// Room to brake (planning/stopping.h) against the test's own count of a braking joint's steps:
// a point on a rail at x = q, moving at v towards a wall, braked at a_max in steps of dt.
#include "ikd/planning/stopping.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace ikd::planning {
namespace {

constexpr double kDt = 0.01;

// A point (a capsule of no length, radius 0) at (q[0], 0, 0); it moves exactly as far as its
// joint, so the travel bound is the travel. Counts the configurations evaluated.
class Rail : public ArmBody {
 public:
  int num_joints() const override { return 1; }
  int num_links() const override { return 1; }
  void Links(const Eigen::VectorXd& q, std::vector<Capsule>* links) const override {
    ++evaluations;
    const Eigen::Vector3d x(q[0], 0.0, 0.0);
    links->assign(1, {x, x, 0.0});
  }
  void SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   Eigen::VectorXd* bounds) const override {
    bounds->setConstant(1, std::abs(b[0] - a[0]));
  }
  void TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const override {
    bounds->setConstant(1, travel.sum());
  }
  mutable int evaluations = 0;
};

// A lever on the rail's joint: link 0 a point at (q[0] / 10, 0, 0) beside the wall, link 1 a
// point at (0, 10 + q[0], 0) far from it, moving ten times as fast.
class Lever : public ArmBody {
 public:
  int num_joints() const override { return 1; }
  int num_links() const override { return 2; }
  void Links(const Eigen::VectorXd& q, std::vector<Capsule>* links) const override {
    ++evaluations;
    const Eigen::Vector3d near(0.1 * q[0], 0.0, 0.0), far(0.0, 10.0 + q[0], 0.0);
    *links = {{near, near, 0.0}, {far, far, 0.0}};
  }
  void SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   Eigen::VectorXd* bounds) const override {
    TravelBounds((b - a).cwiseAbs(), bounds);
  }
  void TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const override {
    *bounds = Eigen::Vector2d(0.1 * travel.sum(), travel.sum());
  }
  mutable int evaluations = 0;
};

// How far a joint at v brakes at a_max in steps of dt: v - a dt, v - 2 a dt, ... while
// positive, each for dt (the test's own sum).
double StopDistance(double v, double a) {
  double distance = 0.0;
  for (double u = v - a * kDt; u > 0.0; u -= a * kDt) distance += u * kDt;
  return distance;
}

Eigen::VectorXd One(double x) { return Eigen::VectorXd::Constant(1, x); }

// A ball of radius 0.1 whose surface is `gap` ahead of the point at the origin.
Scene WallAt(double gap) {
  return *Scene::Create({{"ball", Sphere{Eigen::Vector3d(gap + 0.1, 0.0, 0.0), 0.1}}});
}

TEST(CanStopClearTest, ClearExactlyWhenTheStopEndsShortOfTheWall) {
  const JointRateWindow window({JointRate{10.0, 20.0, std::nullopt}});
  for (const double v : {0.35, 1.0, 2.9}) {
    const double stop = StopDistance(v, 20.0);
    for (const double slack : {-1e-4, 1e-4}) {
      const Rail rail;
      const Scene wall = WallAt(stop + slack);
      EXPECT_EQ(CanStopClear(window, rail, &wall, One(0.0), One(v), kDt, stop + slack), slack > 0)
          << "v " << v << " stop " << stop << " slack " << slack;
    }
  }
}

TEST(CanStopClearTest, FarFromEverythingNothingIsEvaluated) {
  // A stop of 0.2 m (v 2.9, a_max 20) against a clearance of 1 m: the travel bound settles it.
  const JointRateWindow window({JointRate{10.0, 20.0, std::nullopt}});
  const Rail rail;
  const Scene wall = WallAt(1.0);
  EXPECT_TRUE(CanStopClear(window, rail, &wall, One(0.0), One(2.9), kDt, 1.0));
  EXPECT_EQ(rail.evaluations, 0);
}

TEST(CanStopClearTest, EachLinkAgainstItsOwnBoundFromOneConfiguration) {
  // A stop of 0.196 m (v 2.9, a_max 20): the lever's near end moves 0.0196 m of it, the far end
  // all of it, far beyond the near end's clearance, so the whole-body bound cannot settle it.
  const JointRateWindow window({JointRate{10.0, 20.0, std::nullopt}});
  const double near_stop = 0.1 * StopDistance(2.9, 20.0);
  {
    const Lever lever;
    const Scene wall = WallAt(0.03);
    EXPECT_TRUE(CanStopClear(window, lever, &wall, One(0.0), One(2.9), kDt, 0.03));
    EXPECT_EQ(lever.evaluations, 1);  // q alone
  }
  for (const double slack : {-1e-4, 1e-4}) {
    const Lever lever;
    const Scene wall = WallAt(near_stop + slack);
    EXPECT_EQ(CanStopClear(window, lever, &wall, One(0.0), One(2.9), kDt, near_stop + slack),
              slack > 0)
        << "slack " << slack;
  }
}

TEST(CanStopClearTest, AtRestOrWithoutAnAccelerationLimitItStopsWhereItIs) {
  const Rail rail;
  const Scene wall = WallAt(1e-3);
  const JointRateWindow braking({JointRate{10.0, 20.0, std::nullopt}});
  EXPECT_TRUE(CanStopClear(braking, rail, &wall, One(0.0), One(0.0), kDt, 1e-3));
  const JointRateWindow instant(
      {JointRate{10.0, std::numeric_limits<double>::infinity(), std::nullopt}});
  EXPECT_TRUE(CanStopClear(instant, rail, &wall, One(0.0), One(5.0), kDt, 1e-3));
}

TEST(CanStopClearTest, AStateAlreadyTouchingCannotStopClear) {
  const JointRateWindow window({JointRate{10.0, 20.0, std::nullopt}});
  const Rail rail;
  const Scene wall = WallAt(-1e-3);
  EXPECT_FALSE(CanStopClear(window, rail, &wall, One(0.0), One(0.0), kDt, -1e-3));
}

TEST(CanStopClearTest, AStopLongerThanTheBudgetIsNotClear) {
  // 100 rad/s at 1 rad/s^2 takes 10,000 steps of 10 ms.
  const JointRateWindow window({JointRate{1e3, 1.0, std::nullopt}});
  const Rail rail;
  EXPECT_FALSE(CanStopClear(window, rail, nullptr, One(0.0), One(100.0), kDt, 1e9, 100));
}

// A tracker's answer on the rail: the test's own clearance of the point at q[0] from the wall
// of WallAt(gap) (the ball's surface at x = gap, its far side at gap + 0.2).
struct RailStep {
  double min_clearance = 0.0;
  StepStatus status = StepStatus::kReached;
};
double RailClearance(double x, double gap) { return std::abs(x - (gap + 0.1)) - 0.1; }
RailStep RailAnswer(double x, double gap) { return {RailClearance(x, gap), StepStatus::kReached}; }

TEST(HoldIfUnsafeTest, WithoutLimitsAnAnswerThroughTheWallIsHeldClear) {
  // The last answer at 0, 0.06 m from the wall; the answer at 0.4 lies beyond the ball, clear,
  // but its motion passes through it: the boldest clear blend whose motion is clear is 1/8 of
  // the way (0.05 m).
  constexpr double kGap = 0.06;
  JointRateWindow window({JointRate{}});
  window.Answer(One(0.0), One(0.0), kDt);
  const Rail rail;
  const Scene wall = WallAt(kGap);
  RailStep step = RailAnswer(0.4, kGap);
  ASSERT_GT(step.min_clearance, 0.0);
  Eigen::VectorXd q = One(0.4), v = One(0.4 / kDt);
  const SafetyHold hold = HoldIfUnsafe(window, rail, &wall, /*rate_limited=*/false, kDt, kGap, step,
                                       q, v, [&](const Eigen::VectorXd& at, RailStep& held) {
                                         held = RailAnswer(at[0], kGap);
                                         return true;
                                       });
  EXPECT_EQ(hold, SafetyHold::kClear);
  EXPECT_DOUBLE_EQ(q[0], 0.05);
  EXPECT_DOUBLE_EQ(v[0], 0.05 / kDt);
  EXPECT_EQ(step.status, StepStatus::kInCollision);  // no clear way to the target was found
  EXPECT_NEAR(step.min_clearance, 0.01, 1e-12);      // the motion's least: at its end
}

TEST(HoldIfUnsafeTest, WithLimitsAnAnswerThatCannotStopIsHeldForBraking) {
  // The last answer at 0 moving at 2 m/s stops at 0.09 m; the answer 2 cm on keeps the speed
  // and would stop at 0.11 m, past the wall at 0.097 m. The answer held must stop short of the
  // wall by the test's own count.
  constexpr double kAccel = 20.0;
  JointRateWindow window({JointRate{10.0, kAccel, std::nullopt}});
  window.Answer(One(0.0), One(2.0), kDt);
  const double gap = 0.097;
  ASSERT_LT(StopDistance(2.0, kAccel), gap);
  ASSERT_GT(0.02 + StopDistance(2.0, kAccel), gap);
  const Rail rail;
  const Scene wall = WallAt(gap);
  RailStep step = RailAnswer(0.02, gap);
  Eigen::VectorXd q = One(0.02), v = One(2.0);
  const SafetyHold hold = HoldIfUnsafe(window, rail, &wall, /*rate_limited=*/true, kDt, gap, step,
                                       q, v, [&](const Eigen::VectorXd& at, RailStep& held) {
                                         held = RailAnswer(at[0], gap);
                                         return true;
                                       });
  EXPECT_EQ(hold, SafetyHold::kBraking);
  EXPECT_EQ(step.status, StepStatus::kAccelerationLimited);
  EXPECT_LT(q[0], 0.02);
  EXPECT_DOUBLE_EQ(v[0], q[0] / kDt);
  EXPECT_LT(q[0] + StopDistance(v[0], kAccel), gap);
  EXPECT_NEAR(step.min_clearance, RailClearance(q[0], gap), 1e-12);
}

TEST(HoldIfUnsafeTest, AnAnswerThatCanStopClearIsLeftAsItIs) {
  constexpr double kAccel = 20.0;
  JointRateWindow window({JointRate{10.0, kAccel, std::nullopt}});
  window.Answer(One(0.0), One(2.0), kDt);
  const double gap = 0.02 + 2.0 * StopDistance(2.0, kAccel);
  const Rail rail;
  const Scene wall = WallAt(gap);
  RailStep step = RailAnswer(0.02, gap);
  Eigen::VectorXd q = One(0.02), v = One(2.0);
  int rebuilds = 0;
  for (const bool rate_limited : {true, false}) {
    EXPECT_EQ(HoldIfUnsafe(window, rail, &wall, rate_limited, kDt, gap, step, q, v,
                           [&](const Eigen::VectorXd&, RailStep&) { return ++rebuilds > 0; }),
              SafetyHold::kNone);
  }
  EXPECT_EQ(rebuilds, 0);
  EXPECT_EQ(q[0], 0.02);
  EXPECT_EQ(v[0], 2.0);
  EXPECT_EQ(step.status, StepStatus::kReached);
  EXPECT_NEAR(step.min_clearance, RailClearance(0.02, gap), 1e-12);
}

TEST(AnswerLateTest, TheBrakedStateIsLateWithItsMotionsClearanceAndBecomesTheLastAnswer) {
  constexpr double kAccel = 20.0;
  for (const double gap : {0.5, 0.01}) {  // the braked motion clear of the wall, and into it
    JointRateWindow window({JointRate{10.0, kAccel, std::nullopt}});
    window.Answer(One(0.0), One(2.0), kDt);
    const Eigen::VectorXd q = window.Braked(kDt);
    EXPECT_NEAR(q[0], (2.0 - kAccel * kDt) * kDt, 1e-15);  // the test's own braking step
    const Rail rail;
    const Scene wall = WallAt(gap);
    RailStep step = RailAnswer(q[0], gap);
    AnswerLate(window, rail, &wall, q, kDt, /*moving=*/true, step);
    const double least = std::min(RailClearance(0.0, gap), RailClearance(q[0], gap));
    EXPECT_EQ(step.status, least < 0.0 ? StepStatus::kInCollision : StepStatus::kLate)
        << "gap " << gap;
    EXPECT_NEAR(step.min_clearance, least, 1e-12);
    EXPECT_EQ(window.q()[0], q[0]);
    EXPECT_NEAR(window.Braked(kDt)[0], q[0] + (1.8 - kAccel * kDt) * kDt, 1e-15);
  }
}

TEST(LastAnswerTest, RecordKeepsTheAnswerAndLeavesLaggingToTheTracker) {
  LastAnswer<double> last;
  EXPECT_FALSE(last.answered);
  EXPECT_FALSE(last.target.has_value());
  last.lagging = true;
  last.Record(0.25, 1.5, -0.01);
  EXPECT_TRUE(last.answered);
  ASSERT_TRUE(last.target.has_value());
  EXPECT_EQ(*last.target, 0.25);
  EXPECT_EQ(last.time, 1.5);
  EXPECT_EQ(last.clearance, -0.01);
  EXPECT_TRUE(last.lagging);  // each answer's own branch decides it
  last.Record(0.5, 2.0, 0.02);
  EXPECT_EQ(*last.target, 0.5);
  EXPECT_EQ(last.time, 2.0);
  EXPECT_EQ(last.clearance, 0.02);
}

}  // namespace
}  // namespace ikd::planning
