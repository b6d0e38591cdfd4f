#include "path_branch_graph.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include "ikd/robot/analytic_ik.h"
#include "motion.h"

namespace ikd::robot::internal {
namespace {

constexpr double kSameNode = 1e-9;  // rad: two nodes of one sample closer than this are one
// Kept above the margin itself, as the tracker's cost (RobotTracker::Cost) keeps it.
constexpr double kMarginBuffer = 1.25;

struct Node {
  Eigen::VectorXd q;
  double placement = 0.0;   // the clearance term of q
  double cost = 0.0;        // the cheapest path to it, its own placement included
  int parent = -1;          // in the previous sample's nodes
  bool closed_form = true;  // false: continued by Newton steps (a singular target)
};

using Rung = std::vector<Node>;

// The tracker's cost terms (robot_ik.h) and the joints' largest move over an interval.
class GraphCosts {
 public:
  GraphCosts(const Robot& robot, const planning::Scene* scene, const RobotIkOptions& options)
      : robot_(robot), scene_(scene), options_(options), weights_(MotionWeights(robot)) {}

  double Motion(const Eigen::VectorXd& from, const Eigen::VectorXd& to) const {
    return options_.motion_weight * (weights_.array() * (to - from).array().square()).sum();
  }

  // No joint faster than its velocity limit (kBranchGraphJump without one) over `dt`.
  bool Allowed(const Eigen::VectorXd& from, const Eigen::VectorXd& to, double dt) const {
    for (int j = 0; j < to.size(); ++j) {
      const double limit = VelocityLimit(robot_, j);
      const double largest = std::isfinite(limit) ? limit * dt : kBranchGraphJump;
      if (!(std::abs(to[j] - from[j]) <= largest)) return false;
    }
    return true;
  }

  // The clearance term of q; none where a link is in collision.
  std::optional<double> Placement(const Eigen::VectorXd& q) const {
    const double margin = kMarginBuffer * options_.safety_margin;
    double cost = 0.0;
    for (const double d : LinkClearances(robot_, scene_, q)) {
      if (d < 0.0) return std::nullopt;
      cost += options_.clearance_weight * std::pow(std::max(0.0, margin - d), 2);
    }
    return cost;
  }

