#include "path_joint_space.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <Eigen/Dense>

#include "path_optimizer.h"

namespace ikd::ik::internal {
namespace {

// Newton steps per sub-step: the hand lands within rounding of the sub-target before the
// projection, which then only restores the limb lengths (the angles keep them exact) and
// the joint limits.
constexpr int kNewtonSteps = 3;
constexpr double kMaxAngleStep = 0.3;   // rad per Newton step, any joint
constexpr double kDampingReach = 1e-3;  // lambda of the damped least squares, per m of reach
constexpr double kJacobianDelta = 1e-7;  // rad, forward differences of a spatial arm's hand
// Share of a bend's way out of its spinning band taken per Newton step, before the weight of
// its joint's velocity limit (w_j <= 1: a slower joint is led out more gently).
constexpr double kBendGain = 0.2;

double Square(double x) { return x * x; }

// w_j = (v_j / v_loosest)^2: the least sum_j (dq_j / v_j)^2 moves each joint in proportion to
// its velocity limit; 1 for joints without one, and for every joint of an arm without limits.
Eigen::VectorXd MotionWeights(const Arm& arm) {
  const int m = arm.num_angles();
  double loosest = 0.0;
  for (int j = 0; j < m; ++j) {
    const double v = arm.RateLimit(arm.JointOfAngle(j)).max_velocity;
    if (std::isfinite(v)) loosest = std::max(loosest, v);
  }
  Eigen::VectorXd w = Eigen::VectorXd::Ones(m);
  if (!(loosest > 0.0)) return w;
  for (int j = 0; j < m; ++j) {
    const double v = arm.RateLimit(arm.JointOfAngle(j)).max_velocity;
    if (std::isfinite(v)) w[j] = Square(v / loosest);
  }
  return w;
}

// d hand / d angle_j (3 x angles) at `angles`, whose forward kinematics are `sites`: about the
// plane's normal through site j for planar arms, forward differences for spatial ones.
Eigen::Matrix3Xd HandJacobian(const Arm& arm, std::vector<double> angles,
                              const Eigen::Matrix3Xd& sites) {
  const int m = static_cast<int>(angles.size());
  const Eigen::Vector3d hand = sites.col(arm.hand());
  Eigen::Matrix3Xd jacobian = Eigen::Matrix3Xd::Zero(3, m);
  if (arm.planar()) {
    const Eigen::Vector3d normal = arm.R_WB().col(2);
    for (int j = 0; j < m; ++j) jacobian.col(j) = normal.cross(hand - sites.col(j));
    return jacobian;
  }
  for (int j = 0; j < m; ++j) {
    const double kept = angles[j];
    angles[j] += kJacobianDelta;
    if (auto moved = arm.SitesFromAngles(angles); moved.ok()) {
      jacobian.col(j) = (moved->col(arm.hand()) - hand) / kJacobianDelta;
    }
    angles[j] = kept;
  }
  return jacobian;
}

// Each spatial bend's BendGap (path_optimizer.h) at the optimizer's default band; 0 for the
// azimuths and for planar arms.
Eigen::VectorXd BendGaps(const Arm& arm, const std::vector<double>& angles) {
  Eigen::VectorXd gaps = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(angles.size()));
  if (arm.planar()) return gaps;
  for (size_t j = 0; j < angles.size(); j += 2) gaps[j] = BendGap(angles[j], kDefaultMinBend);
  return gaps;
}

// The angles moved towards putting the hand at `target`, with the least weighted joint motion
// (damped least squares), and the bends led out of their spinning band in the null space of
// the hand (gradient projection):
//   dq = W J^T (J W J^T + lambda^2)^-1 e + (I - W J^T (J W J^T + lambda^2)^-1 J) W g.
void NewtonStep(const Arm& arm, const Eigen::VectorXd& weights, double damping,
                const Eigen::Vector3d& target, std::vector<double>& angles,
                Eigen::Matrix3Xd& sites) {
  const Eigen::Matrix3Xd jacobian = HandJacobian(arm, angles, sites);
  const Eigen::Vector3d error = target - sites.col(arm.hand());
  const Eigen::Matrix3Xd weighted = jacobian * weights.asDiagonal();
  const Eigen::Matrix3d normal =
      weighted * jacobian.transpose() + damping * Eigen::Matrix3d::Identity();
  const Eigen::LDLT<Eigen::Matrix3d> solver = normal.ldlt();
  const Eigen::VectorXd lead = kBendGain * weights.cwiseProduct(BendGaps(arm, angles));
  Eigen::VectorXd step = weighted.transpose() * solver.solve(error);
  step += lead - weighted.transpose() * solver.solve(jacobian * lead);
  const double largest = step.cwiseAbs().maxCoeff();
  if (!std::isfinite(largest)) return;
  if (largest > kMaxAngleStep) step *= kMaxAngleStep / largest;
  std::vector<double> moved = angles;
  for (size_t j = 0; j < moved.size(); ++j) moved[j] += step[j];
  auto rebuilt = arm.SitesFromAngles(moved);
  if (!rebuilt.ok()) return;
  angles = std::move(moved);
  sites = *std::move(rebuilt);
}

// One sub-step: Newton steps towards `target`, then the tracker's projection (hand on
// `target`, limb lengths, joint limits) and its push-out of the margin; the angles follow
// the projected sites, each within a half turn of its value before. False when the
// projection fails.
bool MoveHand(const Arm& arm, const Eigen::VectorXd& weights, double damping, double margin,
              const Eigen::Vector3d& target, ArmTracker& projector, std::vector<double>& angles,
              Eigen::Matrix3Xd& sites) {
  for (int i = 0; i < kNewtonSteps; ++i) NewtonStep(arm, weights, damping, target, angles, sites);
  const Eigen::Matrix3Xd reference = sites;
  sites.col(arm.hand()) = target;
  if (!projector.Project(reference, sites)) return false;
  if (const double clearance = projector.MinClearance(sites, margin); clearance < margin) {
    Eigen::Matrix3Xd pushed = sites;
    if (projector.PushOut(pushed) && projector.MinClearance(pushed, margin) > clearance) {
      sites.swap(pushed);
    }
  }
  const std::vector<double> wrapped = arm.AnglesFromSites(sites);
  for (size_t j = 0; j < angles.size(); ++j) angles[j] = NearestTurn(wrapped[j], angles[j]);
  return true;
}

// Whether the hand can be put at `target` as it is: in a planar arm's plane and strictly
// inside the reachable shell (the tracker's own tolerances). Elsewhere the tracker clamps the
// target and says so (CLAMPED_UNREACHABLE); this start, which pins the hand to the target,
// leaves such paths to it.
bool Reachable(const Arm& arm, const Eigen::Vector3d& target) {
  if (arm.num_limbs() < 2) return false;
  const Eigen::Vector3d p_B = arm.ToArmFrame(target);
  if (arm.planar() && std::abs(p_B.z()) > 1e-12 * arm.max_reach()) return false;
  const double r = p_B.norm();
  return r < arm.max_reach() * (1.0 - 1e-9) && r > arm.min_reach() * (1.0 + 1e-9);
}

// The sample at `time` with the arm at `sites`, the hand asked at `target`.
IkResult Sample(const Arm& arm, ArmTracker& projector, double time, const Eigen::Vector3d& target,
                const Eigen::Matrix3Xd& sites) {
  IkResult step;
  step.time = time;
  step.sites = sites;
  step.angles = arm.AnglesFromSites(sites);
  step.hand_error = (sites.col(arm.hand()) - target).norm();
  step.min_clearance = projector.MinClearance(sites);
  step.constraint_residual = arm.chain_model().MaxRelativeViolation(sites);
  step.status = step.min_clearance < 0.0 ? planning::StepStatus::kInCollision
                                         : planning::StepStatus::kReached;
  return step;
}

}  // namespace

