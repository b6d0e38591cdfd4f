// The servo limits of a live stream (planning/joint_rates.h), checked by simulating a joint that
// always takes the fastest step the window allows and measuring its motion with the test's own
// finite differences: speed, acceleration, stopping before a position limit, arriving at a
// target without swinging past it.
#include "ikd/planning/joint_rates.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace ikd::planning {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDt = 0.01;

Eigen::VectorXd One(double x) { return Eigen::VectorXd::Constant(1, x); }

// A one-joint stream that wants to be at `goal` at every step (a jump there) and gets the
// feasible fraction of the way, clamped as the trackers clamp, kDt apart; `braked`: the goal
// is a target at rest it must arrive at. The test's own record of positions.
std::vector<double> Chase(JointRate rate, double q0, double goal, int steps, bool braked) {
  JointRateWindow window({rate});
  window.Answer(One(q0), One(0.0));
  std::vector<double> q{q0};
  for (int k = 0; k < steps; ++k) {
    if (braked) window.Approach(One(goal - q.back()), One(0.0));
    const double fraction = window.FeasibleFraction(kDt, One(goal));
    Eigen::VectorXd next = One(q.back() + fraction * (goal - q.back()));
    window.Clamp(kDt, next);
    window.Answer(next, One((next[0] - q.back()) / kDt));
    q.push_back(next[0]);
  }
  return q;
}

TEST(JointRateWindowTest, JointWithoutLimitsIsNeverHeldBack) {
  JointRateWindow window({JointRate{}});
  window.Answer(One(0.3), One(0.0));
  Eigen::VectorXd q = One(1e6);
  EXPECT_EQ(window.FeasibleFraction(kDt, q), 1.0);
  EXPECT_FALSE(window.Clamp(kDt, q));
  EXPECT_EQ(q[0], 1e6);
  EXPECT_FALSE(window.AtSpeedLimit(kDt, q));
  EXPECT_EQ(window.BrakingIntervals(kDt), 0.0);
}

TEST(JointRateWindowTest, TwiceTheSpeedLimitIsHalfTheWay) {
  // v_max 2 rad/s, no acceleration limit: a move of 4 rad/s is feasible for half its way, and
  // the clamp leaves it at exactly v_max dt.
  JointRateWindow window({JointRate{2.0, kInf, std::nullopt}});
  window.Answer(One(1.0), One(0.0));
  Eigen::VectorXd q = One(1.0 + 4.0 * kDt);
  EXPECT_NEAR(window.FeasibleFraction(kDt, q), 0.5, 1e-12);
  EXPECT_TRUE(window.Clamp(kDt, q));
  EXPECT_NEAR((q[0] - 1.0) / kDt, 2.0, 1e-12);
  EXPECT_TRUE(window.AtSpeedLimit(kDt, q));
}

TEST(JointRateWindowTest, StoppingDeadFasterThanItCanBrakeIsNoFraction) {
  // A joint at 0.85 rad/s with a_max 15 rad/s^2 cannot stop within 10 ms: a tracker that holds
  // its last answer (v = 0) asks for more than any fraction of its way gives (the fraction was
  // 0 / 0 and the hold passed as feasible: 85 rad/s^2 on the Panda).
  JointRateWindow window({JointRate{2.0, 15.0, std::nullopt}});
  window.Answer(One(0.3), One(-0.85));
  EXPECT_EQ(window.FeasibleFraction(kDt, One(0.3)), 0.0);
  EXPECT_EQ(planning::FeasibleFraction(0.0, {-1.0, -0.7}), 0.0);
  EXPECT_EQ(planning::FeasibleFraction(0.0, {0.2, 0.5}), 0.0);
  EXPECT_EQ(planning::FeasibleFraction(-2.0, {-1.0, 0.5}), 0.5);
}

TEST(JointRateWindowTest, AJointWithinItsLimitsKeepsItsValueToTheBit) {
  JointRateWindow window({JointRate{2.0, 50.0, std::make_pair(-1.0, 1.0)}});
  window.Answer(One(0.1), One(0.3));
  // 0.1 + 0.0031: q_ + ((q - q_) / dt) dt need not give back q; the clamp must not touch it.
  Eigen::VectorXd q = One(0.1 + 0.0031);
  const double before = q[0];
  EXPECT_FALSE(window.Clamp(kDt, q));
  EXPECT_EQ(q[0], before);
}

