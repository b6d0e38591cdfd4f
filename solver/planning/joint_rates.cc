#include "ikd/planning/joint_rates.h"

#include <tuple>

namespace ikd::planning {

JointRateWindow::JointRateWindow(std::vector<JointRate> joints) : joints_(std::move(joints)) {}

void JointRateWindow::Answer(const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  q_ = q;
  v_ = v;
}

void JointRateWindow::Approach(const Eigen::VectorXd& distance,
                               const Eigen::VectorXd& target_velocity) {
  approach_ = distance;
  target_velocity_ = target_velocity;
}

void JointRateWindow::ForgetApproach() { approach_.resize(0); }

std::pair<double, double> JointRateWindow::VelocityRangeOf(int j, double dt, bool braked) const {
  const JointRate& rate = joints_[j];
  const std::pair<double, double> range = VelocityRange(rate, q_[j], v_[j], dt);
  if (!braked || approach_.size() == 0) return range;
  return BrakedForTarget(range, approach_[j], target_velocity_[j], v_[j], rate.max_acceleration,
                         dt);
}

double JointRateWindow::FeasibleFraction(double dt, const Eigen::VectorXd& q) const {
  double fraction = 1.0;
  for (int j = 0; j < q.size(); ++j) {
    fraction = std::min(
        fraction, planning::FeasibleFraction((q[j] - q_[j]) / dt, VelocityRangeOf(j, dt, true)));
  }
  return fraction;
}

bool JointRateWindow::Clamp(double dt, Eigen::VectorXd& q) const {
  bool clamped = false;
  for (int j = 0; j < q.size(); ++j) {
    const double wanted = (q[j] - q_[j]) / dt;
    const auto [lo, hi] = VelocityRangeOf(j, dt, false);
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
    const double reach = joints_[j].max_acceleration * dt;
    if (std::isfinite(reach) && reach > 0.0)
      intervals = std::max(intervals, std::abs(v_[j]) / reach);
  }
  return intervals;
}

}  // namespace ikd::planning
