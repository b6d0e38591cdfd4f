#include "ikd/robot/robot_rate_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include <Eigen/Geometry>

#include "ikd/planning/stopping.h"
#include "ikd/planning/swept_clearance.h"
#include "motion.h"

namespace ikd::robot {

absl::StatusOr<RateLimitedRobotTracker> RateLimitedRobotTracker::Create(
    const Robot& robot, const RobotIkOptions& options, const Eigen::VectorXd& q0,
    const planning::Scene* scene) {
  auto tracker = RobotTracker::Create(robot, options, q0, scene);
  if (!tracker.ok()) return tracker.status();
  return RateLimitedRobotTracker(robot, *std::move(tracker), scene, options);
}

RateLimitedRobotTracker::RateLimitedRobotTracker(const Robot& robot, RobotTracker tracker,
                                                 const planning::Scene* scene,
                                                 const RobotIkOptions& options)
    : robot_(&robot),
      tracker_(std::move(tracker)),
      scene_(scene),
      body_(robot),
      safety_margin_(options.safety_margin),
      position_tolerance_(options.position_tolerance),
      rotation_tolerance_(options.rotation_tolerance),
      window_(JointRates(robot)) {}

std::vector<planning::JointRate> RateLimitedRobotTracker::JointRates(const Robot& robot) {
  std::vector<planning::JointRate> rates(robot.num_joints());
  for (int j = 0; j < robot.num_joints(); ++j) {
    if (const auto& limits = robot.spec().joints[j].limits) {
      rates[j] = {limits->max_velocity, limits->max_acceleration,
                  std::make_pair(limits->lower, limits->upper), limits->max_jerk};
    }
  }
  return rates;
}

namespace {

// Whether `target` holds the last one still (position and orientation, bit for bit).
bool SameTarget(const ToolTarget& target, const std::optional<ToolTarget>& last) {
  if (!last || target.position != last->position) return false;
  if (target.orientation.has_value() != last->orientation.has_value()) return false;
  return !target.orientation || target.orientation->coeffs() == last->orientation->coeffs();
}

}  // namespace

RobotIkResult RateLimitedRobotTracker::StepTo(const ToolTarget& target, double time) {
  const double dt = time - last_.time;
  const std::optional<Eigen::VectorXd> before = reference_;
  const bool follows_reference = window_.jerk_limited() && last_.lagging && reference_.has_value();
  if (last_.answered && follows_reference) tracker_.Reset(*reference_);
  RobotIkResult result =
      last_.answered ? tracker_.StepTo(target, dt > 0.0 ? dt : 0.0) : First(target);
  Eigen::VectorXd q = result.q;
  if (window_.jerk_limited()) reference_ = q;
  window_.ForgetApproach();
  const planning::ReferenceMotion::Step reference_step =
      window_.jerk_limited() ? reference_motion_.Move(before.value_or(Eigen::VectorXd()), q, dt)
                             : planning::ReferenceMotion::Step{};
  if (last_.answered && dt > 0.0 && last_.lagging && reference_step.velocity.size() > 0) {
    window_.Approach(q - window_.q(), reference_step.velocity, reference_step.acceleration);
  } else if (last_.answered && dt > 0.0 && last_.lagging && last_.target) {
    PlanApproach(*last_.target, dt, q);
  }
  Eigen::VectorXd v;
  if (!last_.answered || !(dt > 0.0) || !internal::HasRateLimits(*robot_)) {
    v = last_.answered && dt > 0.0 ? Eigen::VectorXd((q - window_.q()) / dt)
                                   : Eigen::VectorXd::Zero(q.size());
    last_.lagging = false;
  } else if (window_.jerk_limited() && SameTarget(target, last_.target) && !window_.Within(dt, q)) {
    // A still target too far for jerk-limited joints: each joint towards the reference's value
    // as fast as its window allows without passing it, or the closest state within the limits
    // where that is on the target (ik::RateLimitedTracker::StepTo says why).
    const planning::StepStatus reached = result.status;
    window_.Clamp(dt, q, /*braked=*/true);
    Rebuild(q, target, result);
    if (result.status != planning::StepStatus::kInCollision &&
        (reached == planning::StepStatus::kReached ||
         reached == planning::StepStatus::kVelocityLimited)) {
      result.status = window_.LimitedStatus(dt, q);
    }
    last_.lagging = !TakeClosestWithinLimits(target, dt, result, q, /*only_on_target=*/true);
    tracker_.Reset(q);
    v = (q - window_.q()) / dt;
  } else if (double fraction = window_.FeasibleFraction(dt, q); fraction < 1.0) {
    // Too fast: the tracker again from the last answer with the tool that fraction of the way,
    // any excess left clamped; a clamped arm that would touch something goes half as far.
    const planning::StepStatus reached = result.status;
    for (int attempt = 0; attempt <= kRetries; ++attempt, fraction *= 0.5) {
      tracker_.Reset(window_.q());
      result = tracker_.StepTo(PartWay(target, fraction), dt);
      q = result.q;
      window_.Clamp(dt, q);
      Rebuild(q, target, result);
      if (result.min_clearance >= std::min(0.0, last_.clearance)) break;
    }
    if (result.status != planning::StepStatus::kInCollision &&
        (reached == planning::StepStatus::kReached ||
         reached == planning::StepStatus::kVelocityLimited)) {
      result.status = window_.LimitedStatus(dt, q);
    }
    last_.lagging = !TakeClosestWithinLimits(target, dt, result, q);
    tracker_.Reset(q);
    v = (q - window_.q()) / dt;
  } else {
    v = (q - window_.q()) / dt;
    last_.lagging = false;
  }
  if (last_.answered) {
    const planning::SafetyHold hold = planning::HoldIfUnsafe(
        window_, body_, scene_, internal::HasRateLimits(*robot_), dt, last_.clearance, result, q, v,
        [&](const Eigen::VectorXd& blend, RobotIkResult& held) {
          Rebuild(blend, target, held);
          return true;  // every joint vector has an answer
        });
    if (hold == planning::SafetyHold::kBraking) last_.lagging = true;
    if (hold != planning::SafetyHold::kNone) tracker_.Reset(q);
  }
  // A tool on the target by another configuration than the reference's: the arm is there, so
  // the next target is solved from it.
  if (window_.jerk_limited() && result.status == planning::StepStatus::kReached) reference_ = q;
  window_.Answer(q, v, dt);
  last_.Record(target, time, result.min_clearance);
  return result;
}

RobotIkResult RateLimitedRobotTracker::First(const ToolTarget& target) {
  const Eigen::VectorXd start = tracker_.q();
  RobotIkResult at_start;
  Rebuild(start, target, at_start);
  const bool usable = at_start.min_clearance >= 0.0 && robot_->LimitViolation(start) <= 0.0;
  if (usable && at_start.min_clearance >= safety_margin_ &&
      at_start.position_error <= position_tolerance_ &&
      (!target.orientation || at_start.rotation_error <= rotation_tolerance_)) {
    at_start.status = planning::StepStatus::kReached;  // already there: nothing to solve
    return at_start;
  }
  RobotIkResult solved = tracker_.Solve(target);
  if (!usable || solved.min_clearance >= 0.0) return solved;
  at_start.status = solved.status;  // the solve collided: the arm stays where it is, clear
  tracker_.Reset(start);
  return at_start;
}

RobotIkResult RateLimitedRobotTracker::Brake(const ToolTarget& target, double time) {
  const double dt = time - last_.time;
  const bool moving = last_.answered && dt > 0.0;
  const Eigen::VectorXd q = moving           ? window_.Braked(dt)
                            : last_.answered ? window_.q()
                                             : tracker_.q();
  RobotIkResult result;
  Rebuild(q, target, result);
  planning::AnswerLate(window_, body_, scene_, q, dt, moving, result);
  tracker_.Reset(q);
  last_.Record(target, time, result.min_clearance);
  last_.lagging = true;  // short of the target: the next answer brakes for it
  return result;
}

void RateLimitedRobotTracker::PlanApproach(const ToolTarget& previous, double dt,
                                           const Eigen::VectorXd& q_target) {
  // The target's joint velocity: the previous target solved from the same start, so that the
  // difference is the target's own motion, not the catching up.
  tracker_.Reset(window_.q());
  const RobotIkResult before = tracker_.StepTo(previous, dt);
  tracker_.Reset(q_target);
  if (before.status != planning::StepStatus::kReached &&
      before.status != planning::StepStatus::kVelocityLimited) {
    return;
  }
  window_.Approach(q_target - window_.q(), (q_target - before.q) / dt);
}

void RateLimitedRobotTracker::Rebuild(const Eigen::VectorXd& q, const ToolTarget& target,
                                      RobotIkResult& result) {
  result.q = q;
  result.sites = robot_->SitesFromAngles(q);
  std::tie(result.position_error, result.rotation_error) = internal::ToolErrors(*robot_, q, target);
  result.min_clearance = tracker_.MinClearance(q);
  if (result.min_clearance < 0.0) result.status = planning::StepStatus::kInCollision;
}

bool RateLimitedRobotTracker::TakeClosestWithinLimits(const ToolTarget& target, double dt,
                                                      RobotIkResult& result, Eigen::VectorXd& q,
                                                      bool only_on_target) {
  // The tracker's way cut to the limits moves the tool only as far as its slowest joint
  // allows; the other joints can make up the rest.
  RobotIkResult closest = result;
  const Eigen::VectorXd q_closest = ClosestWithinLimits(target, dt);
  Rebuild(q_closest, target, closest);
  const auto distance = [&](const RobotIkResult& r) {
    return r.position_error + kRotationLength * r.rotation_error;
  };
  if (!planning::PreferClosest(closest.min_clearance, distance(closest), result.min_clearance,
                               distance(result), last_.clearance, safety_margin_)) {
    return false;
  }
  const bool on_target = closest.position_error <= position_tolerance_ &&
                         (!target.orientation || closest.rotation_error <= rotation_tolerance_);
  if (only_on_target && !on_target) return false;
  return planning::TakeClosestAnswer(window_, dt, on_target, closest, q_closest, result, q);
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

Eigen::VectorXd RateLimitedRobotTracker::ClosestWithinLimits(const ToolTarget& target,
                                                             double dt) const {
  return planning::ClosestWithinLimits(
      window_, dt, safety_margin_, [&](const Eigen::VectorXd& q, double within) {
        return std::optional<planning::ClosestRows>(ClosestRowsAt(target, q, within));
      });
}

planning::ClosestRows RateLimitedRobotTracker::ClosestRowsAt(const ToolTarget& target,
                                                             const Eigen::VectorXd& q,
                                                             double within) const {
  const int n = static_cast<int>(q.size());
  planning::ClosestRows rows{ToolJacobian(robot_->spec(), q), ToolError(target, q),
                             Eigen::MatrixXd(0, n), Eigen::VectorXd(0)};
  if (!target.orientation)
    rows.jacobian.conservativeResize(3, n);
  else
    rows.jacobian.bottomRows<3>() *= kRotationLength;
  if (!internal::ChecksClearance(*robot_, scene_)) return rows;
  // The links nearer than `within` to an obstacle, with their clearance gradients.
  const internal::LinkClearanceField field =
      internal::LinkClearancesWithGradients(*robot_, scene_, q, 0.0, within);
  std::vector<int> near;
  for (int l = 0; l < static_cast<int>(field.clearance.size()); ++l) {
    if (field.clearance[l] < within) near.push_back(l);
  }
  rows.clearance_gradients.resize(static_cast<int>(near.size()), n);
  rows.clearances.resize(static_cast<int>(near.size()));
  for (size_t i = 0; i < near.size(); ++i) {
    rows.clearance_gradients.row(i) = field.gradient.row(near[i]);
    rows.clearances[i] = field.clearance[near[i]];
  }
  return rows;
}

ToolTarget RateLimitedRobotTracker::PartWay(const ToolTarget& target, double fraction) const {
  const Eigen::Isometry3d X = ToolPose(robot_->spec(), window_.q());
  ToolTarget part = target;
  part.position = X.translation() + fraction * (target.position - X.translation());
  if (target.orientation) {
    part.orientation = Eigen::Quaterniond(X.linear()).slerp(fraction, *target.orientation);
  }
  return part;
}

}  // namespace ikd::robot
