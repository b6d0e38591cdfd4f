// AnalyticIk::ContinuedLockedValue: the value of a 7R arm's locked joint that the closed form
// solves at when it answers as continuation would (RobotTracker::SolveAnalytic under kAuto).
#include <algorithm>
#include <array>
#include <cmath>

#include "ikd/robot/analytic_ik.h"

namespace ikd::robot {
namespace {

// Resolved-rate steps along the straight pose path, then on the target itself. The value need
// only be where the self-motion goes (the closed form then solves at it exactly), and a step
// costs a forward kinematics and a Jacobian (about 0.6 us): on random Panda poses from the
// middle of its ranges, 1 step leaves 62% with no branch at the value, 3 + 1 steps 49%, 6 + 2
// steps 33% (the iiwa14: 3-6%).
constexpr int kPathSteps = 6;
constexpr int kTargetSteps = 2;
// Damping of J J^T (m^2, rad^2): a step through a singular pose stays bounded.
constexpr double kDamping = 1e-4;
// rad: the largest joint move of one step.
constexpr double kMaxJointStep = 0.5;

// The rotation vector taking `from` to `to` as 2 vec(e) of e = to from^-1 (the shorter way):
// within 1% of the exact one below 0.5 rad, all that one step's linearization holds anyway.
Eigen::Vector3d StepRotation(const Eigen::Quaterniond& to, const Eigen::Quaterniond& from) {
  const Eigen::Quaterniond e = to * from.conjugate();
  return (e.w() < 0.0 ? -2.0 : 2.0) * e.vec();
}

}  // namespace

double AnalyticIk::ContinuedLockedValue(const Eigen::Isometry3d& X_WT,
                                        const Eigen::VectorXd& seed) const {
  if (locked_ < 0) return 0.0;
  const JointLimits& range = limits_[locked_];
  const auto within = [&](double value) { return std::clamp(value, range.lower, range.upper); };
  if (seed.size() != num_joints() || !seed.allFinite() || !X_WT.matrix().allFinite()) {
    return within(seed.size() > locked_ ? seed[locked_] : 0.0);
  }
  HalfAngles memo;
  JointValues q = seed;
  std::array<bool, 7> held{};
  const ToolQuaternion start = ToolQuaternionAt(q, memo);
  const Eigen::Quaterniond target_rotation = Eigen::Quaterniond(X_WT.linear()).normalized();
  // The path's waypoints: the tool moved and turned (about one axis) by equal steps.
  const Eigen::Vector3d move = (X_WT.translation() - start.translation) / kPathSteps;
  const Eigen::AngleAxisd turn(target_rotation * start.rotation.conjugate());
  const Eigen::Quaterniond step_turn(Eigen::AngleAxisd(turn.angle() / kPathSteps, turn.axis()));
  Eigen::Vector3d waypoint = start.translation;
  Eigen::Quaterniond waypoint_rotation = start.rotation;
  for (int step = 1; step <= kPathSteps + kTargetSteps; ++step) {
    // Resolved rates (Whitney 1969): dq = J^T (J J^T + damping)^-1 e, the least-norm joint
    // motion that moves the tool by the pose error e to the path's next waypoint.
    if (step < kPathSteps) {
      waypoint += move;
      waypoint_rotation = step_turn * waypoint_rotation;
    } else {
      waypoint = X_WT.translation();
      waypoint_rotation = target_rotation;
    }
    const ToolQuaternion tool = ToolQuaternionAt(q, memo);
    Eigen::Matrix<double, 6, 1> e;
    e << waypoint - tool.translation, StepRotation(waypoint_rotation, tool.rotation);
    ToolJacobianMatrix J = JacobianAt(q, memo, tool.translation, true);
    for (int j = 0; j < num_joints(); ++j) {
      if (held[j]) J.col(j).setZero();
    }
    const Eigen::Matrix<double, 6, 6> JJt =
        J * J.transpose() + kDamping * Eigen::Matrix<double, 6, 6>::Identity();
    const Eigen::Matrix<double, 6, 1> weights = JJt.ldlt().solve(e);
    JointValues dq = JointValues::Zero(num_joints());
    dq.noalias() += J.transpose() * weights;
    const double largest = dq.cwiseAbs().maxCoeff();
    if (!std::isfinite(largest)) break;
    if (largest > kMaxJointStep) dq *= kMaxJointStep / largest;
    q += dq;
    // A joint that reaches a bound is held there, as the numeric continuation's locks hold it:
    // the others move in its stead.
    for (int j = 0; j < num_joints(); ++j) {
      const double bounded = std::clamp(q[j], limits_[j].lower, limits_[j].upper);
      held[j] = held[j] || bounded != q[j];
      q[j] = bounded;
    }
  }
  return within(q[locked_]);
}

}  // namespace ikd::robot