 private:
  const Robot& robot_;
  const planning::Scene* scene_;
  const RobotIkOptions& options_;
  Eigen::VectorXd weights_;
};

// q with each joint on its full-turn copy nearest `near`; false where that copy is outside the
// joint's limits (every other copy is a turn away: no edge would keep it).
bool ToCopyNear(const Robot& robot, const Eigen::VectorXd& near, Eigen::VectorXd& q) {
  constexpr double kTurn = 2.0 * std::numbers::pi;
  for (int j = 0; j < q.size(); ++j) {
    q[j] += kTurn * std::round((near[j] - q[j]) / kTurn);
    const auto& limits = robot.spec().joints[j].limits;
    if (limits && !(q[j] >= limits->lower && q[j] <= limits->upper)) return false;
  }
  return true;
}

// Adds q, reached from `parent` at `cost` (the parent's and the motion's), to `rung`: merged into
// the node already at q (the cheaper way in kept), else a new node where q is out of collision.
void Offer(const GraphCosts& costs, Eigen::VectorXd q, double cost, int parent, bool closed_form,
           Rung& rung) {
  for (Node& node : rung) {
    if ((node.q - q).cwiseAbs().maxCoeff() < kSameNode) {
      if (cost + node.placement < node.cost) {
        node.cost = cost + node.placement;
        node.parent = parent;
      }
      return;
    }
  }
  const std::optional<double> placement = costs.Placement(q);
  if (!placement) return;
  rung.push_back({std::move(q), *placement, cost + *placement, parent, closed_form});
}

// The cheapest kBranchGraphBeam nodes, in cost order (ties: the order they came in).
void Trim(Rung& rung) {
  std::stable_sort(rung.begin(), rung.end(),
                   [](const Node& a, const Node& b) { return a.cost < b.cost; });
  if (rung.size() > static_cast<size_t>(kBranchGraphBeam)) rung.resize(kBranchGraphBeam);
}

Rung FirstRung(const AnalyticIk& ik, const GraphCosts& costs, const Robot& robot,
               const planning::Scene* scene, const ToolTarget& target, const Eigen::VectorXd& q0,
               const RobotIkOptions& options) {
  Rung rung;
  if (StandsOnTarget(robot, scene, target, q0, options)) {
    Offer(costs, q0, 0.0, -1, /*closed_form=*/false, rung);
    return rung;
  }
  const Eigen::Isometry3d goal = ToolGoal(target, Eigen::Isometry3d::Identity());
  for (const AnalyticSolution& branch : ik.Solve(goal, 0.0, &q0)) {
    Offer(costs, branch.q, costs.Motion(q0, branch.q), -1, /*closed_form=*/true, rung);
  }
  Trim(rung);
  return rung;
}

// The nodes of `target`, `dt` after the sample whose nodes are `last`.
Rung NextRung(const AnalyticIk& ik, const GraphCosts& costs, const Robot& robot,
              const planning::Scene* scene, const ToolTarget& target, double dt,
              const RobotIkOptions& options, const Rung& last) {
  const std::vector<AnalyticSolution> branches =
      ik.Solve(ToolGoal(target, Eigen::Isometry3d::Identity()));
  Rung rung;
  for (int p = 0; p < static_cast<int>(last.size()); ++p) {
    const Node& parent = last[p];
    bool continued = false;
    for (const AnalyticSolution& branch : branches) {
      Eigen::VectorXd q = branch.q;
      if (!ToCopyNear(robot, parent.q, q) || !costs.Allowed(parent.q, q, dt)) continue;
      continued = true;
      const double cost = parent.cost + costs.Motion(parent.q, q);
      Offer(costs, std::move(q), cost, p, /*closed_form=*/true, rung);
    }
    if (continued) continue;
    // A singular target's branches are representatives of a continuum (analytic_ik.h): the
    // least joint motion onto it from the parent.
    const RobotIkResult placed = PlacedSample(robot, scene, target, options, parent.q);
    if (placed.status == planning::StepStatus::kReached && costs.Allowed(parent.q, placed.q, dt)) {
      const double cost = parent.cost + costs.Motion(parent.q, placed.q);
      Offer(costs, placed.q, cost, p, /*closed_form=*/false, rung);
    }
  }
  Trim(rung);
  return rung;
}

}  // namespace

absl::StatusOr<std::optional<std::vector<RobotIkResult>>> BranchGraphRobotPath(
    const Robot& robot, const planning::Scene* scene, const std::vector<ToolTarget>& targets,
    const std::vector<double>& times, const RobotIkOptions& options, const Eigen::VectorXd& q0,
    const std::function<bool()>& stop) {
  const AnalyticIk* ik = AnalyticIkOf(robot);
  if (ik == nullptr || ik->locked_joint() >= 0 || targets.size() < 2 ||
      times.size() != targets.size() || q0.size() != robot.num_joints()) {
    return std::nullopt;
  }
  const bool all_poses = std::all_of(targets.begin(), targets.end(),
                                     [](const ToolTarget& t) { return t.orientation.has_value(); });
  if (!all_poses) return std::nullopt;
  const GraphCosts costs(robot, scene, options);
  std::vector<Rung> rungs;
  rungs.reserve(targets.size());
  rungs.push_back(FirstRung(*ik, costs, robot, scene, targets[0], q0, options));
  for (size_t k = 1; k < targets.size() && !rungs.back().empty(); ++k) {
    if (stop && stop()) return absl::CancelledError("stopped while planning the path");
    rungs.push_back(NextRung(*ik, costs, robot, scene, targets[k], times[k] - times[k - 1], options,
                             rungs.back()));
  }
  if (rungs.back().empty()) return std::nullopt;
  std::vector<RobotIkResult> samples(targets.size());
  int at = 0;  // the cheapest end: Trim sorted the nodes
  for (size_t k = targets.size(); k-- > 0;) {
    const Node& node = rungs[k][at];
    samples[k] = PlacedSample(robot, scene, targets[k], options, node.q);
    if (node.closed_form) samples[k].solver = IkSolver::kAnalytic;
    at = node.parent;
  }
  return samples;
}

}  // namespace ikd::robot::internal
