#include "ikd/ik/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

#include "ikd/planning/stopping.h"
#include "ikd/planning/swept_clearance.h"
#include "path_optimizer.h"

namespace ikd::ik {

using internal::NearestTurn;

absl::StatusOr<RateLimitedTracker> RateLimitedTracker::Create(
    const Arm& arm, const planning::Scene* scene, const IkOptions& options,
    std::optional<Eigen::Matrix3Xd> initial_sites) {
  auto tracker = ArmTracker::Create(arm, scene, options, std::move(initial_sites));
  if (!tracker.ok()) return tracker.status();
  return RateLimitedTracker(arm, scene, *std::move(tracker), options.safety_margin);
}

RateLimitedTracker::RateLimitedTracker(const Arm& arm, const planning::Scene* scene,
                                       ArmTracker tracker, double safety_margin)
    : arm_(&arm),
      scene_(scene),
      body_(arm),
      tracker_(std::move(tracker)),
      safety_margin_(safety_margin),
      window_(AngleRates(arm)) {}

std::vector<planning::JointRate> RateLimitedTracker::AngleRates(const Arm& arm) {
  std::vector<planning::JointRate> rates(arm.num_angles());
  const auto& limits = arm.spec().joint_limits;
  for (int j = 0; j < arm.num_angles(); ++j) {
    const int joint = arm.JointOfAngle(j);
    const JointRateLimit& limit = arm.RateLimit(joint);
    rates[j].max_velocity = limit.max_velocity;
    rates[j].max_acceleration = limit.max_acceleration;
    rates[j].max_jerk = limit.max_jerk;
    const bool bend = arm.planar() || j % 2 == 0;  // a spatial azimuth has no range
    if (!limits.empty() && joint > 0 && bend && limits[joint - 1]) {
      rates[j].range = std::make_pair(limits[joint - 1]->min, limits[joint - 1]->max);
    }
    if (!arm.planar() && bend) rates[j].range = OutOfTheStraightBand(rates[j].range);
  }
  return rates;
}

std::pair<double, double> RateLimitedTracker::OutOfTheStraightBand(
    std::optional<std::pair<double, double>> declared) {
  constexpr double kPi = std::numbers::pi;
  const auto [lo, hi] = declared.value_or(std::make_pair(0.0, kPi));
  const double band_lo = std::max(lo, kMinBend), band_hi = std::min(hi, kPi - kMinBend);
  if (band_lo > band_hi) return {lo, hi};  // a declared range inside the band: as declared
  return {band_lo, band_hi};
}

absl::StatusOr<IkResult> RateLimitedTracker::StepTo(const Eigen::Vector3d& target, double time) {
  const Eigen::Matrix3Xd last = tracker_.sites();  // the last answer: the tracker goes on from it
  const std::optional<Eigen::Matrix3Xd> before = reference_;
  if (FollowsReference()) tracker_.Restart(*reference_);
  absl::StatusOr<IkResult> step = tracker_.StepTo(target, time);
  if (!step.ok()) return step;
  if (window_.jerk_limited()) reference_ = step->sites;
  Eigen::VectorXd q = Unwrapped(*step);
  const double dt = time - last_.time;
  window_.ForgetApproach();
  const planning::ReferenceMotion::Step reference_step =
      window_.jerk_limited() ? reference_motion_.Move(ReferenceAngles(before, *step), q, dt)
                             : planning::ReferenceMotion::Step{};
  if (last_.answered && dt > 0.0 && last_.lagging && arm_->HasRateLimits()) {
    if (reference_step.velocity.size() > 0) {
      window_.Approach(q - window_.q(), reference_step.velocity, reference_step.acceleration);
    } else if (absl::Status s = PlanApproach(last, time, *step, q); !s.ok()) {
      return s;
    }
  }
  Eigen::VectorXd v;
  if (!last_.answered || !(dt > 0.0) || !arm_->HasRateLimits()) {
    v = last_.answered && dt > 0.0 ? Eigen::VectorXd((q - window_.q()) / dt)
                                   : Eigen::VectorXd::Zero(q.size());
    last_.lagging = false;
  } else if (window_.jerk_limited() && last_.target && target == *last_.target &&
             !window_.Within(dt, q)) {
    // A still target too far for jerk-limited joints: each joint towards the reference's value
    // as fast as its window allows without passing it (JerkBrakedForTarget), a time-optimal
    // approach joint by joint, or the closest state within the limits where that is on the
    // target. (The hand-nearest states of the branch below set jerk-limited joints swinging
    // about a still target: a 5-limb arm 7 cm past one 0.5 m away, 19 cm off it after 6 s.)
    window_.Clamp(dt, q, /*braked=*/true);
    if (!Rebuild(q, *step)) return absl::InternalError("jerk-limited answer off the arm");
    step->hand_error = (step->sites.col(arm_->hand()) - target).norm();
    if (step->status == planning::StepStatus::kReached ||
        step->status == planning::StepStatus::kClampedUnreachable) {
      step->status = window_.LimitedStatus(dt, q);
    }
    last_.lagging = !TakeClosestWithinLimits(target, dt, *step, q, /*only_on_target=*/true);
    tracker_.Restart(step->sites);
    v = (q - window_.q()) / dt;
  } else if (double fraction = window_.FeasibleFraction(dt, q); fraction < 1.0) {
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
      if (window_.Clamp(dt, q)) Rebuild(q, *step);
      if (step->min_clearance >= std::min(0.0, last_.clearance)) break;
    }
    step->hand_error = (step->sites.col(arm_->hand()) - target).norm();
    if (step->status == planning::StepStatus::kReached ||
        step->status == planning::StepStatus::kClampedUnreachable) {
      step->status = window_.LimitedStatus(dt, q);
    }
    last_.lagging = !TakeClosestWithinLimits(target, dt, *step, q);
    tracker_.Restart(step->sites);
    v = (q - window_.q()) / dt;
  } else {
    v = (q - window_.q()) / dt;
    last_.lagging = false;
  }
  if (last_.answered) {
    const planning::SafetyHold hold =
        planning::HoldIfUnsafe(window_, body_, scene_, arm_->HasRateLimits(), dt, last_.clearance,
                               *step, q, v, [&](const Eigen::VectorXd& blend, IkResult& held) {
                                 return RebuildTowards(target, blend, held);
                               });
    if (hold == planning::SafetyHold::kBraking) last_.lagging = true;
    if (hold != planning::SafetyHold::kNone) tracker_.Restart(step->sites);
  }
  // A hand on the target by another configuration than the reference's: the arm is there, so
  // the next target is solved from it (else it would go on chasing the reference's joints).
  if (window_.jerk_limited() && step->hand_error <= kOnTargetWithin) reference_ = step->sites;
  window_.Answer(q, v, dt);
  last_.Record(target, time, step->min_clearance);
  return step;
}

