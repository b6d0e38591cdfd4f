// The outcome of one step of either arm kind: a sample of a path, a Track answer, a single
// pose. One enum for the chain arms (ik/) and the industrial arms (robot/), with the wire's
// StepStatus values (proto/ikd/v1/kinematics_service.proto).
#pragma once

namespace ikd::planning {

enum class StepStatus {
  kReached,  // on the target, clear of obstacles, within limits (industrial arms: checked by FK)
  // Chain arms: the target is outside the reachable shell; the hand is at its closest point.
  kClampedUnreachable,
  // No collision-free configuration (or way out) was found for this step, or the motion into it
  // from the previous step (every joint interpolated linearly) touches something.
  kInCollision,
  kJointLimitBlocked,  // the joint limits could not be met; the arm holds its last valid pose
  // Reached, but a joint passes its velocity (acceleration) limit at the requested timing
  // (paths: the summary gives the time scaling at which it would not); Track: the closest state
  // within the limits, short of the target.
  kVelocityLimited,
  kAccelerationLimited,
  // Industrial arms: every attempt ended at a singularity or the step budget (or the target is
  // out of reach); the arm holds the last configuration it reached on the way.
  kNotConverged,
  // Track with a deadline: no time was left to solve the target, so the arm braked from the last
  // answer (every joint towards rest at its acceleration limit): within every limit, short of
  // the target. The server also marks an answer solved past its deadline LATE on the wire.
  kLate,
};

// The status of a step whose motion in has least clearance `motion_clearance`: IN_COLLISION
// where it is negative and the step was otherwise good (reached, clamped, rate-limited or late);
// `status` unchanged otherwise (a blocked or unconverged step stays what it is).
StepStatus WithMotionClearance(StepStatus status, double motion_clearance);

// A path's samples counted by status: what the path summaries of both arm kinds start with.
struct StepCounts {
  int samples = 0;
  int reached = 0;
  int clamped = 0;  // CLAMPED_UNREACHABLE (chain arms)
  int in_collision = 0, limit_blocked = 0;
  int velocity_limited = 0, acceleration_limited = 0;
  int not_converged = 0;  // NOT_CONVERGED (industrial arms)
  int late = 0;           // LATE (Track with a deadline)

  // One more sample, with this status.
  void Add(StepStatus status);
  // Every sample reached, clear and within the rate limits.
  bool IsSolutionUsable() const { return reached == samples; }
};

// The wire's StepStatus name without its prefix: "REACHED", "IN_COLLISION", ...
const char* StepStatusName(StepStatus status);

}  // namespace ikd::planning