TEST(JointRateWindowTest, FromRestTheSpeedGrowsAtTheAccelerationLimit) {
  // a_max 50 rad/s^2 from rest towards a far goal: v_k = 50 k dt, and the steps' own
  // differences never exceed the limit.
  const std::vector<double> q = Chase({kInf, 50.0, std::nullopt}, 0.0, 100.0, 40, false);
  double v_last = 0.0;
  for (size_t k = 1; k < q.size(); ++k) {
    const double v = (q[k] - q[k - 1]) / kDt;
    EXPECT_LE(std::abs(v - v_last) / kDt, 50.0 * (1 + 1e-9)) << "step " << k;
    EXPECT_NEAR(v, 50.0 * k * kDt, 1e-9) << "step " << k;
    v_last = v;
  }
}

TEST(JointRateWindowTest, NeverPassesItsPositionLimit) {
  // Chasing a goal far beyond an upper limit 0.5 rad away, v_max 3, a_max 20: it stops at the
  // limit and never beyond it, never faster than v_max (the test's own differences).
  const std::vector<double> q = Chase({3.0, 20.0, std::make_pair(-1.0, 0.5)}, 0.0, 10.0, 200,
                                      false);
  for (size_t k = 1; k < q.size(); ++k) {
    EXPECT_LE(std::abs(q[k] - q[k - 1]) / kDt, 3.0 * (1 + 1e-9)) << "step " << k;
    EXPECT_LE(q[k], 0.5) << "step " << k;
  }
  EXPECT_EQ(q.back(), 0.5);  // it gets there
}

TEST(JointRateWindowTest, StopsAtItsPositionLimitWithinItsAcceleration) {
  // Full speed towards an upper limit 0.41 rad away, v_max 3, a_max 20: it brakes in time, so
  // that no step (the test's own differences) changes the speed by more than a_max dt, and
  // stops on the limit. The continuous rule v^2 <= 2 a_max d arrives one step too fast here
  // and is stopped by the position clamp at 2.4 times a_max.
  JointRateWindow window({JointRate{3.0, 20.0, std::make_pair(-1.0, 0.5)}});
  window.Answer(One(0.09), One(3.0));
  std::vector<double> q{0.09 - 3.0 * kDt, 0.09};
  for (int k = 0; k < 100; ++k) {
    const double fraction = window.FeasibleFraction(kDt, One(10.0));
    Eigen::VectorXd next = One(q.back() + fraction * (10.0 - q.back()));
    window.Clamp(kDt, next);
    window.Answer(next, One((next[0] - q.back()) / kDt));
    q.push_back(next[0]);
  }
  for (size_t k = 2; k < q.size(); ++k) {
    const double a = (q[k] - 2 * q[k - 1] + q[k - 2]) / (kDt * kDt);
    EXPECT_LE(std::abs(a), 20.0 * (1 + 1e-9)) << "step " << k;
    EXPECT_LE(q[k], 0.5) << "step " << k;
  }
  EXPECT_NEAR(q.back(), 0.5, 1e-12);
}

TEST(JointRateWindowTest, BrakedForAStillTargetItArrivesWithoutSwingingPast) {
  // A joint 1 rad behind a target at rest, a_max 10 rad/s^2: the braked range closes in no
  // faster than it can stop, so it passes the target by less than one step's braking
  // resolution (a dt^2 / 2 = 0.5 mrad) and settles on it, within a_max throughout.
  const std::vector<double> q = Chase({kInf, 10.0, std::nullopt}, 0.0, 1.0, 300, true);
  double top = 0.0, v_last = 0.0;
  for (size_t k = 1; k < q.size(); ++k) {
    const double v = (q[k] - q[k - 1]) / kDt;
    EXPECT_LE(std::abs(v - v_last) / kDt, 10.0 * (1 + 1e-9)) << "step " << k;
    top = std::max(top, q[k]);
    v_last = v;
  }
  EXPECT_LE(top, 1.0 + 10.0 * kDt * kDt / 2);
  EXPECT_NEAR(q.back(), 1.0, 1e-6);
}