IkResult RateLimitedTracker::Brake(const Eigen::Vector3d& target, double time) {
  const double dt = time - last_.time;
  IkResult step;
  Eigen::VectorXd q = last_.answered && dt > 0.0 ? window_.Braked(dt) : Eigen::VectorXd();
  const bool moving = q.size() > 0 && Rebuild(q, step);
  if (!moving) {  // at rest where it is
    step.sites = tracker_.sites();
    step.angles = arm_->AnglesFromSites(step.sites);
    step.min_clearance = tracker_.MinClearance(step.sites);
    step.constraint_residual = arm_->chain_model().MaxRelativeViolation(step.sites);
    q = last_.answered ? window_.q() : Eigen::VectorXd::Map(step.angles.data(), step.angles.size());
  }
  step.time = time;
  step.hand_error = (step.sites.col(arm_->hand()) - target).norm();
  planning::AnswerLate(window_, body_, scene_, q, dt, moving, step);
  tracker_.Restart(step.sites);
  last_.Record(target, time, step.min_clearance);
  last_.lagging = true;  // short of the target: the next answer brakes for it
  return step;
}

Eigen::VectorXd RateLimitedTracker::Unwrapped(const IkResult& step) const {
  Eigen::VectorXd q(static_cast<int>(step.angles.size()));
  for (int j = 0; j < q.size(); ++j) {
    q[j] = last_.answered ? NearestTurn(step.angles[j], window_.q()[j]) : step.angles[j];
  }
  return q;
}

Eigen::VectorXd RateLimitedTracker::ReferenceAngles(const std::optional<Eigen::Matrix3Xd>& sites,
                                                    const IkResult& step) const {
  if (!sites) return {};
  IkResult reference = step;  // its angles, unwrapped as the answers are
  reference.angles = arm_->AnglesFromSites(*sites);
  return Unwrapped(reference);
}

absl::Status RateLimitedTracker::PlanApproach(const Eigen::Matrix3Xd& last, double time,
                                              const IkResult& step, const Eigen::VectorXd& q) {
  // The target's joint velocity: the previous target solved from the same start, so that the
  // difference is the target's own motion, not the catching up.
  tracker_.Restart(last);
  absl::StatusOr<IkResult> before = tracker_.StepTo(*last_.target, time);
  if (!before.ok()) return before.status();
  tracker_.Restart(step.sites);
  if (before->status != planning::StepStatus::kReached) return absl::OkStatus();
  window_.Approach(q - window_.q(), (q - Unwrapped(*before)) / (time - last_.time));
  return absl::OkStatus();
}

