#include "ikd/ik/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "path_optimizer.h"
#include "rate_range.h"

namespace ikd::ik {

using internal::NearestTurn;

absl::StatusOr<RateLimitedTracker> RateLimitedTracker::Create(
    const Arm& arm, const Scene* scene, const IkOptions& options,
    std::optional<Eigen::Matrix3Xd> initial_sites) {
  auto tracker = ArmTracker::Create(arm, scene, options, std::move(initial_sites));
  if (!tracker.ok()) return tracker.status();
  return RateLimitedTracker(arm, *std::move(tracker));
}

RateLimitedTracker::RateLimitedTracker(const Arm& arm, ArmTracker tracker)
    : arm_(&arm), tracker_(std::move(tracker)) {}

absl::StatusOr<IkStep> RateLimitedTracker::StepTo(const Eigen::Vector3d& target, double time) {
  const Eigen::Matrix3Xd last = tracker_.sites();  // the last answer: the tracker goes on from it
  absl::StatusOr<IkStep> step = tracker_.StepTo(target, time);
  if (!step.ok()) return step;
  Eigen::VectorXd q = Unwrapped(*step);
  const double dt = time - time_;
  approach_.resize(0);
  if (answered_ && dt > 0.0 && lagging_ && arm_->HasRateLimits()) {
    if (absl::Status s = PlanApproach(last, time, *step, q); !s.ok()) return s;
  }
  if (!answered_ || !(dt > 0.0) || !arm_->HasRateLimits()) {
    v_ = answered_ && dt > 0.0 ? Eigen::VectorXd((q - q_) / dt) : Eigen::VectorXd::Zero(q.size());
    lagging_ = false;
  } else if (double fraction = FeasibleFraction(dt, q); fraction < 1.0) {
    // Too fast: the tracker again from the last answer with the hand that fraction of the way
    // (its configurations keep their clearance), any excess left clamped joint by joint; a
    // clamped arm that would touch something takes half the way again, up to kRetries times.
    const Eigen::Vector3d hand = last.col(arm_->hand());
    for (int attempt = 0; attempt <= kRetries; ++attempt, fraction *= 0.5) {
      tracker_.Restart(last);
      absl::StatusOr<IkStep> slower = tracker_.StepTo(hand + fraction * (target - hand), time);
      if (!slower.ok()) return slower;
      *step = *std::move(slower);
      q = Unwrapped(*step);
      if (Clamp(dt, q)) Rebuild(q, *step);
      if (step->min_clearance >= std::min(0.0, clearance_)) break;
    }
    step->hand_error = (step->sites.col(arm_->hand()) - target).norm();
    if (step->status == StepStatus::kReached || step->status == StepStatus::kClampedUnreachable) {
      step->status = AtSpeedLimit(dt, q) ? StepStatus::kVelocityLimited
                                         : StepStatus::kAccelerationLimited;
    }
    tracker_.Restart(step->sites);
    v_ = (q - q_) / dt;
    lagging_ = true;
  } else {
    v_ = (q - q_) / dt;
    lagging_ = false;
  }
  q_ = q;
  last_target_ = target;
  time_ = time;
  clearance_ = step->min_clearance;
  answered_ = true;
  return step;
}

Eigen::VectorXd RateLimitedTracker::Unwrapped(const IkStep& step) const {
  Eigen::VectorXd q(static_cast<int>(step.angles.size()));
  for (int j = 0; j < q.size(); ++j) {
    q[j] = answered_ ? NearestTurn(step.angles[j], q_[j]) : step.angles[j];
  }
  return q;
}

absl::Status RateLimitedTracker::PlanApproach(const Eigen::Matrix3Xd& last, double time,
                                              const IkStep& step, const Eigen::VectorXd& q) {
  // The target's joint velocity: the previous target solved from the same start, so that the
  // difference is the target's own motion, not the catching up.
  tracker_.Restart(last);
  absl::StatusOr<IkStep> before = tracker_.StepTo(last_target_, time);
  if (!before.ok()) return before.status();
  tracker_.Restart(step.sites);
  if (before->status != StepStatus::kReached) return absl::OkStatus();
  target_velocity_ = (q - Unwrapped(*before)) / (time - time_);
  approach_ = q - q_;
  return absl::OkStatus();
}

std::pair<double, double> RateLimitedTracker::VelocityRange(int j, double dt, bool braked) const {
  const JointRateLimit& limit = arm_->RateLimit(arm_->JointOfAngle(j));
  ikd::internal::JointRate rate{limit.max_velocity, limit.max_acceleration, std::nullopt};
  if (const std::optional<JointLimit> range = PositionLimit(j)) {
    rate.range = std::make_pair(range->min, range->max);
  }
  const std::pair<double, double> range = ikd::internal::VelocityRange(rate, q_[j], v_[j], dt);
  if (!braked || approach_.size() == 0) return range;
  return ikd::internal::BrakedForTarget(range, approach_[j], target_velocity_[j], v_[j],
                                        limit.max_acceleration, dt);
}

std::optional<JointLimit> RateLimitedTracker::PositionLimit(int j) const {
  const auto& limits = arm_->spec().joint_limits;
  const int joint = arm_->JointOfAngle(j);
  const bool bend = arm_->planar() || j % 2 == 0;  // a spatial azimuth has no range
  if (limits.empty() || joint == 0 || !bend) return std::nullopt;
  return limits[joint - 1];
}

double RateLimitedTracker::FeasibleFraction(double dt, const Eigen::VectorXd& q) const {
  double fraction = 1.0;
  for (int j = 0; j < q.size(); ++j) {
    fraction = std::min(fraction,
                        ikd::internal::FeasibleFraction((q[j] - q_[j]) / dt, VelocityRange(j, dt, true)));
  }
  return fraction;
}

bool RateLimitedTracker::AtSpeedLimit(double dt, const Eigen::VectorXd& q) const {
  for (int j = 0; j < q.size(); ++j) {
    const double limit = arm_->RateLimit(arm_->JointOfAngle(j)).max_velocity;
    if (std::abs(q[j] - q_[j]) >= limit * dt * (1.0 - 1e-9)) return true;
  }
  return false;
}

bool RateLimitedTracker::Clamp(double dt, Eigen::VectorXd& q) const {
  bool clamped = false;
  for (int j = 0; j < q.size(); ++j) {
    const double wanted = (q[j] - q_[j]) / dt;
    const auto [lo, hi] = VelocityRange(j, dt, false);
    double v = std::clamp(wanted, lo, hi);
    if (const std::optional<JointLimit> range = PositionLimit(j)) {
      v = std::clamp(q_[j] + v * dt, range->min, range->max) / dt - q_[j] / dt;
    }
    if (v == wanted) continue;
    clamped = true;
    q[j] = q_[j] + v * dt;
  }
  return clamped;
}

bool RateLimitedTracker::Rebuild(const Eigen::VectorXd& q, IkStep& step) {
  absl::StatusOr<Eigen::Matrix3Xd> sites =
      arm_->SitesFromAngles(std::vector<double>(q.data(), q.data() + q.size()));
  if (!sites.ok()) return false;
  step.sites = *std::move(sites);
  step.angles = arm_->AnglesFromSites(step.sites);
  step.min_clearance = tracker_.MinClearance(step.sites);
  step.constraint_residual = arm_->chain_model().MaxRelativeViolation(step.sites);
  if (step.min_clearance < 0.0) step.status = StepStatus::kInCollision;
  return true;
}

}  // namespace ikd::ik
