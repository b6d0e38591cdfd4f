// RobotTracker::SolveAnalytic: a single-pose solve answered by the closed form (analytic_ik.h).
#include <optional>

#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {
namespace {

// Sampled values of a 7R arm's locked joint, tried beside the given configuration's own.
constexpr int kLockedSamples = 64;
// kAuto: a coarse sweep first where the continued value has no clear branch (a third of random
// Panda poses from the middle of its ranges; after it, about 1%).
constexpr int kCoarseSamples = 16;

}  // namespace

std::optional<RobotIkResult> RobotTracker::SolveAnalytic(const ToolTarget& target) {
  if (options_.solver == IkSolver::kNumeric || !target.orientation) return std::nullopt;
  const AnalyticIk* ik = AnalyticIkOf(*robot_);
  if (ik == nullptr) return std::nullopt;
  const bool redundant = ik->locked_joint() >= 0;
  // kAuto answers a 7R arm at the locked value its continuation reaches; a path's first target
  // (kGivenFirst) and the random-restart search keep the numeric continuation itself.
  const bool continued = redundant && options_.solver == IkSolver::kAuto;
  if (continued && options_.starts != SolveStarts::kNearestFirst) return std::nullopt;
  Eigen::Isometry3d X_WT = Eigen::Isometry3d::Identity();
  X_WT.linear() = target.orientation->normalized().toRotationMatrix();
  X_WT.translation() = target.position;
  const Eigen::VectorXd given = q_;
  // The nearest branch clear of the margin, else the nearest clear of the scene.
  std::optional<AnalyticSolution> clear;
  double clear_clearance = 0.0, taken_clearance = 0.0;
  const auto take = [&](const AnalyticSolution& s) {
    taken_clearance = MinClearance(s.q);
    if (!clear && taken_clearance >= 0.0) {
      clear = s;
      clear_clearance = taken_clearance;
    }
    return taken_clearance >= options_.safety_margin;
  };
  std::optional<AnalyticSolution> chosen;
  if (continued) {
    const double value = ik->ContinuedLockedValue(X_WT, given);
    chosen = ik->FirstByDistanceAt(X_WT, given, {&value, 1}, take);
    if (!chosen) chosen = ik->FirstByDistance(X_WT, given, kCoarseSamples, take);
  }
  if (!chosen) chosen = ik->FirstByDistance(X_WT, given, kLockedSamples, take);
  if (!chosen) {
    chosen = std::move(clear);
    taken_clearance = clear_clearance;
  }
  if (!chosen) return std::nullopt;
  Reset(chosen->q);
  RobotIkResult result =
      Finish(target, given, 0.0, planning::StepStatus::kReached, RobotIkResult{}, taken_clearance);
  result.solver = IkSolver::kAnalytic;
  return result;
}

}  // namespace ikd::robot
