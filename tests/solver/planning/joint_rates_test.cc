// The servo limits of a live stream (planning/joint_rates.h), checked by simulating a joint that
// always takes the fastest step the window allows and measuring its motion with the test's own
// finite differences: speed, acceleration, stopping before a position limit, arriving at a
// target without swinging past it.
#include "ikd/planning/joint_rates.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <utility>
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

// Jerk-limited joints (JointRate::max_jerk). The checks difference the test's own record of
// positions three times: v_k = (q_k - q_{k-1}) / dt, a_k = (v_k - v_{k-1}) / dt,
// j_k = (a_k - a_{k-1}) / dt, from rest before the first sample.
struct Rates {
  double speed = 0.0, acceleration = 0.0, jerk = 0.0, lowest = kInf, highest = -kInf;
};

// `from`: the first sample whose rates count (those before only set the motion's start).
Rates RatesOf(const std::vector<double>& q, double dt, size_t from = 0) {
  Rates rates;
  double v = 0.0, a = 0.0;
  for (size_t k = 0; k < q.size(); ++k) {
    const double v_next = k == 0 ? 0.0 : (q[k] - q[k - 1]) / dt;
    const double a_next = (v_next - v) / dt;
    if (k < from) {
      v = v_next;
      a = a_next;
      continue;
    }
    rates.speed = std::max(rates.speed, std::abs(v_next));
    rates.acceleration = std::max(rates.acceleration, std::abs(a_next));
    rates.jerk = std::max(rates.jerk, std::abs(a_next - a) / dt);
    rates.lowest = std::min(rates.lowest, q[k]);
    rates.highest = std::max(rates.highest, q[k]);
    v = v_next;
    a = a_next;
  }
  return rates;
}

// A jerk-limited joint's stream: every kHold steps a new random goal (some outside the
// position range), chased as Chase does; the window learns each answer with its dt.
std::vector<double> ChaseGoals(const JointRate& rate, double dt, int goals, unsigned seed) {
  constexpr int kHold = 60;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> goal_of(-1.6, 1.6);
  JointRateWindow window({rate});
  window.Answer(One(0.0), One(0.0));
  std::vector<double> q{0.0};
  for (int g = 0; g < goals; ++g) {
    const double goal = goal_of(rng);
    for (int k = 0; k < kHold; ++k) {
      window.Approach(One(goal - q.back()), One(0.0));
      const double fraction = window.FeasibleFraction(dt, One(goal));
      Eigen::VectorXd next = One(q.back() + fraction * (goal - q.back()));
      window.Clamp(dt, next);
      window.Answer(next, One((next[0] - q.back()) / dt), dt);
      q.push_back(next[0]);
    }
  }
  return q;
}

TEST(JerkLimitTest, RampVelocityIsTheSumOfTheRampsSteps) {
  for (const double b : {0.0, 0.5, 1.0, 2.0, 2.5, 7.3}) {
    double sum = 0.0;
    for (double a = b - 1.0; a > 0.0; a -= 1.0) sum += a * 0.01;  // r = 1, dt = 0.01
    EXPECT_NEAR(RampVelocity(b, 1.0, 0.01), sum, 1e-15) << b;
  }
  EXPECT_EQ(RampVelocity(3.0, kInf, 0.01), 0.0);
}

TEST(JerkLimitTest, ChasedGoalsKeepSpeedAccelerationJerkAndRange) {
  // 2 rad/s, 10 rad/s^2, 200 rad/s^3 (0.2 s from rest to full acceleration... 0.05 s), range
  // [-1, 1]; goals beyond the range press the joint against it.
  const JointRate rate{2.0, 10.0, std::make_pair(-1.0, 1.0), 200.0};
  for (const double dt : {0.001, 0.004, 0.01}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const Rates rates = RatesOf(ChaseGoals(rate, dt, 40, seed), dt);
      EXPECT_LE(rates.speed, 2.0 * (1 + 1e-9)) << dt << " " << seed;
      EXPECT_LE(rates.acceleration, 10.0 * (1 + 1e-9)) << dt << " " << seed;
      EXPECT_LE(rates.jerk, 200.0 * (1 + 1e-9)) << dt << " " << seed;
      EXPECT_GE(rates.lowest, -1.0 - 1e-12) << dt << " " << seed;
      EXPECT_LE(rates.highest, 1.0 + 1e-12) << dt << " " << seed;
    }
  }
}

TEST(JerkLimitTest, WithoutAJerkLimitTheSameChaseJumpsItsAcceleration) {
  // The check above can fail: the acceleration-limited window alone flips a_max to -a_max in
  // one step, a jerk of 2 a_max / dt.
  const JointRate rate{2.0, 10.0, std::make_pair(-1.0, 1.0)};
  const Rates rates = RatesOf(ChaseGoals(rate, 0.01, 40, 1), 0.01);
  EXPECT_GT(rates.jerk, 1000.0);
}

