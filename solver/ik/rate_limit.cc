#include "ikd/ik/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "boxed_least_squares.h"
#include "path_optimizer.h"
#include "rate_range.h"

namespace ikd::ik {

using internal::NearestTurn;

absl::StatusOr<RateLimitedTracker> RateLimitedTracker::Create(
    const Arm& arm, const Scene* scene, const IkOptions& options,
    std::optional<Eigen::Matrix3Xd> initial_sites) {
  auto tracker = ArmTracker::Create(arm, scene, options, std::move(initial_sites));
  if (!tracker.ok()) return tracker.status();
  return RateLimitedTracker(arm, scene, *std::move(tracker), options.safety_margin);
}

RateLimitedTracker::RateLimitedTracker(const Arm& arm, const Scene* scene, ArmTracker tracker,
                                       double safety_margin)
    : arm_(&arm), scene_(scene), tracker_(std::move(tracker)), safety_margin_(safety_margin) {}

absl::StatusOr<IkResult> RateLimitedTracker::StepTo(const Eigen::Vector3d& target, double time) {
  const Eigen::Matrix3Xd last = tracker_.sites();  // the last answer: the tracker goes on from it
  absl::StatusOr<IkResult> step = tracker_.StepTo(target, time);
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
      absl::StatusOr<IkResult> slower = tracker_.StepTo(hand + fraction * (target - hand), time);
      if (!slower.ok()) return slower;
      *step = *std::move(slower);
      q = Unwrapped(*step);
      if (Clamp(dt, q)) Rebuild(q, *step);
      if (step->min_clearance >= std::min(0.0, clearance_)) break;
    }
    step->hand_error = (step->sites.col(arm_->hand()) - target).norm();
    if (step->status == IkStatus::kReached || step->status == IkStatus::kClampedUnreachable) {
      step->status =
          AtSpeedLimit(dt, q) ? IkStatus::kVelocityLimited : IkStatus::kAccelerationLimited;
    }
    lagging_ = !TakeClosestWithinLimits(target, dt, *step, q);
    tracker_.Restart(step->sites);
    v_ = (q - q_) / dt;
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

Eigen::VectorXd RateLimitedTracker::Unwrapped(const IkResult& step) const {
  Eigen::VectorXd q(static_cast<int>(step.angles.size()));
  for (int j = 0; j < q.size(); ++j) {
    q[j] = answered_ ? NearestTurn(step.angles[j], q_[j]) : step.angles[j];
  }
  return q;
}

absl::Status RateLimitedTracker::PlanApproach(const Eigen::Matrix3Xd& last, double time,
                                              const IkResult& step, const Eigen::VectorXd& q) {
  // The target's joint velocity: the previous target solved from the same start, so that the
  // difference is the target's own motion, not the catching up.
  tracker_.Restart(last);
  absl::StatusOr<IkResult> before = tracker_.StepTo(last_target_, time);
  if (!before.ok()) return before.status();
  tracker_.Restart(step.sites);
  if (before->status != IkStatus::kReached) return absl::OkStatus();
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

bool RateLimitedTracker::TakeClosestWithinLimits(const Eigen::Vector3d& target, double dt,
                                                 IkResult& step, Eigen::VectorXd& q) {
  // The tracker's way cut to the limits moves the hand only as far as its slowest joint
  // allows; the other joints can make up the rest.
  IkResult closest = step;
  const Eigen::VectorXd q_closest = ClosestWithinLimits(target, dt);
  if (!Rebuild(q_closest, closest)) return false;
  closest.hand_error = (closest.sites.col(arm_->hand()) - target).norm();
  if (!ikd::internal::PreferClosest(closest.min_clearance, closest.hand_error, step.min_clearance,
                                    step.hand_error, clearance_, safety_margin_)) {
    return false;
  }
  const bool on_target = closest.hand_error <= kReachedWithin;
  // Its own status (the copy carries the cut way's, which may have collided).
  closest.status = closest.min_clearance < 0.0   ? IkStatus::kInCollision
                   : on_target                   ? IkStatus::kReached
                   : AtSpeedLimit(dt, q_closest) ? IkStatus::kVelocityLimited
                                                 : IkStatus::kAccelerationLimited;
  step = std::move(closest);
  q = q_closest;
  return on_target && step.status == IkStatus::kReached;
}

std::optional<Eigen::Matrix3Xd> RateLimitedTracker::SitesAt(const Eigen::VectorXd& q) const {
  absl::StatusOr<Eigen::Matrix3Xd> sites =
      arm_->SitesFromAngles(std::vector<double>(q.data(), q.data() + q.size()));
  if (!sites.ok()) return std::nullopt;
  return *std::move(sites);
}

Eigen::VectorXd RateLimitedTracker::ClosestWithinLimits(const Eigen::Vector3d& target,
                                                        double dt) const {
  const int n = static_cast<int>(q_.size());
  Eigen::VectorXd lo(n), hi(n);
  StepBox(dt, lo, hi);
  const Eigen::VectorXd weight = MotionWeights();
  const double braking = BrakingIntervals(dt);
  Eigen::VectorXd step = Eigen::VectorXd::Zero(n);
  for (int pass = 0; pass < kLinearizations; ++pass) {
    const Eigen::VectorXd q = q_ + step;
    const std::optional<Eigen::Matrix3Xd> sites = SitesAt(q);
    if (!sites) break;
    // The hand's Jacobian and the near pairs' clearance gradients, by forward differences.
    const std::vector<NearPair> pairs = NearPairs(*sites, kLookahead * safety_margin_);
    const int p = static_cast<int>(pairs.size());
    Eigen::MatrixXd hand_rows(3, n), clearance_rows(p, n);
    for (int j = 0; j < n; ++j) {
      Eigen::VectorXd shifted = q;
      shifted[j] += kJacobianStep;
      const std::optional<Eigen::Matrix3Xd> moved = SitesAt(shifted);
      if (!moved) {
        hand_rows.col(j).setZero();
        clearance_rows.col(j).setZero();
        continue;
      }
      hand_rows.col(j) = (moved->col(arm_->hand()) - sites->col(arm_->hand())) / kJacobianStep;
      for (int i = 0; i < p; ++i) {
        clearance_rows(i, j) =
            (PairClearance(pairs[i], *moved) - pairs[i].clearance) / kJacobianStep;
      }
    }
    // Clearance as active inequalities: a pair may close in on the safety margin by at most
    // 1 / (1 + k) of the way left, k the intervals the joints need to brake at their
    // acceleration limits (so that the arm can still stop outside the margin), and inside the
    // margin it moves back out as fast; a pair whose step closes in faster joins the rows with
    // that change asked for, kClearanceWeight times as heavy as the hand.
    Eigen::VectorXd allowed(p);
    for (int i = 0; i < p; ++i) {
      allowed[i] = (safety_margin_ - pairs[i].clearance) / (1.0 + braking);
    }
    const Eigen::VectorXd d = internal::BoxedLeastSquaresWithFloors(
        hand_rows, target - sites->col(arm_->hand()), clearance_rows, allowed, kClearanceWeight,
        weight, lo - step, hi - step, internal::RelativeDamping(hand_rows, weight, kDamping));
    step += d;
  }
  return q_ + step;
}

double RateLimitedTracker::BrakingIntervals(double dt) const {
  double intervals = 0.0;
  for (int j = 0; j < q_.size(); ++j) {
    const double reach = arm_->RateLimit(arm_->JointOfAngle(j)).max_acceleration * dt;
    if (std::isfinite(reach) && reach > 0.0)
      intervals = std::max(intervals, std::abs(v_[j]) / reach);
  }
  return intervals;
}

std::vector<RateLimitedTracker::NearPair> RateLimitedTracker::NearPairs(
    const Eigen::Matrix3Xd& sites, double within) const {
  std::vector<NearPair> pairs;
  const int limbs = arm_->num_limbs();
  for (int k = 0; k < limbs; ++k) {
    if (scene_ != nullptr) {
      const double radius = arm_->spec().limbs[k].radius;
      for (const auto& [o, distance] :
           scene_->SignedDistancesBelow(sites.col(k), sites.col(k + 1), radius, within)) {
        pairs.push_back({k, o, true, distance});
      }
    }
    for (int l = k + 2; l < limbs; ++l) {
      NearPair pair{k, l, false};
      pair.clearance = PairClearance(pair, sites);
      if (pair.clearance < within) pairs.push_back(pair);
    }
  }
  return pairs;
}

double RateLimitedTracker::PairClearance(const NearPair& pair,
                                         const Eigen::Matrix3Xd& sites) const {
  const auto& limbs = arm_->spec().limbs;
  const int k = pair.limb;
  if (pair.obstacle) {
    return SignedDistance(scene_->obstacles()[pair.other].shape, sites.col(k), sites.col(k + 1),
                          limbs[k].radius);
  }
  const int l = pair.other;
  return SegmentSegmentDistance(sites.col(k), sites.col(k + 1), sites.col(l), sites.col(l + 1)) -
         limbs[k].radius - limbs[l].radius;
}

void RateLimitedTracker::StepBox(double dt, Eigen::VectorXd& lo, Eigen::VectorXd& hi) const {
  for (int j = 0; j < q_.size(); ++j) {
    std::optional<std::pair<double, double>> position;
    if (const std::optional<JointLimit> range = PositionLimit(j)) {
      position = std::make_pair(range->min, range->max);
    }
    std::tie(lo[j], hi[j]) = ikd::internal::StepRange(
        VelocityRange(j, dt, false), VelocityRange(j, dt, true), dt, position, q_[j]);
  }
}

Eigen::VectorXd RateLimitedTracker::MotionWeights() const {
  const int n = static_cast<int>(q_.size());
  double slowest = std::numeric_limits<double>::infinity();
  for (int j = 0; j < n; ++j) {
    slowest = std::min(slowest, arm_->RateLimit(arm_->JointOfAngle(j)).max_velocity);
  }
  Eigen::VectorXd weight(n);
  for (int j = 0; j < n; ++j) {
    const double v_max = arm_->RateLimit(arm_->JointOfAngle(j)).max_velocity;
    const double ratio = std::isfinite(slowest) && std::isfinite(v_max) ? slowest / v_max : 1.0;
    weight[j] = ratio * ratio;
  }
  return weight;
}

bool RateLimitedTracker::Rebuild(const Eigen::VectorXd& q, IkResult& step) {
  absl::StatusOr<Eigen::Matrix3Xd> sites =
      arm_->SitesFromAngles(std::vector<double>(q.data(), q.data() + q.size()));
  if (!sites.ok()) return false;
  step.sites = *std::move(sites);
  step.angles = arm_->AnglesFromSites(step.sites);
  step.min_clearance = tracker_.MinClearance(step.sites);
  step.constraint_residual = arm_->chain_model().MaxRelativeViolation(step.sites);
  if (step.min_clearance < 0.0) step.status = IkStatus::kInCollision;
  return true;
}

}  // namespace ikd::ik
