#include "ikd/planning/joint_rates.h"

#include <tuple>

#include "ikd/planning/boxed_least_squares.h"

namespace ikd::planning {

namespace {

// A brake from any state a servo can be in ends within this many steps; a guard, not a bound
// the limits need (a joint at 10 rad/s braking at 1 rad/s^2 in 1 ms steps takes 1e4).
constexpr int kMaxBrakeSteps = 1000000;
// Bisection steps for a velocity bound kept over the brake (2^-48 of the range).
constexpr int kBisections = 48;

// The largest u in [lo, hi] with ok(u), for ok true up to some point and false beyond; lo
// itself where none is (the caller checks it).
template <typename Ok>
double LargestWith(double lo, double hi, Ok ok) {
  if (ok(hi)) return hi;
  for (int k = 0; k < kBisections; ++k) {
    const double mid = 0.5 * (lo + hi);
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

template <typename Ok>
double SmallestWith(double lo, double hi, Ok ok) {
  if (ok(lo)) return lo;
  for (int k = 0; k < kBisections; ++k) {
    const double mid = 0.5 * (lo + hi);
    (ok(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

double RampVelocity(double b, double r, double dt) {
  if (!(b > 0.0) || !std::isfinite(r)) return 0.0;
  // The m terms b - i r > 0, i = 1..m: dt (m b - r m (m + 1) / 2).
  const double m = std::ceil(b / r) - 1.0;
  return dt * (m * b - r * m * (m + 1.0) / 2.0);
}

double JerkBrakeVelocity(const JointRate& rate, double v, double a, double dt) {
  const double r = rate.max_jerk * dt;
  const double a_max = rate.max_acceleration;
  const double boldest = ClosingSpeed(std::abs(v), rate.max_jerk, dt);
  const double wanted = v > 0.0 ? -boldest : v < 0.0 ? boldest : 0.0;
  double lo = std::max(a - r, -a_max), hi = std::min(a + r, a_max);
  if (lo > hi) lo = hi = std::clamp(a, -a_max, a_max);  // above a lowered a_max: back to it
  const double next = std::clamp(wanted, lo, hi);
  // boldest dt == |v|: this step stops the joint (exactly, not to a rounding residue).
  if (next == wanted && boldest * dt >= std::abs(v) * (1.0 - 1e-12)) return 0.0;
  return v + next * dt;
}

JerkBrake SimulateJerkBrake(const JointRate& rate, double q, double v, double a, double dt) {
  const double r = rate.max_jerk * dt;
  JerkBrake brake{0, q, q};
  for (; brake.steps < kMaxBrakeSteps && !(v == 0.0 && std::abs(a) <= r); ++brake.steps) {
    const double next = JerkBrakeVelocity(rate, v, a, dt);
    a = (next - v) / dt;
    v = next;
    q += v * dt;
    brake.lowest = std::min(brake.lowest, q);
    brake.highest = std::max(brake.highest, q);
  }
  return brake;
}

std::pair<double, double> JerkVelocityRange(const JointRate& rate, double q, double v, double a,
                                            double dt) {
  const double r = rate.max_jerk * dt;
  const double v_max = rate.max_velocity;
  const double a_max = rate.max_acceleration;
  double lo = std::max({-v_max, v - a_max * dt, v + (a - r) * dt});
  double hi = std::min({v_max, v + a_max * dt, v + (a + r) * dt});
  const auto brake = [&] {
    const double stop = JerkBrakeVelocity(rate, v, a, dt);
    return std::make_pair(stop, stop);
  };
  if (lo > hi) return brake();
  const auto accel = [&](double u) { return (u - v) / dt; };
  if (std::isfinite(v_max)) {  // the ramp down of a' must not carry the velocity past v_max
    const auto under = [&](double u) { return u + RampVelocity(accel(u), r, dt) <= v_max; };
    const auto over = [&](double u) { return u - RampVelocity(-accel(u), r, dt) >= -v_max; };
    hi = LargestWith(lo, hi, under);
    lo = SmallestWith(lo, hi, over);
    if (!under(hi) || !over(lo)) return brake();
  }
  if (rate.range) {  // the brake from the next state stays inside (or no further out than q)
    const double lower = std::min(rate.range->first, q);
    const double upper = std::max(rate.range->second, q);
    const auto brake_from = [&](double u) {
      return SimulateJerkBrake(rate, q + u * dt, u, accel(u), dt);
    };
    const auto below = [&](double u) { return brake_from(u).highest <= upper; };
    const auto above = [&](double u) { return brake_from(u).lowest >= lower; };
    hi = LargestWith(lo, hi, below);
    lo = SmallestWith(lo, hi, above);
    if (!below(hi) || !above(lo)) return brake();
  }
  return {lo, hi};
}

std::pair<double, double> JerkBrakedForTarget(const JointRate& rate,
                                              std::pair<double, double> range, double distance,
                                              double v_target, double a_target, double v,
                                              double dt) {
  if (distance == 0.0) return range;
  JointRate relative = rate;  // the joint seen from the target (its acceleration the same)
  relative.range.reset();
  relative.max_velocity = std::numeric_limits<double>::infinity();
  const auto short_of = [&](double u) {
    const JerkBrake brake =
        SimulateJerkBrake(relative, u * dt - distance, u - v_target, (u - v) / dt - a_target, dt);
    return distance > 0.0 ? brake.highest <= 0.0 : brake.lowest >= 0.0;
  };
  auto [lo, hi] = range;
  if (distance > 0.0) hi = short_of(lo) ? LargestWith(lo, hi, short_of) : lo;
  if (distance < 0.0) lo = short_of(hi) ? SmallestWith(lo, hi, short_of) : hi;
  return {lo, hi};
}

ReferenceMotion::Step ReferenceMotion::Move(const Eigen::VectorXd& before,
                                            const Eigen::VectorXd& now, double dt) {
  Step step;
  if (before.size() != now.size() || !(dt > 0.0)) {
    velocity_.resize(0);
    return step;
  }
  step.velocity = (now - before) / dt;
  step.acceleration = velocity_.size() == now.size()
                          ? Eigen::VectorXd((step.velocity - velocity_) / dt)
                          : Eigen::VectorXd::Zero(now.size());
  velocity_ = step.velocity;
  return step;
}

JointRateWindow::JointRateWindow(std::vector<JointRate> joints) : joints_(std::move(joints)) {
  for (const JointRate& rate : joints_)
    jerk_limited_ = jerk_limited_ || std::isfinite(rate.max_jerk);
}

void JointRateWindow::Answer(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double dt) {
  const bool after_answer = q_.size() == q.size() && dt > 0.0;
  a_ = after_answer ? Eigen::VectorXd((v - v_) / dt) : Eigen::VectorXd::Zero(q.size());
  q_ = q;
  v_ = v;
}

void JointRateWindow::Approach(const Eigen::VectorXd& distance,
                               const Eigen::VectorXd& target_velocity,
                               const Eigen::VectorXd& target_acceleration) {
  approach_ = distance;
  target_velocity_ = target_velocity;
  target_acceleration_ = target_acceleration;
}

void JointRateWindow::ForgetApproach() { approach_.resize(0); }

std::pair<double, double> JointRateWindow::VelocityRangeOf(int j, double dt, bool braked) const {
  const JointRate& rate = joints_[j];
  const std::pair<double, double> range = VelocityRange(rate, q_[j], v_[j], a_[j], dt);
  if (!braked || approach_.size() == 0) return range;
  if (std::isfinite(rate.max_jerk)) {
    const double a_target = target_acceleration_.size() > 0 ? target_acceleration_[j] : 0.0;
    return JerkBrakedForTarget(rate, range, approach_[j], target_velocity_[j], a_target, v_[j], dt);
  }
  return BrakedForTarget(range, approach_[j], target_velocity_[j], v_[j], rate.max_acceleration,
                         dt);
}

bool JointRateWindow::Within(double dt, const Eigen::VectorXd& q) const {
  for (int j = 0; j < q.size(); ++j) {
    const auto [lo, hi] = VelocityRangeOf(j, dt, false);
    const double v = (q[j] - q_[j]) / dt;
    if (v < lo || v > hi) return false;
  }
  return true;
}

double JointRateWindow::FeasibleFraction(double dt, const Eigen::VectorXd& q) const {
  double fraction = 1.0;
  for (int j = 0; j < q.size(); ++j) {
    fraction = std::min(
        fraction, planning::FeasibleFraction((q[j] - q_[j]) / dt, VelocityRangeOf(j, dt, true)));
  }
  return fraction;
}

bool JointRateWindow::Clamp(double dt, Eigen::VectorXd& q, bool braked) const {
  bool clamped = false;
  for (int j = 0; j < q.size(); ++j) {
    const double wanted = (q[j] - q_[j]) / dt;
    const auto [lo, hi] = VelocityRangeOf(j, dt, braked);
    const double v = std::clamp(wanted, lo, hi);
    // Recomputed only where the velocity was clamped: q_ + wanted dt need not round back to q.
    const double next = InRange(j, v == wanted ? q[j] : q_[j] + v * dt);
    if (next == q[j]) continue;
    clamped = true;
    q[j] = next;
  }
  return clamped;
}

Eigen::VectorXd JointRateWindow::Braked(double dt) const {
  Eigen::VectorXd q = q_;
  for (int j = 0; j < q.size(); ++j) {
    if (std::isfinite(joints_[j].max_jerk)) {
      q[j] = InRange(j, q[j] + JerkBrakeVelocity(joints_[j], v_[j], a_[j], dt) * dt);
      continue;
    }
    const auto [lo, hi] = VelocityRangeOf(j, dt, false);
    q[j] = InRange(j, q[j] + std::clamp(0.0, lo, hi) * dt);
  }
  return q;
}

double JointRateWindow::InRange(int j, double next) const {
  const auto& range = joints_[j].range;
  if (!range) return next;
  return std::clamp(next, std::min(range->first, q_[j]), std::max(range->second, q_[j]));
}

bool JointRateWindow::AtSpeedLimit(double dt, const Eigen::VectorXd& q) const {
  for (int j = 0; j < q.size(); ++j) {
    if (std::abs(q[j] - q_[j]) >= joints_[j].max_velocity * dt * (1.0 - 1e-9)) return true;
  }
  return false;
}

StepStatus JointRateWindow::LimitedStatus(double dt, const Eigen::VectorXd& q) const {
  return AtSpeedLimit(dt, q) ? StepStatus::kVelocityLimited : StepStatus::kAccelerationLimited;
}

void JointRateWindow::StepBox(double dt, Eigen::VectorXd& lo, Eigen::VectorXd& hi) const {
  for (int j = 0; j < q_.size(); ++j) {
    std::tie(lo[j], hi[j]) = StepRange(VelocityRangeOf(j, dt, false), VelocityRangeOf(j, dt, true),
                                       dt, joints_[j].range, q_[j]);
  }
}

JointRateWindow::StepLimits JointRateWindow::Limits(double dt) const {
  StepLimits limits;
  limits.lo.resize(q_.size());
  limits.hi.resize(q_.size());
  StepBox(dt, limits.lo, limits.hi);
  limits.weight = MotionWeights();
  limits.braking_intervals = BrakingIntervals(dt);
  return limits;
}

Eigen::VectorXd JointRateWindow::MotionWeights() const {
  const int n = size();
  double slowest = std::numeric_limits<double>::infinity();
  for (const JointRate& rate : joints_) slowest = std::min(slowest, rate.max_velocity);
  Eigen::VectorXd weight(n);
  for (int j = 0; j < n; ++j) {
    const double v_max = joints_[j].max_velocity;
    const double ratio = std::isfinite(slowest) && std::isfinite(v_max) ? slowest / v_max : 1.0;
    weight[j] = ratio * ratio;
  }
  return weight;
}

double JointRateWindow::BrakingIntervals(double dt) const {
  double intervals = 0.0;
  for (int j = 0; j < q_.size(); ++j) {
    const JointRate& rate = joints_[j];
    if (std::isfinite(rate.max_jerk)) {
      intervals = std::max(intervals, double(SimulateJerkBrake(rate, 0.0, v_[j], a_[j], dt).steps));
      continue;
    }
    const double reach = rate.max_acceleration * dt;
    if (std::isfinite(reach) && reach > 0.0)
      intervals = std::max(intervals, std::abs(v_[j]) / reach);
  }
  return intervals;
}

Eigen::VectorXd ClosestWithinLimits(const JointRateWindow& window, double dt, double safety_margin,
                                    const ClosestLinearization& linearize) {
  constexpr int kLinearizations = 3;
  constexpr double kDamping = 1e-6;  // Levenberg-Marquardt, relative (RelativeDamping)
  const Eigen::VectorXd& q_last = window.q();
  const auto [lo, hi, weight, braking] = window.Limits(dt);
  Eigen::VectorXd step = Eigen::VectorXd::Zero(q_last.size());
  for (int pass = 0; pass < kLinearizations; ++pass) {
    const std::optional<ClosestRows> rows =
        linearize(q_last + step, kClosestLookahead * safety_margin);
    if (!rows) break;
    const Eigen::VectorXd allowed = (safety_margin - rows->clearances.array()) / (1.0 + braking);
    step += BoxedLeastSquaresWithFloors(
        rows->jacobian, rows->error, rows->clearance_gradients, allowed, kClosestClearanceWeight,
        weight, lo - step, hi - step, RelativeDamping(rows->jacobian, weight, kDamping));
  }
  return q_last + step;
}

}  // namespace ikd::planning
