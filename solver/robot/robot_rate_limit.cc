#include "ikd/robot/robot_rate_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "ik/rate_range.h"
#include "motion.h"

namespace ikd::robot {

absl::StatusOr<RateLimitedRobotTracker> RateLimitedRobotTracker::Create(
    const Robot& robot, const RobotIkOptions& options, const Eigen::VectorXd& q0,
    const ik::Scene* scene) {
  auto tracker = RobotTracker::Create(robot, options, q0, scene);
  if (!tracker.ok()) return tracker.status();
  return RateLimitedRobotTracker(robot, *std::move(tracker));
}

RateLimitedRobotTracker::RateLimitedRobotTracker(const Robot& robot, RobotTracker tracker)
    : robot_(&robot), tracker_(std::move(tracker)) {}

RobotIkResult RateLimitedRobotTracker::StepTo(const ToolTarget& target, double time) {
  const double dt = time - time_;
  RobotIkResult result = answered_ ? tracker_.MoveTo(target, dt > 0.0 ? dt : 0.0)
                                   : tracker_.Solve(target);
  Eigen::VectorXd q = result.q;
  approach_.resize(0);
  if (answered_ && dt > 0.0 && lagging_ && last_target_) PlanApproach(*last_target_, dt, q);
  if (!answered_ || !(dt > 0.0) || !internal::HasRateLimits(*robot_)) {
    v_ = answered_ && dt > 0.0 ? Eigen::VectorXd((q - q_) / dt) : Eigen::VectorXd::Zero(q.size());
    lagging_ = false;
  } else if (double fraction = FeasibleFraction(dt, q); fraction < 1.0) {
    // Too fast: the tracker again from the last answer with the tool that fraction of the way,
    // any excess left clamped; a clamped arm that would touch something goes half as far.
    const RobotIkStatus reached = result.status;
    for (int attempt = 0; attempt <= kRetries; ++attempt, fraction *= 0.5) {
      tracker_.Reset(q_);
      result = tracker_.MoveTo(PartWay(target, fraction), dt);
      q = result.q;
      Clamp(dt, q);
      Rebuild(q, target, result);
      if (result.min_clearance >= std::min(0.0, clearance_)) break;
    }
    if (result.status != RobotIkStatus::kInCollision &&
        (reached == RobotIkStatus::kSolved || reached == RobotIkStatus::kVelocityLimitExceeded)) {
      result.status = AtSpeedLimit(dt, q) ? RobotIkStatus::kVelocityLimitExceeded
                                          : RobotIkStatus::kAccelerationLimitExceeded;
    }
    tracker_.Reset(q);
    v_ = (q - q_) / dt;
    lagging_ = true;
  } else {
    v_ = (q - q_) / dt;
    lagging_ = false;
  }
  q_ = q;
  last_target_ = target;
  time_ = time;
  clearance_ = result.min_clearance;
  answered_ = true;
  return result;
}

std::pair<double, double> RateLimitedRobotTracker::VelocityRange(int j, double dt,
                                                                 bool braked) const {
  const auto& limits = robot_->spec().joints[j].limits;
  constexpr double kNone = std::numeric_limits<double>::infinity();
  if (!limits) return ikd::internal::VelocityRange({kNone, kNone, std::nullopt}, q_[j], v_[j], dt);
  const bool accelerates = std::isfinite(limits->max_acceleration);
  // Without an acceleration limit there is no braking distance to keep from a position limit
  // (Clamp still holds the position inside it).
  const std::pair<double, double> range = ikd::internal::VelocityRange(
      {limits->max_velocity, limits->max_acceleration,
       accelerates ? std::optional(std::make_pair(limits->lower, limits->upper)) : std::nullopt},
      q_[j], v_[j], dt);
  return braked ? Braked(j, range, dt) : range;
}

void RateLimitedRobotTracker::PlanApproach(const ToolTarget& previous, double dt,
                                           const Eigen::VectorXd& q_target) {
  // The target's joint velocity: the previous target solved from the same start, so that the
  // difference is the target's own motion, not the catching up.
  tracker_.Reset(q_);
  const RobotIkResult before = tracker_.MoveTo(previous, dt);
  tracker_.Reset(q_target);
  if (before.status != RobotIkStatus::kSolved &&
      before.status != RobotIkStatus::kVelocityLimitExceeded) {
    return;
  }
  target_velocity_ = (q_target - before.q) / dt;
  approach_ = q_target - q_;
}

std::pair<double, double> RateLimitedRobotTracker::Braked(int j, std::pair<double, double> range,
                                                          double dt) const {
  const auto& limits = robot_->spec().joints[j].limits;
  if (approach_.size() == 0 || !limits) return range;
  return ikd::internal::BrakedForTarget(range, approach_[j], target_velocity_[j], v_[j],
                                   limits->max_acceleration, dt);
}

double RateLimitedRobotTracker::FeasibleFraction(double dt, const Eigen::VectorXd& q) const {
  double fraction = 1.0;
  for (int j = 0; j < q.size(); ++j) {
    fraction = std::min(fraction, ikd::internal::FeasibleFraction((q[j] - q_[j]) / dt,
                                                                  VelocityRange(j, dt, true)));
  }
  return fraction;
}

bool RateLimitedRobotTracker::Clamp(double dt, Eigen::VectorXd& q) const {
  bool clamped = false;
  for (int j = 0; j < q.size(); ++j) {
    const double wanted = (q[j] - q_[j]) / dt;
    const auto [lo, hi] = VelocityRange(j, dt, false);
    double next = q_[j] + std::clamp(wanted, lo, hi) * dt;
    if (const auto& limits = robot_->spec().joints[j].limits) {
      next = std::clamp(next, limits->lower, limits->upper);
    }
    if (next == q[j]) continue;
    clamped = true;
    q[j] = next;
  }
  return clamped;
}

bool RateLimitedRobotTracker::AtSpeedLimit(double dt, const Eigen::VectorXd& q) const {
  for (int j = 0; j < q.size(); ++j) {
    const auto& limits = robot_->spec().joints[j].limits;
    if (limits && std::abs(q[j] - q_[j]) >= limits->max_velocity * dt * (1.0 - 1e-9)) return true;
  }
  return false;
}

void RateLimitedRobotTracker::Rebuild(const Eigen::VectorXd& q, const ToolTarget& target,
                                      RobotIkResult& result) {
  result.q = q;
  result.sites = robot_->SitesFromAngles(q);
  std::tie(result.position_error, result.rotation_error) = internal::ToolErrors(*robot_, q, target);
  result.min_clearance = tracker_.MinClearance(q);
  if (result.min_clearance < 0.0) result.status = RobotIkStatus::kInCollision;
}

ToolTarget RateLimitedRobotTracker::PartWay(const ToolTarget& target, double fraction) const {
  const Eigen::Isometry3d X = ToolPose(robot_->spec(), q_);
  ToolTarget part = target;
  part.position = X.translation() + fraction * (target.position - X.translation());
  if (target.orientation) {
    part.orientation = Eigen::Quaterniond(X.linear()).slerp(fraction, *target.orientation);
  }
  return part;
}

}  // namespace ikd::robot
