// Servo limits over the next interval of a live stream (Track), for any arm: what each joint
// may do relative to the last answer (velocity, acceleration, braking before a position limit
// or behind a lagged-behind target). The one home of the velocity limits' rules: the chain
// arms' (ik/rate_limit.h) and the industrial arms' (robot/robot_rate_limit.h) rate-limited
// trackers both keep a JointRateWindow; the per-joint rules are free functions below it, and
// the search for the closest state within them (ClosestWithinLimits) is theirs too.
//
//   ikd::planning::JointRateWindow window(rates);   // one JointRate per joint
//   window.Answer(q, v, dt);                        // after each answer
//   double f = window.FeasibleFraction(dt, q_next);  // 1: the next answer is within the limits
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "ikd/planning/step_status.h"

namespace ikd::planning {

// One joint's servo limits; the defaults are a joint without limits.
struct JointRate {
  double max_velocity = std::numeric_limits<double>::infinity();
  double max_acceleration = std::numeric_limits<double>::infinity();
  std::optional<std::pair<double, double>> range;  // position limits (lower, upper), if any
  double max_jerk = std::numeric_limits<double>::infinity();
};

// The fastest a joint `distance` short of a point may close in on it and still stop there in
// steps of dt, braking at a (r = a dt): the largest u with dt sum_i max(0, u - i r) <= |d|
// (this step at u, then every step r slower). With u = (m + f) r, m whole and 0 <= f < 1, the
// sum is dt r ((m + 1) f + m (m + 1) / 2). About sqrt(2 a |d|) far out and |d| / dt close in;
// the continuous rule v^2 <= 2 a d arrives up to twice too fast in steps.
inline double ClosingSpeed(double distance, double a, double dt) {
  const double reach = a * dt;
  if (!(reach > 0.0)) return 0.0;
  const double steps = std::abs(distance) / (reach * dt);  // |d| in units of r dt
  const double m = std::floor((std::sqrt(1.0 + 8.0 * steps) - 1.0) / 2.0);
  const double f = std::min(1.0, (steps - m * (m + 1.0) / 2.0) / (m + 1.0));
  return reach * (m + f);
}

// Jerk-limited servos (rate.max_jerk finite). A step's acceleration may change by at most
// r = j_max dt from the last one; braking therefore takes a ramp, and a velocity or position
// limit must be kept over the whole ramp, not only at the next step.
//
// The velocity a joint still gains after a step at acceleration b >= 0 while the acceleration
// ramps down to zero by r a step: dt sum_{i>=1} max(0, b - i r) (0 without a jerk limit).
double RampVelocity(double b, double r, double dt);
// The velocity after the next step of the jerk-limited brake of a joint moving at v with
// acceleration a (the last step's): the boldest deceleration whose ramp back to zero
// acceleration does not carry the velocity past zero, dt sum_{i>=0} max(0, b - i r) <= |v|
// (ClosingSpeed with j_max for a_max), kept within r of a and within a_max. Exactly 0 where the
// joint comes to rest this step. The brake is a function of the state alone, so a state from
// which it keeps every limit has a next state (its own next step) from which it does too.
double JerkBrakeVelocity(const JointRate& rate, double v, double a, double dt);
// The jerk-limited brake from (q, v, a) until the joint rests (velocity 0, and the next step's
// acceleration too): its steps and the lowest and highest position it passes through.
struct JerkBrake {
  int steps = 0;
  double lowest = 0.0, highest = 0.0;
};
JerkBrake SimulateJerkBrake(const JointRate& rate, double q, double v, double a, double dt);
// VelocityRange for a jerk-limited joint whose last step had acceleration a: |v'| <= v_max,
// |a'| <= a_max and |a' - a| <= r, with a' = (v' - v) / dt; no faster than the ramp down of a'
// leaves within v_max (RampVelocity), and no faster than lets the jerk-limited brake from the
// next state stay inside the position range (or no further out than q, outside it). Each bound
// is monotone in v', so the range is an interval; an empty one (a state no brake keeps within
// the limits, e.g. after a lowered limit) is the brake's own next velocity.
std::pair<double, double> JerkVelocityRange(const JointRate& rate, double q, double v, double a,
                                            double dt);
// BrakedForTarget for a jerk-limited joint: `range` (its JerkVelocityRange) narrowed to the
// velocities u from which the jerk-limited brake relative to the target does not pass it;
// where every one does, the hardest brake the range allows. The target is `distance` ahead of
// the joint's last answer at the end of this step and moved over it at v_target, changing by
// a_target: after the step the joint is u dt - distance from it, at relative velocity
// u - v_target and acceleration (u - v) / dt - a_target (the last step's acceleration is in
// `range` already). (The acceleration-limited rule asks for decelerations the jerk limit cannot
// reach in time: the joint swings about the target.)
std::pair<double, double> JerkBrakedForTarget(const JointRate& rate,
                                              std::pair<double, double> range, double distance,
                                              double v_target, double a_target, double v,
                                              double dt);

// The velocities a joint at position q moving at v may take over the next dt: |v'| <= v_max,
// |v' - v| <= a_max dt, and no faster towards a position limit than a stop at a_max in steps
// of dt allows (ClosingSpeed). An empty range (a velocity above a limit, e.g. a newly lowered
// one) brakes at a_max. A jerk-limited joint (a: its last step's acceleration) takes
// JerkVelocityRange.
// Without an acceleration limit there is no braking distance to keep from a position limit
// (JointRateWindow::Clamp still holds the position inside it).
inline std::pair<double, double> VelocityRange(const JointRate& rate, double q, double v, double a,
                                               double dt) {
  if (std::isfinite(rate.max_jerk)) return JerkVelocityRange(rate, q, v, a, dt);
  const double reach = rate.max_acceleration * dt;
  double lo = std::max(-rate.max_velocity, v - reach);
  double hi = std::min(rate.max_velocity, v + reach);
  if (rate.range && std::isfinite(rate.max_acceleration)) {
    const double a = rate.max_acceleration;
    hi = std::min(hi, ClosingSpeed(std::max(0.0, rate.range->second - q), a, dt));
    lo = std::max(lo, -ClosingSpeed(std::max(0.0, q - rate.range->first), a, dt));
  }
  if (lo > hi) lo = hi = lo > 0.0 ? v - reach : v + reach;
  return {lo, hi};
}

// The largest fraction of the wanted velocity that stays within [lo, hi] (1 when it does; 0
// when none does, as for a joint that wants to stop dead faster than it can brake).
inline double FeasibleFraction(double wanted, std::pair<double, double> range) {
  if (wanted > range.second) return range.second > 0.0 ? range.second / wanted : 0.0;
  if (wanted < range.first) return range.first < 0.0 ? range.first / wanted : 0.0;
  return 1.0;
}

// `range` narrowed so that a joint `distance` short of where the target is (moving at
// v_target) closes in no faster than a stop at a_max relative to the target allows: it arrives
// with the target's velocity instead of swinging past. The closing speed u with
// u dt + (u - a dt) dt + ... <= |d| counted to the end, a dt (sqrt(1/4 + 2 |d| / (a dt^2)) -
// 1/2): sqrt(2 a |d|) far out, 2 |d| / dt close in, so it may pass a target by up to a dt^2 / 2
// (ClosingSpeed, exact, stops short of it: kept for hard limits, since for a target it holds a
// lagging arm back: the quick-start circle beside the pillars lagged 24 cm instead of 1.6).
// Never narrower than a brake at a_max from the current velocity v.
inline std::pair<double, double> BrakedForTarget(std::pair<double, double> range, double distance,
                                                 double v_target, double v, double a, double dt) {
  if (!std::isfinite(a) || distance == 0.0) return range;
  const double reach = a * dt;
  const double closing = reach * (std::sqrt(0.25 + 2.0 * std::abs(distance) / (reach * dt)) - 0.5);
  auto [lo, hi] = range;
  if (distance > 0.0) hi = std::max(std::min(hi, v_target + closing), std::min(lo, v - reach));
  if (distance < 0.0) lo = std::min(std::max(lo, v_target - closing), std::max(hi, v + reach));
  return {std::min(lo, hi), std::max(lo, hi)};
}

// The step a joint at q may take over dt: its braked velocity range kept inside its plain one
// (the brake alone may leave it), times dt, then clipped to its position range, which comes
// first (a joint too fast to stop at a limit stops on it).
inline std::pair<double, double> StepRange(std::pair<double, double> plain,
                                           std::pair<double, double> braked, double dt,
                                           std::optional<std::pair<double, double>> position,
                                           double q) {
  double lo = std::clamp(braked.first, plain.first, plain.second) * dt;
  double hi = std::clamp(braked.second, plain.first, plain.second) * dt;
  if (position) {
    const double to_min = std::min(0.0, position->first - q);
    const double to_max = std::max(0.0, position->second - q);
    lo = std::clamp(lo, to_min, to_max);
    hi = std::clamp(hi, to_min, to_max);
  }
  return {lo, hi};
}

// Whether a limited answer takes the closest state within the limits over the cut way (the
// tracker's own answer cut to the limits): clearance first, so inside the safety margin the
// clearer state wins; else the closer one to the target, if it keeps the clearance the cut
// way has or the last answer had (up to the margin).
inline bool PreferClosest(double closest_clearance, double closest_distance, double cut_clearance,
                          double cut_distance, double last_clearance, double margin) {
  const double kept = std::min(margin, std::max(cut_clearance, last_clearance));
  const bool safer = cut_clearance < margin && closest_clearance > cut_clearance;
  const bool closer = closest_distance < cut_distance && closest_clearance >= kept;
  return safer || closer;
}

// The joint motion of a tracker's reference configuration along a stream (jerk-limited Track:
// the unlimited solve of each target, from the last one's): its velocity over the last step
// and that velocity's change from the step before, what JointRateWindow::Approach takes.
class ReferenceMotion {
 public:
  struct Step {
    Eigen::VectorXd velocity, acceleration;  // empty where there was no reference before
  };
  // The reference moved from `before` (empty: none) to `now` over dt.
  Step Move(const Eigen::VectorXd& before, const Eigen::VectorXd& now, double dt);