bool RateLimitedTracker::TakeClosestWithinLimits(const Eigen::Vector3d& target, double dt,
                                                 IkResult& step, Eigen::VectorXd& q,
                                                 bool only_on_target) {
  // The tracker's way cut to the limits moves the hand only as far as its slowest joint
  // allows; the other joints can make up the rest.
  IkResult closest = step;
  const Eigen::VectorXd q_closest = ClosestWithinLimits(target, dt);
  if (!Rebuild(q_closest, closest)) return false;
  closest.hand_error = (closest.sites.col(arm_->hand()) - target).norm();
  if (!planning::PreferClosest(closest.min_clearance, closest.hand_error, step.min_clearance,
                               step.hand_error, last_.clearance, safety_margin_)) {
    return false;
  }
  const bool on_target = closest.hand_error <= kReachedWithin;
  if (only_on_target && !on_target) return false;
  return planning::TakeClosestAnswer(window_, dt, on_target, closest, q_closest, step, q);
}

std::optional<Eigen::Matrix3Xd> RateLimitedTracker::SitesAt(const Eigen::VectorXd& q) const {
  absl::StatusOr<Eigen::Matrix3Xd> sites =
      arm_->SitesFromAngles(std::vector<double>(q.data(), q.data() + q.size()));
  if (!sites.ok()) return std::nullopt;
  return *std::move(sites);
}

Eigen::VectorXd RateLimitedTracker::ClosestWithinLimits(const Eigen::Vector3d& target,
                                                        double dt) const {
  return planning::ClosestWithinLimits(
      window_, dt, safety_margin_,
      [&](const Eigen::VectorXd& q, double within) { return ClosestRowsAt(target, q, within); });
}

std::optional<planning::ClosestRows> RateLimitedTracker::ClosestRowsAt(
    const Eigen::Vector3d& target, const Eigen::VectorXd& q, double within) const {
  const std::optional<Eigen::Matrix3Xd> sites = SitesAt(q);
  if (!sites) return std::nullopt;
  // The hand's Jacobian and the near pairs' clearance gradients, by forward differences.
  const std::vector<NearPair> pairs = NearPairs(*sites, within);
  const int n = static_cast<int>(q.size());
  const int p = static_cast<int>(pairs.size());
  planning::ClosestRows rows{Eigen::MatrixXd(3, n), target - sites->col(arm_->hand()),
                             Eigen::MatrixXd(p, n), Eigen::VectorXd(p)};
  for (int i = 0; i < p; ++i) rows.clearances[i] = pairs[i].clearance;
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd shifted = q;
    shifted[j] += kJacobianStep;
    const std::optional<Eigen::Matrix3Xd> moved = SitesAt(shifted);
    if (!moved) {
      rows.jacobian.col(j).setZero();
      rows.clearance_gradients.col(j).setZero();
      continue;
    }
    rows.jacobian.col(j) = (moved->col(arm_->hand()) - sites->col(arm_->hand())) / kJacobianStep;
    for (int i = 0; i < p; ++i) {
      rows.clearance_gradients(i, j) =
          (PairClearance(pairs[i], *moved) - pairs[i].clearance) / kJacobianStep;
    }
  }
  return rows;
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
    return planning::SignedDistance(scene_->obstacles()[pair.other].shape, sites.col(k),
                                    sites.col(k + 1), limbs[k].radius);
  }
  const int l = pair.other;
  return planning::SegmentSegmentDistance(sites.col(k), sites.col(k + 1), sites.col(l),
                                          sites.col(l + 1)) -
         limbs[k].radius - limbs[l].radius;
}

bool RateLimitedTracker::RebuildTowards(const Eigen::Vector3d& target, const Eigen::VectorXd& q,
                                        IkResult& step) {
  if (!Rebuild(q, step)) return false;
  step.hand_error = (step.sites.col(arm_->hand()) - target).norm();
  return true;
}

bool RateLimitedTracker::Rebuild(const Eigen::VectorXd& q, IkResult& step) {
  absl::StatusOr<Eigen::Matrix3Xd> sites =
      arm_->SitesFromAngles(std::vector<double>(q.data(), q.data() + q.size()));
  if (!sites.ok()) return false;
  step.sites = *std::move(sites);
  step.angles = arm_->AnglesFromSites(step.sites);
  step.min_clearance = tracker_.MinClearance(step.sites);
  step.constraint_residual = arm_->chain_model().MaxRelativeViolation(step.sites);
  if (step.min_clearance < 0.0) step.status = planning::StepStatus::kInCollision;
  return true;
}

}  // namespace ikd::ik
