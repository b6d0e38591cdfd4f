#include "ikd/robot/robot_rate_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include <Eigen/Geometry>

#include "ik/boxed_least_squares.h"
#include "ik/rate_range.h"
#include "motion.h"

namespace ikd::robot {

absl::StatusOr<RateLimitedRobotTracker> RateLimitedRobotTracker::Create(
    const Robot& robot, const RobotIkOptions& options, const Eigen::VectorXd& q0,
    const ik::Scene* scene) {
  auto tracker = RobotTracker::Create(robot, options, q0, scene);
  if (!tracker.ok()) return tracker.status();
  return RateLimitedRobotTracker(robot, *std::move(tracker), scene, options);
}

RateLimitedRobotTracker::RateLimitedRobotTracker(const Robot& robot, RobotTracker tracker,
                                                 const ik::Scene* scene,
                                                 const RobotIkOptions& options)
    : robot_(&robot),
      tracker_(std::move(tracker)),
      scene_(scene),
      safety_margin_(options.safety_margin),
      position_tolerance_(options.position_tolerance),
      rotation_tolerance_(options.rotation_tolerance) {}

RobotIkResult RateLimitedRobotTracker::StepTo(const ToolTarget& target, double time) {
  const double dt = time - time_;
  RobotIkResult result =
      answered_ ? tracker_.StepTo(target, dt > 0.0 ? dt : 0.0) : tracker_.Solve(target);
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
      result = tracker_.StepTo(PartWay(target, fraction), dt);
      q = result.q;
      Clamp(dt, q);
      Rebuild(q, target, result);
      if (result.min_clearance >= std::min(0.0, clearance_)) break;
    }
    if (result.status != RobotIkStatus::kInCollision &&
        (reached == RobotIkStatus::kReached || reached == RobotIkStatus::kVelocityLimited)) {
      result.status = AtSpeedLimit(dt, q) ? RobotIkStatus::kVelocityLimited
                                          : RobotIkStatus::kAccelerationLimited;
    }
    lagging_ = !TakeClosestWithinLimits(target, dt, result, q);
    tracker_.Reset(q);
    v_ = (q - q_) / dt;
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
  const RobotIkResult before = tracker_.StepTo(previous, dt);
  tracker_.Reset(q_target);
  if (before.status != RobotIkStatus::kReached &&
      before.status != RobotIkStatus::kVelocityLimited) {
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

bool RateLimitedRobotTracker::TakeClosestWithinLimits(const ToolTarget& target, double dt,
                                                      RobotIkResult& result, Eigen::VectorXd& q) {
  // The tracker's way cut to the limits moves the tool only as far as its slowest joint
  // allows; the other joints can make up the rest.
  RobotIkResult closest = result;
  const Eigen::VectorXd q_closest = ClosestWithinLimits(target, dt);
  Rebuild(q_closest, target, closest);
  const auto distance = [&](const RobotIkResult& r) {
    return r.position_error + kRotationLength * r.rotation_error;
  };
  if (!ikd::internal::PreferClosest(closest.min_clearance, distance(closest), result.min_clearance,
                                    distance(result), clearance_, safety_margin_)) {
    return false;
  }
  const bool on_target = closest.position_error <= position_tolerance_ &&
                         (!target.orientation || closest.rotation_error <= rotation_tolerance_);
  // Its own status (the copy carries the cut way's, which may have collided).
  closest.status = closest.min_clearance < 0.0   ? RobotIkStatus::kInCollision
                   : on_target                   ? RobotIkStatus::kReached
                   : AtSpeedLimit(dt, q_closest) ? RobotIkStatus::kVelocityLimited
                                                 : RobotIkStatus::kAccelerationLimited;
  result = std::move(closest);
  q = q_closest;
  return on_target && result.status == RobotIkStatus::kReached;
}

Eigen::VectorXd RateLimitedRobotTracker::ToolError(const ToolTarget& target,
                                                   const Eigen::VectorXd& q) const {
  const Eigen::Isometry3d X = ToolPose(robot_->spec(), q);
  Eigen::VectorXd error(target.orientation ? 6 : 3);
  error.head<3>() = target.position - X.translation();
  if (target.orientation) {
    const Eigen::AngleAxisd turn(target.orientation->normalized().toRotationMatrix() *
                                 X.linear().transpose());
    error.tail<3>() = kRotationLength * turn.angle() * turn.axis();
  }
  return error;
}

void RateLimitedRobotTracker::StepBox(double dt, Eigen::VectorXd& lo, Eigen::VectorXd& hi) const {
  for (int j = 0; j < q_.size(); ++j) {
    std::optional<std::pair<double, double>> position;
    if (const auto& limits = robot_->spec().joints[j].limits) {
      position = std::make_pair(limits->lower, limits->upper);
    }
    std::tie(lo[j], hi[j]) = ikd::internal::StepRange(
        VelocityRange(j, dt, false), VelocityRange(j, dt, true), dt, position, q_[j]);
  }
}

Eigen::VectorXd RateLimitedRobotTracker::ClosestWithinLimits(const ToolTarget& target,
                                                             double dt) const {
  const int n = static_cast<int>(q_.size());
  Eigen::VectorXd lo(n), hi(n), weight(n);
  StepBox(dt, lo, hi);
  double slowest = std::numeric_limits<double>::infinity(), braking = 0.0;
  for (int j = 0; j < n; ++j) slowest = std::min(slowest, internal::VelocityLimit(*robot_, j));
  for (int j = 0; j < n; ++j) {
    const double v_max = internal::VelocityLimit(*robot_, j);
    const double ratio = std::isfinite(slowest) && std::isfinite(v_max) ? slowest / v_max : 1.0;
    weight[j] = ratio * ratio;
    const auto& limits = robot_->spec().joints[j].limits;
    if (limits && std::isfinite(limits->max_acceleration) && limits->max_acceleration > 0.0) {
      braking = std::max(braking, std::abs(v_[j]) / (limits->max_acceleration * dt));
    }
  }
  Eigen::VectorXd step = Eigen::VectorXd::Zero(n);
  for (int pass = 0; pass < kLinearizations; ++pass) {
    const Eigen::VectorXd q = q_ + step;
    Eigen::MatrixXd jacobian = ToolJacobian(robot_->spec(), q);
    if (!target.orientation)
      jacobian.conservativeResize(3, n);
    else
      jacobian.bottomRows<3>() *= kRotationLength;
    const Eigen::VectorXd error = ToolError(target, q);
    const double mu = ikd::ik::internal::RelativeDamping(jacobian, weight, kDamping);
    // Links near an obstacle: a link may close in on the safety margin by at most 1 / (1 + k)
    // of the way left, k the intervals the joints need to brake (see ik/rate_limit.h); a link
    // whose step closes in faster joins the rows, kClearanceWeight times as heavy.
    Eigen::MatrixXd near_gradients(0, n);
    Eigen::VectorXd allowed(0);
    if (scene_ != nullptr && scene_->size() > 0) {
      const std::vector<double> clearance = internal::LinkClearances(*robot_, *scene_, q);
      std::vector<int> near;
      for (int l = 0; l < static_cast<int>(clearance.size()); ++l) {
        if (clearance[l] < kLookahead * safety_margin_) near.push_back(l);
      }
      if (!near.empty()) {
        const Eigen::MatrixXd gradients = internal::LinkClearanceGradients(*robot_, *scene_, q);
        near_gradients.resize(static_cast<int>(near.size()), n);
        allowed.resize(static_cast<int>(near.size()));
        for (size_t i = 0; i < near.size(); ++i) {
          near_gradients.row(i) = gradients.row(near[i]);
          allowed[i] = (safety_margin_ - clearance[near[i]]) / (1.0 + braking);
        }
      }
    }
    const Eigen::VectorXd d = ikd::ik::internal::BoxedLeastSquaresWithFloors(
        jacobian, error, near_gradients, allowed, kClearanceWeight, weight, lo - step, hi - step,
        mu);
    step += d;
  }
  return q_ + step;
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