absl::StatusOr<std::optional<std::vector<IkResult>>> TrackInJointSpace(
    const Arm& arm, const Trajectory& trajectory, const std::vector<double>& times,
    const IkOptions& options, ArmTracker& projector, const IkResult& first,
    const StopCheck& stop) {
  const double max_step = options.max_step_fraction * arm.shortest_limb();
  const Eigen::VectorXd weights = MotionWeights(arm);
  const double damping = Square(kDampingReach * arm.max_reach());
  std::vector<IkResult> steps{first};
  steps.reserve(times.size());
  std::vector<double> angles = first.angles;
  Eigen::Matrix3Xd sites = first.sites;
  for (size_t k = 1; k < times.size(); ++k) {
    if (stop && stop()) return absl::CancelledError("stopped while tracking the path");
    auto sub_times = trajectory.SubSteps(times[k - 1], times[k], max_step);
    if (!sub_times.ok()) return sub_times.status();
    for (double t : *sub_times) {
      const Eigen::Vector3d target = trajectory.PositionAt(t);
      if (!Reachable(arm, target) || !MoveHand(arm, weights, damping, options.safety_margin,
                                               target, projector, angles, sites)) {
        return std::nullopt;
      }
    }
    steps.push_back(Sample(arm, projector, times[k], trajectory.PositionAt(times[k]), sites));
  }
  return steps;
}

}  // namespace ikd::ik::internal
