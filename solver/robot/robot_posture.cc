#include "ikd/robot/robot_posture.h"

#include <numbers>

#include "motion.h"

namespace ikd::robot {

ik::JointMetric RobotJointMetric(const Robot& robot) {
  ik::JointMetric metric{Eigen::VectorXd(robot.num_joints()),
                         std::vector<bool>(robot.num_joints(), true)};
  constexpr double kFullTurn = 2.0 * std::numbers::pi;
  for (int j = 0; j < robot.num_joints(); ++j) {
    const auto& limits = robot.spec().joints[j].limits;
    const double range = limits ? limits->upper - limits->lower : kFullTurn;
    metric.scale[j] = range > 0.0 ? range : kFullTurn;
    metric.turns[j] = !limits || range >= kFullTurn;
  }
  return metric;
}

absl::StatusOr<RobotIkResult> SolveWithPosture(RobotTracker& tracker, const Robot& robot,
                                               const ToolTarget& target,
                                               const ik::Posture& posture,
                                               const std::function<bool()>& stop) {
  if (absl::Status valid = posture.Validate(robot.num_joints()); !valid.ok()) return valid;
  const Eigen::VectorXd seed = tracker.q();
  const ik::JointMetric metric = RobotJointMetric(robot);
  const bool pose = target.orientation.has_value();
  RobotIkResult solved = tracker.Solve(target);
  if (solved.status != planning::StepStatus::kReached) return solved;
  int projections = solved.projections;
  RobotIkResult candidate;
  const auto project = [&](const Eigen::VectorXd& pulled) -> std::optional<Eigen::VectorXd> {
    tracker.Reset(internal::ClampIntoLimits(robot, pulled));
    candidate = tracker.StepTo(target);
    projections += candidate.projections;
    if (candidate.status != planning::StepStatus::kReached) return std::nullopt;
    return candidate.q;
  };
  const auto descend = [&](RobotIkResult from) {
    ik::DescendToPosture(
        from.q, seed, posture, metric,
        // The target's rows of the tool Jacobian: position, and rotation for a pose target.
        [&](const Eigen::VectorXd& q) {
          return Eigen::MatrixXd(ToolJacobian(robot.spec(), q).topRows(pose ? 6 : 3));
        },
        project,
        [&] { from = candidate; }, stop);
    return from;
  };
  RobotIkResult best = descend(solved);
  // The posture's own branch: continuation from the posture itself, descended too (a
  // non-redundant arm has no way between branches, a redundant one may be on another sheet).
  if (!(stop && stop()) && project(posture.q)) {
    RobotIkResult other = descend(candidate);
    if (ik::PostureCost(other.q, seed, posture, metric) <
        ik::PostureCost(best.q, seed, posture, metric)) {
      best = std::move(other);
    }
  }
  best.restarts = solved.restarts;
  best.projections = projections;
  best.max_joint_change = (best.q - seed).cwiseAbs().maxCoeff();
  tracker.Reset(best.q);  // the tracker stays where the answer is
  return best;
}

}  // namespace ikd::robot
