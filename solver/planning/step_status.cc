#include "ikd/planning/step_status.h"

namespace ikd::planning {

const char* StepStatusName(StepStatus status) {
  switch (status) {
    case StepStatus::kReached:
      return "REACHED";
    case StepStatus::kClampedUnreachable:
      return "CLAMPED_UNREACHABLE";
    case StepStatus::kInCollision:
      return "IN_COLLISION";
    case StepStatus::kJointLimitBlocked:
      return "JOINT_LIMIT_BLOCKED";
    case StepStatus::kVelocityLimited:
      return "VELOCITY_LIMITED";
    case StepStatus::kAccelerationLimited:
      return "ACCELERATION_LIMITED";
    case StepStatus::kNotConverged:
      return "NOT_CONVERGED";
    case StepStatus::kLate:
      return "LATE";
  }
  return "UNKNOWN";
}

StepStatus WithMotionClearance(StepStatus status, double motion_clearance) {
  if (!(motion_clearance < 0.0)) return status;
  switch (status) {
    case StepStatus::kReached:
    case StepStatus::kClampedUnreachable:
    case StepStatus::kVelocityLimited:
    case StepStatus::kAccelerationLimited:
    case StepStatus::kLate:
      return StepStatus::kInCollision;
    case StepStatus::kInCollision:
    case StepStatus::kJointLimitBlocked:
    case StepStatus::kNotConverged:
      return status;
  }
  return status;
}

void StepCounts::Add(StepStatus status) {
  ++samples;
  switch (status) {
    case StepStatus::kReached:
      ++reached;
      break;
    case StepStatus::kClampedUnreachable:
      ++clamped;
      break;
    case StepStatus::kInCollision:
      ++in_collision;
      break;
    case StepStatus::kJointLimitBlocked:
      ++limit_blocked;
      break;
    case StepStatus::kVelocityLimited:
      ++velocity_limited;
      break;
    case StepStatus::kAccelerationLimited:
      ++acceleration_limited;
      break;
    case StepStatus::kNotConverged:
      ++not_converged;
      break;
    case StepStatus::kLate:
      ++late;
      break;
  }
}

}  // namespace ikd::planning