 private:
  Eigen::VectorXd velocity_;  // over the last step (empty: none)
};

// The joints of an arm after the last answer of a stream, and what each may do next.
class JointRateWindow {
 public:
  // One JointRate per joint (chain arms: per joint angle), in the arm's joint order.
  explicit JointRateWindow(std::vector<JointRate> joints);

  int size() const { return static_cast<int>(joints_.size()); }
  // Whether some joint declares a jerk limit.
  bool jerk_limited() const { return jerk_limited_; }
  // The last answer's joint values (empty before the first).
  const Eigen::VectorXd& q() const { return q_; }

  // Records an answer: its joint values and the velocities that brought the arm there over dt
  // (their change from the last answer's over dt is the acceleration a jerk limit is kept
  // from; dt 0: none, as at a start).
  void Answer(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double dt = 0.0);
  // While the arm lags behind its target: per joint the distance left to the target's joint
  // values and the target's own joint velocity, so that the braked ranges arrive with it
  // instead of swinging past (BrakedForTarget). ForgetApproach drops them.
  // `target_acceleration` (jerk-limited joints): the change of the target's joint velocity
  // over the step (empty: none).
  void Approach(const Eigen::VectorXd& distance, const Eigen::VectorXd& target_velocity,
                const Eigen::VectorXd& target_acceleration = Eigen::VectorXd());
  void ForgetApproach();

