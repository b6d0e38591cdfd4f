// The outcome of one step of either arm kind: a sample of a path, a Track answer, a single
// pose. One enum for the chain arms (ik/) and the industrial arms (robot/), with the wire's
// StepStatus values (proto/ikd/v1/kinematics_service.proto).
#pragma once

namespace ikd::planning {

enum class StepStatus {
  kReached,  // on the target, clear of obstacles, within limits (industrial arms: checked by FK)
  // Chain arms: the target is outside the reachable shell; the hand is at its closest point.
  kClampedUnreachable,
  kInCollision,        // no collision-free configuration (or way out) was found for this step
  kJointLimitBlocked,  // the joint limits could not be met; the arm holds its last valid pose
  // Reached, but a joint passes its velocity (acceleration) limit at the requested timing
  // (paths: the summary gives the time scaling at which it would not); Track: the closest state
  // within the limits, short of the target.
  kVelocityLimited,
  kAccelerationLimited,
  // Industrial arms: every attempt ended at a singularity or the step budget (or the target is
  // out of reach); the arm holds the last configuration it reached on the way.
  kNotConverged,
};

// The wire's StepStatus name without its prefix: "REACHED", "IN_COLLISION", ...
const char* StepStatusName(StepStatus status);

}  // namespace ikd::planning
