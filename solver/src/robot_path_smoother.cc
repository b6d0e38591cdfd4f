#include "robot_path_smoother.h"

#include <algorithm>
#include <cmath>

#include "robot_motion.h"

namespace ikd::robot::internal {
namespace {

// Sweeps over the path: each lowers the high-frequency part of the joint accelerations most
// (a spike is halved in one), slower swings need more. On bench/paths' robot scenarios 8
// sweeps took the worst acceleration ratios to the witness from 18-83 to 3-36 with obstacles
// (iiwa14 pose in free space 3.1 -> 2.7) at about 50 us a sample; 20 sweeps gained little more
// (13.6 instead of 17.5 on the Panda's pose kind) at 2.3 times the time.
constexpr int kSweeps = 8;
// Newton steps that put the tool back after a move in the null space (quadratic: 2-3 suffice).
constexpr int kNewtonSteps = 4;
constexpr double kSettled = 1e-9;  // rad: a smaller move is not worth a sample's update

bool Reached(RobotIkStatus status) {
  return status == RobotIkStatus::kSolved || status == RobotIkStatus::kVelocityLimitExceeded;
}

Eigen::Isometry3d Goal(const ToolTarget& target, const Eigen::Isometry3d& now) {
  Eigen::Isometry3d X = now;
  X.translation() = target.position;
  if (target.orientation) X.linear() = target.orientation->toRotationMatrix();
  return X;
}

// Where q_k would lower the squared second differences around it most.
Eigen::VectorXd SmoothestAt(const std::vector<RobotIkResult>& samples, size_t k) {
  const Eigen::VectorXd& prev = samples[k - 1].q;
  const Eigen::VectorXd& next = samples[k + 1].q;
  if (k < 2 || k + 2 >= samples.size()) return 0.5 * (prev + next);
  return (-samples[k - 2].q + 4.0 * prev + 4.0 * next - samples[k + 2].q) / 6.0;
}

}  // namespace

void SmoothRobotPath(const Robot& robot, const RobotTracker& tracker,
                     const std::vector<ToolTarget>& targets, const RobotIkOptions& options,
                     std::vector<RobotIkResult>& samples) {
  const Eigen::VectorXd weights = MotionWeights(robot);
  const Eigen::VectorXd none = Eigen::VectorXd::Zero(robot.num_joints());
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    for (size_t k = 1; k + 1 < samples.size(); ++k) {
      const ToolTarget& target = targets[k];
      const TargetMode mode = target.mode();
      if (robot.num_joints() <= (mode == TargetMode::kPose ? 6 : 3)) continue;
      if (!Reached(samples[k - 1].status) || !Reached(samples[k].status) ||
          !Reached(samples[k + 1].status)) {
        continue;
      }
      RobotIkResult& sample = samples[k];
      const Eigen::VectorXd wanted = SmoothestAt(samples, k) - sample.q;
      if (!(wanted.cwiseAbs().maxCoeff() > kSettled)) continue;
      const Eigen::Isometry3d goal = Goal(target, ToolPose(robot.spec(), sample.q));
      Eigen::VectorXd q = sample.q + ToolStep(robot, sample.q, goal, mode, weights, wanted);
      for (int n = 0; n < kNewtonSteps; ++n) q += ToolStep(robot, q, goal, mode, weights, none);
      const auto [position_error, rotation_error] = ToolErrors(robot, q, target);
      if (!(position_error <= options.position_tolerance) ||
          !(rotation_error <= options.rotation_tolerance) || robot.LimitViolation(q) > 0.0) {
        continue;
      }
      const double clearance = tracker.MinClearance(q);
      if (clearance < std::min(sample.min_clearance, options.safety_margin)) continue;
      sample.q = q;
      sample.sites = robot.SitesFromAngles(q);
      sample.position_error = position_error;
      sample.rotation_error = rotation_error;
      sample.min_clearance = clearance;
    }
  }
}

}  // namespace ikd::robot::internal