  // The velocities joint j may take over dt (VelocityRange); `braked`: also slow enough to
  // arrive at a lagged-behind target with its velocity (how far the hand goes; Clamp leaves it
  // out, so it never forces a joint off the tracker's way round obstacles).
  std::pair<double, double> VelocityRangeOf(int j, double dt, bool braked) const;
  // Whether the move from q() to q over dt is within every joint's plain range (no braking for
  // a lagged-behind target).
  bool Within(double dt, const Eigen::VectorXd& q) const;
  // The largest fraction of the move from q() to q over dt that every joint's braked range
  // allows (1: within them).
  double FeasibleFraction(double dt, const Eigen::VectorXd& q) const;
  // Clamps the velocities from q() to `q` over dt into their ranges (`braked`: as
  // VelocityRangeOf) and q into its position ranges (InRange), in place; a joint within both
  // keeps its value to the bit. True when a clamp acted.
  bool Clamp(double dt, Eigen::VectorXd& q, bool braked = false) const;
  // Where the joints are after dt with every one braking towards rest: its velocity the one
  // nearest zero in its plain range (a stop where the acceleration limit allows it, else v
  // reduced by a_max dt; a jerk-limited joint's JerkBrakeVelocity), the position kept in its
  // range. What an answer with no time to solve
  // does (Track's LATE): within every limit, and the least motion the limits allow.
  Eigen::VectorXd Braked(double dt) const;
  // Whether some joint moves from q() to q at its velocity limit (else an acceleration or a
  // position limit is what held the answer back).
  bool AtSpeedLimit(double dt, const Eigen::VectorXd& q) const;
  // The status of an answer the limits held back: VELOCITY_LIMITED where AtSpeedLimit, else
  // ACCELERATION_LIMITED.
  StepStatus LimitedStatus(double dt, const Eigen::VectorXd& q) const;
  // What a step from q() over dt may do, for the closest state within the limits: per joint
  // its bounds [lo, hi] (StepRange), the weight of its motion in a least-motion step
  // ((slowest joint's max velocity / its own)^2, 1 where either is unlimited), and the
  // intervals of dt the fastest joint needs to stop at its acceleration limit.
  struct StepLimits {
    Eigen::VectorXd lo, hi, weight;
    double braking_intervals = 0.0;
  };
  StepLimits Limits(double dt) const;
  void StepBox(double dt, Eigen::VectorXd& lo, Eigen::VectorXd& hi) const;
  Eigen::VectorXd MotionWeights() const;
  double BrakingIntervals(double dt) const;

