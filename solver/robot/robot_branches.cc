#include "ikd/robot/robot_branches.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <random>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/seed_atlas.h"
#include "motion.h"

namespace ikd::robot {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Every branch from the closed form of a 6R arm (analytic_ik.h), as the attempts would report
// them; none when it does not apply (position targets, 7R arms, solver kNumeric).
std::optional<std::vector<RobotIkResult>> ClosedFormBranches(const Robot& robot,
                                                             const ToolTarget& target,
                                                             const Eigen::VectorXd& seed,
                                                             const RobotIkOptions& options,
                                                             const planning::Scene* scene) {
  if (options.solver == IkSolver::kNumeric || !target.orientation) return std::nullopt;
  const AnalyticIk* ik = AnalyticIkOf(robot);
  if (ik == nullptr || ik->locked_joint() >= 0) return std::nullopt;
  Eigen::Isometry3d X_WT = Eigen::Isometry3d::Identity();
  X_WT.linear() = target.orientation->normalized().toRotationMatrix();
  X_WT.translation() = target.position;
  std::vector<RobotIkResult> found;
  for (const AnalyticSolution& branch : ik->Solve(X_WT, 0.0, &seed)) {
    RobotIkResult result;
    result.q = branch.q;
    result.sites = robot.SitesFromAngles(branch.q);
    std::tie(result.position_error, result.rotation_error) =
        internal::ToolErrors(robot, branch.q, target);
    result.min_clearance = internal::MinLinkClearance(robot, scene, branch.q);
    if (result.min_clearance < 0.0) continue;  // a branch in collision is no solution
    result.status = planning::StepStatus::kReached;
    result.solver = IkSolver::kAnalytic;
    found.push_back(std::move(result));
  }
  return found;
}

}  // namespace

absl::Status BranchOptions::Validate() const {
  if (max_solutions < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_solutions must be >= 1, got ", max_solutions));
  }
  if (attempts < 1) {
    return absl::InvalidArgumentError(absl::StrCat("attempts must be >= 1, got ", attempts));
  }
  if (!(min_separation > 0.0) || !std::isfinite(min_separation)) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_separation must be finite and > 0, got ", min_separation));
  }
  if (!(max_seed_distance > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_seed_distance must be > 0, got ", max_seed_distance));
  }
  return absl::OkStatus();
}

double BranchDistance(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  double largest = 0.0;
  for (int j = 0; j < a.size(); ++j) {
    largest = std::max(largest, std::abs(std::remainder(a[j] - b[j], kTwoPi)));
  }
  return largest;
}

absl::StatusOr<std::vector<RobotIkResult>> SolveBranches(
    const Robot& robot, const ToolTarget& target, const Eigen::VectorXd& seed,
    const RobotIkOptions& options, const BranchOptions& branches, const planning::Scene* scene,
    const std::function<bool()>& stop) {
  if (absl::Status s = branches.Validate(); !s.ok()) return s;
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (seed.size() != robot.num_joints() || !seed.allFinite()) {
    return absl::InvalidArgumentError(absl::StrCat("seed must hold ", robot.num_joints(),
                                                   " finite joint values, got ", seed.size()));
  }
  // Each attempt continues from its own start only (no restarts of its own, no atlas): the
  // branch it ends on is its start's.
  RobotIkOptions single = options;
  single.solver = IkSolver::kNumeric;  // each attempt converges to its own start's branch
  single.max_restarts = 0;
  single.starts = SolveStarts::kGivenThenRandom;
  std::vector<RobotIkResult> found;
  const auto add = [&](RobotIkResult result) {
    if (BranchDistance(result.q, seed) > branches.max_seed_distance) return;
    const bool known = std::any_of(found.begin(), found.end(), [&](const RobotIkResult& r) {
      return BranchDistance(r.q, result.q) < branches.min_separation;
    });
    if (!known) found.push_back(std::move(result));
  };
  // The closed form, where it applies, has every branch: no attempt could add one.
  std::optional<std::vector<RobotIkResult>> closed =
      ClosedFormBranches(robot, target, seed, options, scene);
  if (closed) std::for_each(closed->begin(), closed->end(), add);
  std::mt19937_64 rng(options.seed);
  // After the seed, the atlas entries whose tools are nearest the target: configurations near
  // the target on many branches, each a short continuation away from its branch's solution
  // (a random start often ends blocked or on a branch found already); then random ones.
  const SeedAtlas* atlas = closed ? nullptr : &SeedAtlasOf(robot);
  const std::vector<SeedAtlas::Neighbor> nearest =
      closed ? std::vector<SeedAtlas::Neighbor>{}
             : atlas->Nearest(target.position, target.orientation, (branches.attempts - 1) / 2);
  for (int attempt = 0; !closed && attempt < branches.attempts; ++attempt) {
    if (stop && stop()) return absl::CancelledError("stopped while solving for the branches");
    const int listed = attempt - 1;
    const Eigen::VectorXd start = attempt == 0 ? seed
                                  : listed < static_cast<int>(nearest.size())
                                      ? atlas->configuration(nearest[listed].index)
                                      : internal::RandomConfiguration(robot, rng);
    auto tracker = RobotTracker::Create(robot, single, start, scene);
    if (!tracker.ok()) return tracker.status();
    RobotIkResult result = tracker->Solve(target);
    if (result.status == planning::StepStatus::kReached) add(std::move(result));
  }
  std::stable_sort(found.begin(), found.end(),
                   [&](const RobotIkResult& a, const RobotIkResult& b) {
                     return BranchDistance(a.q, seed) < BranchDistance(b.q, seed);
                   });
  if (static_cast<int>(found.size()) > branches.max_solutions) {
    found.resize(branches.max_solutions);
  }
  return found;
}

}  // namespace ikd::robot