TEST(JerkLimitTest, ChaseArrivesAtAGoalInsideTheRange) {
  const JointRate rate{2.0, 10.0, std::make_pair(-1.0, 1.0), 200.0};
  JointRateWindow window({rate});
  constexpr double kGoal = 0.6, dt = 0.004;
  window.Answer(One(0.0), One(0.0));
  std::vector<double> q{0.0};
  for (int k = 0; k < 500; ++k) {  // 2 s
    window.Approach(One(kGoal - q.back()), One(0.0));
    Eigen::VectorXd next =
        One(q.back() + window.FeasibleFraction(dt, One(kGoal)) * (kGoal - q.back()));
    window.Clamp(dt, next);
    window.Answer(next, One((next[0] - q.back()) / dt), dt);
    q.push_back(next[0]);
  }
  EXPECT_NEAR(q.back(), kGoal, 1e-3);
  EXPECT_LE(RatesOf(q, dt).jerk, 200.0 * (1 + 1e-9));
}

// The brake from v0 at zero acceleration against the continuous time-optimal jerk-limited stop:
// with v0 >= a^2 / j it ramps to -a, holds, ramps back: distance v0 (v0 / a + a / j) / 2;
// below, a triangle in acceleration: v0 sqrt(v0 / j). In steps of 0.1 ms the discrete brake
// comes within 0.5% (it rounds each ramp to whole steps).
double BrakeDistance(const JointRate& rate, double v0, double dt, Rates* rates) {
  JointRateWindow window({rate});
  window.Answer(One(-v0 * dt), One(v0));
  window.Answer(One(0.0), One(v0), dt);  // at 0, moving at v0, no acceleration
  std::vector<double> q{-2 * v0 * dt, -v0 * dt, 0.0};
  for (int k = 0; k < 100000; ++k) {
    const double next = window.Braked(dt)[0];
    window.Answer(One(next), One((next - q.back()) / dt), dt);
    q.push_back(next);
    if (q[q.size() - 1] == q[q.size() - 2] && q[q.size() - 2] == q[q.size() - 3]) break;
  }
  *rates = RatesOf(q, dt, 3);  // at 0 moving at v0 with no acceleration
  return q.back();
}

TEST(JerkLimitTest, BrakeStopsAsTheContinuousTimeOptimalStopDoes) {
  const JointRate rate{kInf, 10.0, std::nullopt, 100.0};
  Rates rates;
  EXPECT_NEAR(BrakeDistance(rate, 2.0, 1e-4, &rates), 2.0 * (2.0 / 10.0 + 10.0 / 100.0) / 2.0,
              0.005 * 0.3);
  EXPECT_LE(rates.acceleration, 10.0 * (1 + 1e-9));
  EXPECT_LE(rates.jerk, 100.0 * (1 + 1e-6));
  EXPECT_NEAR(BrakeDistance(rate, 0.5, 1e-4, &rates), 0.5 * std::sqrt(0.5 / 100.0), 0.005 * 0.0354);
  EXPECT_LE(rates.jerk, 100.0 * (1 + 1e-6));
}

TEST(JerkLimitTest, FullThrottleFromRestRampsUpToTheSpeedLimitWithoutPassingIt) {
  const JointRate rate{2.0, 10.0, std::nullopt, 100.0};
  constexpr double dt = 0.001;
  JointRateWindow window({rate});
  window.Answer(One(0.0), One(0.0));
  std::vector<double> q{0.0};
  for (int k = 0; k < 1000; ++k) {
    Eigen::VectorXd next = One(q.back() + 1.0);  // far ahead: as fast as the limits allow
    window.Clamp(dt, next);
    window.Answer(next, One((next[0] - q.back()) / dt), dt);
    q.push_back(next[0]);
  }
  const Rates rates = RatesOf(q, dt);
  EXPECT_LE(rates.speed, 2.0 * (1 + 1e-9));
  EXPECT_GE((q.back() - q[q.size() - 2]) / dt, 2.0 * (1 - 1e-6));  // at full speed by 1 s
  EXPECT_LE(rates.acceleration, 10.0 * (1 + 1e-9));
  EXPECT_LE(rates.jerk, 100.0 * (1 + 1e-9));
}

// ClosestWithinLimits on the test's own linear arm: hand = M q (two joints, a 2-D hand) and,
// where asked, one clearance c(q) = c0 + g . (q - q0), both exact in one linearization.
struct LinearArm {
  Eigen::Matrix2d m{{1.0, 1.0}, {1.0, -1.0}};
  Eigen::Vector2d q0{0.1, 0.2};
  std::optional<std::pair<double, Eigen::Vector2d>> clearance;  // c0, g

