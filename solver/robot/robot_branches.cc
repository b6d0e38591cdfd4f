#include "ikd/robot/robot_branches.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "absl/strings/str_cat.h"
#include "ikd/robot/seed_atlas.h"
#include "motion.h"

namespace ikd::robot {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

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
  // Each attempt continues from its own start only (no restarts of its own, no atlas): the
  // branch it ends on is its start's.
  RobotIkOptions single = options;
  single.max_restarts = 0;
  single.starts = SolveStarts::kGivenThenRandom;
  std::mt19937_64 rng(options.seed);
  // After the seed, the atlas entries whose tools are nearest the target: configurations near
  // the target on many branches, each a short continuation away from its branch's solution
  // (a random start often ends blocked or on a branch found already); then random ones.
  const SeedAtlas& atlas = SeedAtlasOf(robot);
  const std::vector<SeedAtlas::Neighbor> nearest =
      atlas.Nearest(target.position, target.orientation, (branches.attempts - 1) / 2);
  std::vector<RobotIkResult> found;
  for (int attempt = 0; attempt < branches.attempts; ++attempt) {
    if (stop && stop()) return absl::CancelledError("stopped while solving for the branches");
    const int listed = attempt - 1;
    const Eigen::VectorXd start =
        attempt == 0 ? seed
        : listed < static_cast<int>(nearest.size()) ? atlas.configuration(nearest[listed].index)
                                                     : internal::RandomConfiguration(robot, rng);
    auto tracker = RobotTracker::Create(robot, single, start, scene);
    if (!tracker.ok()) return tracker.status();
    RobotIkResult result = tracker->Solve(target);
    if (result.status != planning::StepStatus::kReached) continue;
    if (BranchDistance(result.q, seed) > branches.max_seed_distance) continue;
    const bool known = std::any_of(found.begin(), found.end(), [&](const RobotIkResult& r) {
      return BranchDistance(r.q, result.q) < branches.min_separation;
    });
    if (!known) found.push_back(std::move(result));
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