 private:
  // `next` for joint j kept in its position range, or, where the last answer lies outside it
  // (a range narrower than where the stream started), no further out than that answer: the
  // joint may come in at its own pace, never jump in.
  double InRange(int j, double next) const;

  std::vector<JointRate> joints_;
  bool jerk_limited_ = false;
  Eigen::VectorXd q_, v_;
  Eigen::VectorXd a_;                // per joint, the acceleration into the last answer
  Eigen::VectorXd approach_;         // per joint, distance left to the target (empty: none)
  Eigen::VectorXd target_velocity_;  // per joint, the target's own velocity
  Eigen::VectorXd target_acceleration_;  // per joint, its change (empty: none)
};

// One linearization at q of the closest state within the limits (ClosestWithinLimits): the
// target rows (what the hand or tool has still to move, and their Jacobian over the joints) and
// the clearances nearer than `within` with their gradients (one row each).
struct ClosestRows {
  Eigen::MatrixXd jacobian;
  Eigen::VectorXd error;
  Eigen::MatrixXd clearance_gradients;
  Eigen::VectorXd clearances;
};
// The linearization at q of an arm kind (nullopt: q has no state; the search stops there).
using ClosestLinearization =
    std::function<std::optional<ClosestRows>(const Eigen::VectorXd& q, double within)>;

// The joint values within every joint's range over dt (window.Limits: braked for the target)
// that bring the hand or tool closest to its target, with the least joint motion weighted by
// the limits: box-constrained Levenberg-Marquardt over a few linearizations. Clearances within
// kClosestLookahead safety margins are active inequalities: one may close in on the margin by
// at most 1 / (1 + k) of the way left, k the intervals the joints need to brake at their
// acceleration limits (so that the arm can still stop outside the margin), and inside it
// moves back out as fast; one whose step closes in faster joins the rows with that change
// asked for, kClosestClearanceWeight times as heavy as the target rows. The caller checks the
// result's clearance.
inline constexpr double kClosestLookahead = 3.0;
inline constexpr double kClosestClearanceWeight = 1e3;
Eigen::VectorXd ClosestWithinLimits(const JointRateWindow& window, double dt, double safety_margin,
                                    const ClosestLinearization& linearize);

// The closest state within the limits (joint values q_closest, its answer `closest`) taken as
// the answer with a status of its own (it was copied from the cut way's answer, which may have
// collided): IN_COLLISION where it touches something, REACHED on the target, else what the
// window's limits made it. Returns whether it is REACHED.
template <typename Step>
bool TakeClosestAnswer(const JointRateWindow& window, double dt, bool on_target, Step& closest,
                       const Eigen::VectorXd& q_closest, Step& step, Eigen::VectorXd& q) {
  closest.status = closest.min_clearance < 0.0 ? StepStatus::kInCollision
                   : on_target                 ? StepStatus::kReached
                                               : window.LimitedStatus(dt, q_closest);
  step = std::move(closest);
  q = q_closest;
  return on_target && step.status == StepStatus::kReached;
}

}  // namespace ikd::planning