  ClosestLinearization Rows(const Eigen::Vector2d& target) const {
    return [this, target](const Eigen::VectorXd& q, double within) {
      ClosestRows rows{m, target - m * q, Eigen::MatrixXd(0, 2), Eigen::VectorXd(0)};
      if (clearance) {
        const double c = clearance->first + clearance->second.dot(q - q0);
        if (c < within) {
          rows.clearance_gradients = clearance->second.transpose();
          rows.clearances = Eigen::VectorXd::Constant(1, c);
        }
      }
      return std::optional<ClosestRows>(rows);
    };
  }
};

TEST(ClosestWithinLimitsTest, WithoutLimitsTheHandLandsOnItsTarget) {
  const LinearArm arm;
  JointRateWindow window({JointRate{}, JointRate{}});
  window.Answer(arm.q0, Eigen::Vector2d::Zero());
  const Eigen::Vector2d target(0.5, -0.3);
  const Eigen::VectorXd q = ClosestWithinLimits(window, kDt, 0.05, arm.Rows(target));
  // M q = t: q = (t0 + t1, t0 - t1) / 2.
  EXPECT_NEAR(q[0], 0.1, 1e-9);
  EXPECT_NEAR(q[1], 0.4, 1e-9);
}

TEST(ClosestWithinLimitsTest, ASlowJointStaysInItsBoxAndTheOtherMakesUpTheRest) {
  const LinearArm arm;
  // Joint 0 may turn 1 rad/s: 0.01 rad in kDt; joint 1 is free.
  JointRateWindow window({JointRate{1.0, kInf, std::nullopt}, JointRate{}});
  window.Answer(arm.q0, Eigen::Vector2d::Zero());
  const Eigen::Vector2d target(2.0, 1.0);  // at q = (1.5, 0.5): joint 0 far out of its box
  const Eigen::VectorXd q = ClosestWithinLimits(window, kDt, 0.05, arm.Rows(target));
  EXPECT_NEAR(q[0], 0.11, 1e-9);  // at its bound
  // With joint 0 there, |M q - t|^2 = (0.11 + q1 - 2)^2 + (0.11 - q1 - 1)^2 is least at
  // q1 = ((2 - 0.11) - (1 - 0.11)) / 2 = 0.5.
  EXPECT_NEAR(q[1], 0.5, 1e-6);
}

TEST(ClosestWithinLimitsTest, AClearanceOutsideTheMarginClosesInOnlyToIt) {
  // The target lies where the clearance would be 0.1 - 0.2 < 0: the hand goes as far as the
  // clearance allows, which (no acceleration limit: the joints stop at once) is to the margin.
  LinearArm arm;
  arm.clearance = std::make_pair(0.1, Eigen::Vector2d(-1.0, 0.0));  // joint 0 closes in
  JointRateWindow window({JointRate{}, JointRate{}});
  window.Answer(arm.q0, Eigen::Vector2d::Zero());
  const Eigen::Vector2d target = arm.m * (arm.q0 + Eigen::Vector2d(0.2, 0.0));
  const Eigen::VectorXd q = ClosestWithinLimits(window, kDt, 0.05, arm.Rows(target));
  const double c = 0.1 - (q[0] - arm.q0[0]);
  EXPECT_GE(c, 0.05 - 1e-6);
  EXPECT_LE(c, 0.05 + 1e-3);  // and no further out than the weighted rows leave it
}

TEST(ClosestWithinLimitsTest, AClearanceInsideTheMarginMovesBackOutToIt) {
  // Inside the margin (0.02 of 0.05) with the target where the arm is: the step moves out.
  LinearArm arm;
  arm.clearance = std::make_pair(0.02, Eigen::Vector2d(0.0, 1.0));  // joint 1 opens it
  JointRateWindow window({JointRate{}, JointRate{}});
  window.Answer(arm.q0, Eigen::Vector2d::Zero());
  const Eigen::VectorXd q = ClosestWithinLimits(window, kDt, 0.05, arm.Rows(arm.m * arm.q0));
  EXPECT_NEAR(0.02 + (q[1] - arm.q0[1]), 0.05, 1e-6);
}

TEST(ClosestWithinLimitsTest, AStateWithoutRowsEndsTheSearchWhereItIs) {
  const LinearArm arm;
  JointRateWindow window({JointRate{}, JointRate{}});
  window.Answer(arm.q0, Eigen::Vector2d::Zero());
  const Eigen::VectorXd q = ClosestWithinLimits(
      window, kDt, 0.05, [](const Eigen::VectorXd&, double) { return std::nullopt; });
  EXPECT_EQ(q, Eigen::VectorXd(arm.q0));
}

}  // namespace
}  // namespace ikd::planning