TEST(JointRateWindowTest, StepBoxIsTheVelocityRangeTimesDtWithinThePositionRange) {
  JointRateWindow window(
      {JointRate{2.0, kInf, std::make_pair(-1.0, 0.01)}, JointRate{1.0, kInf, std::nullopt}});
  window.Answer(Eigen::Vector2d(0.0, 0.0), Eigen::Vector2d(0.0, 0.0));
  Eigen::VectorXd lo(2), hi(2);
  window.StepBox(kDt, lo, hi);
  EXPECT_DOUBLE_EQ(lo[0], -2.0 * kDt);
  EXPECT_DOUBLE_EQ(hi[0], 0.01);  // the position limit comes first
  EXPECT_DOUBLE_EQ(lo[1], -1.0 * kDt);
  EXPECT_DOUBLE_EQ(hi[1], 1.0 * kDt);
}

TEST(JointRateWindowTest, MotionWeightsAreTheSlowestOverTheirOwnSquared) {
  JointRateWindow window(
      {JointRate{1.0, kInf, std::nullopt}, JointRate{2.0, kInf, std::nullopt}, JointRate{}});
  const Eigen::VectorXd w = window.MotionWeights();
  EXPECT_DOUBLE_EQ(w[0], 1.0);
  EXPECT_DOUBLE_EQ(w[1], 0.25);
  EXPECT_DOUBLE_EQ(w[2], 1.0);  // unlimited: weight 1
}

TEST(JointRateWindowTest, BrakingIntervalsAreTheFastestJointsStopInSteps) {
  // |v| / (a dt): 3 rad/s at 100 rad/s^2 needs 3 intervals of 0.01 s; 1 rad/s at 10, 10.
  JointRateWindow window(
      {JointRate{kInf, 100.0, std::nullopt}, JointRate{kInf, 10.0, std::nullopt}});
  window.Answer(Eigen::Vector2d(0.0, 0.0), Eigen::Vector2d(-3.0, 1.0));
  EXPECT_DOUBLE_EQ(window.BrakingIntervals(kDt), 10.0);
}

// Braking (Track's LATE answer) by hand: a joint at 2 rad/s with 10 rad/s^2 keeps 1.9 rad/s
// over 10 ms (v - a dt); one at 0.05 rad/s stops (0.05 < a dt); one without an acceleration
// limit stops at once; one racing at its lowered velocity limit slows by a dt; a joint 1 mrad
// from its position limit stops on it. Chained, the first joint comes to rest after v / (a dt)
// = 20 intervals, having run v^2 / (2a) plus the discrete excess v dt / 2 (the test's sum).
TEST(JointRateWindowTest, BrakedSlowsEveryJointTowardsRestAtItsAcceleration) {
  const JointRate fast{3.0, 10.0, std::nullopt};
  const JointRate slow{3.0, 10.0, std::nullopt};
  const JointRate free{3.0, kInf, std::nullopt};
  const JointRate lowered{1.0, 10.0, std::nullopt};
  const JointRate walled{3.0, 10.0, std::make_pair(-1.0, 0.501)};
  JointRateWindow window({fast, slow, free, lowered, walled});
  Eigen::VectorXd q(5), v(5);
  q << 0.0, 0.0, 0.0, 0.0, 0.5;
  v << 2.0, 0.05, -2.0, 1.5, 0.3;
  window.Answer(q, v);
  const Eigen::VectorXd next = window.Braked(kDt);
  EXPECT_NEAR(next[0], 1.9 * kDt, 1e-15);
  EXPECT_EQ(next[1], 0.0);
  EXPECT_EQ(next[2], 0.0);
  EXPECT_NEAR(next[3], 1.4 * kDt, 1e-15);
  EXPECT_LE(next[4], 0.501);
  EXPECT_GE(next[4], 0.5);

  JointRateWindow alone({fast});
  alone.Answer(One(0.0), One(2.0));
  double position = 0.0, velocity = 2.0, expected = 0.0;
  int intervals = 0;
  for (; velocity > 1e-9 && intervals < 100; ++intervals) {
    const double braked = alone.Braked(kDt)[0];
    const double v_next = (braked - position) / kDt;
    EXPECT_LE(std::abs(v_next - velocity), 10.0 * kDt * (1 + 1e-9)) << intervals;
    EXPECT_GE(v_next, 0.0);
    alone.Answer(One(braked), One(v_next));
    position = braked;
    velocity = v_next;
  }
  for (int k = 1; k < 20; ++k) expected += (2.0 - 10.0 * kDt * k) * kDt;
  EXPECT_EQ(intervals, 20);
  EXPECT_NEAR(position, expected, 1e-12);
  EXPECT_NEAR(position, 2.0 * 2.0 / (2 * 10.0) - 2.0 * kDt / 2, 1e-12);
}

}  // namespace
}  // namespace ikd::planning
