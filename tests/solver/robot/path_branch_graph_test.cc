// The branch graph of PlanRobotPath (solver/robot/path_branch_graph.h): a UR5 full-pose path whose
// nearest start branch runs into a ball further on. The tracker from there collides; the graph
// starts on a branch that passes, within the speed limits, every sample on its pose, and the
// motion between samples clear too. Checked with the tests' own forward kinematics, distances
// and cost (robot_witness.h), and against every branch sequence of a short path.
#include "../solver/robot/path_branch_graph.h"

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/robot_body.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/robot/robot_path.h"
#include "solver/robot/robot_witness.h"

namespace ikd::robot {
namespace {

constexpr double kLinkRadius = 0.05;  // m, every link of the scenario
constexpr int kSamples = 201;         // 2 s at 100 Hz

// A smooth UR5 motion (the witness), its tool poses as full-pose targets, a ball on the elbow of
// another start branch late in the path, and a start beside that branch. The links are capsules
// of kLinkRadius, as WitnessScenario::Clearance measures them.
struct GraphScenario : WitnessScenario {
  Eigen::VectorXd q0;
};

Eigen::VectorXd WitnessAt(double t) {
  const Eigen::VectorXd c = (Eigen::VectorXd(6) << 0.3, -1.2, 1.4, -1.5, -1.3, 0.4).finished();
  const Eigen::VectorXd a = (Eigen::VectorXd(6) << 0.4, 0.2, -0.3, 0.3, 0.2, 0.5).finished();
  return c + a * std::sin(std::numbers::pi * t);
}

// Joint k+1's origin (k = 2: the elbow) by the tests' own composition.
Eigen::Vector3d JointOrigin(const ChainSpec& spec, const Eigen::VectorXd& q, int k) {
  Eigen::Isometry3d X = spec.X_WB;
  for (int j = 0; j < k; ++j) {
    X = X * spec.joints[j].X_PJ * Eigen::AngleAxisd(q[j], spec.joints[j].axis.normalized());
  }
  return (X * spec.joints[k].X_PJ).translation();
}

// `branch` carried along the targets, each sample the closed-form solution nearest the last;
// empty where it breaks off (no solution within 0.2 rad of the last in every joint).
std::vector<Eigen::VectorXd> Continuation(const AnalyticIk& ik, const GraphScenario& s,
                                          Eigen::VectorXd branch) {
  std::vector<Eigen::VectorXd> path{branch};
  for (int k = 1; k < kSamples; ++k) {
    const Eigen::Isometry3d X = ToolFrame(s.spec, s.witness[k]);
    std::optional<Eigen::VectorXd> next;
    for (const AnalyticSolution& solution : ik.Solve(X, 0.0, &path.back())) {
      if ((solution.q - path.back()).cwiseAbs().maxCoeff() < 0.2) next = solution.q;
    }
    if (!next) return {};
    path.push_back(*next);
  }
  return path;
}

// The witness's tool poses; q0 beside the first other branch that carries through the path and
// whose elbow, halfway along, can hold a ball of 0.06 m the witness's links clear by 0.05 m
// (linearly interpolated motion between samples included).
GraphScenario MakeGraphScenario() {
  GraphScenario s;
  s.spec = presets::Ur5();
  s.spec.link_radii.assign(6, kLinkRadius);
  for (int k = 0; k < kSamples; ++k) {
    s.times.push_back(0.01 * k);
    s.witness.push_back(WitnessAt(s.times.back()));
    const Eigen::Isometry3d X = ToolFrame(s.spec, s.witness.back());
    s.targets.push_back(*ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear())));
  }
  auto robot = Robot::Create(s.spec);
  EXPECT_TRUE(robot.ok()) << robot.status();
  if (!robot.ok()) return s;
  s.robot.emplace(*std::move(robot));
  auto ik = AnalyticIk::Create(s.spec);
  EXPECT_TRUE(ik.ok()) << ik.status();
  if (!ik.ok()) return s;
  // The start branch must be one a tracker would take: its links clear of each other.
  const RobotBody body(*s.robot);
  auto self_clear = [&](const std::vector<Eigen::VectorXd>& path) {
    std::vector<planning::Capsule> links;
    for (const Eigen::VectorXd& q : path) {
      body.Links(q, &links);
      if (!(body.SelfClearance(links) >= 0.02)) return false;
    }
    return true;
  };
  for (const AnalyticSolution& other : ik->Solve(ToolFrame(s.spec, s.witness[0]))) {
    if ((other.q - s.witness[0]).cwiseAbs().maxCoeff() < 0.5) continue;  // the witness's own
    const std::vector<Eigen::VectorXd> path = Continuation(*ik, s, other.q);
    if (path.empty() || !self_clear(path)) continue;
    // The ball on that branch's elbow late in the path, where its start is clear of it by
    // 0.05 m (a tracker there sees nothing coming) and the witness clear all along.
    for (int at = kSamples - 1; at >= kSamples / 2 && s.q0.size() == 0; at -= 10) {
      s.balls = {(Eigen::Vector4d() << JointOrigin(s.spec, path[at], 2), 0.06).finished()};
      bool clear = s.Clearance(path[0]) >= 0.05;
      for (int k = 1; k < kSamples && clear; ++k) {
        for (int i = 0; i <= 4; ++i) {
          const Eigen::VectorXd q = s.witness[k - 1] + 0.25 * i * (s.witness[k] - s.witness[k - 1]);
          clear = clear && s.Clearance(q) >= 0.05;
        }
      }
      if (clear) s.q0 = other.q + Eigen::VectorXd::Constant(6, 0.05);
    }
    if (s.q0.size() == 6) break;
  }
  EXPECT_EQ(s.q0.size(), 6) << "no other branch carries through with a ball the witness passes";
  if (s.q0.size() != 6) s.balls.clear();
  std::vector<planning::Obstacle> obstacles;
  for (const Eigen::Vector4d& b : s.balls) {
    obstacles.push_back({"ball", planning::Sphere{b.head<3>(), b[3]}});
  }
  auto scene = planning::Scene::Create(obstacles);
  EXPECT_TRUE(scene.ok()) << scene.status();
  if (scene.ok()) s.scene.emplace(*std::move(scene));
  return s;
}

std::optional<std::vector<RobotIkResult>> Graph(const GraphScenario& s,
                                                const std::vector<ToolTarget>& targets,
                                                const std::vector<double>& times,
                                                const Eigen::VectorXd& q0,
                                                const planning::Scene* scene) {
  auto graph =
      internal::BranchGraphRobotPath(*s.robot, scene, targets, times, RobotIkOptions{}, q0, {});
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *graph : std::nullopt;
}

// Every sample on its pose (1e-9 m and rad), inside the limits, no joint over its velocity
// limit; the links clear of the balls at every sample and at four points of each motion between
// samples; no link origin moving more than 0.05 m between samples (a jump between branches
// moves the elbow by tens of centimetres).
void ExpectPhysicalPath(const GraphScenario& s, const std::vector<Eigen::VectorXd>& q) {
  ASSERT_EQ(q.size(), s.targets.size());
  for (size_t k = 0; k < q.size(); ++k) {
    const Eigen::Isometry3d X = ToolFrame(s.spec, q[k]);
    EXPECT_LT((X.translation() - s.targets[k].position).norm(), 1e-9) << k;
    EXPECT_LT(
        Eigen::AngleAxisd(X.linear().transpose() * s.targets[k].orientation->toRotationMatrix())
            .angle(),
        1e-9)
        << k;
    for (int j = 0; j < 6; ++j) {
      const JointLimits& limits = *s.spec.joints[j].limits;
      EXPECT_GE(q[k][j], limits.lower) << k << " " << j;
      EXPECT_LE(q[k][j], limits.upper) << k << " " << j;
      if (k == 0) continue;
      const double speed = std::abs(q[k][j] - q[k - 1][j]) / (s.times[k] - s.times[k - 1]);
      EXPECT_LE(speed, limits.max_velocity * (1 + 1e-9)) << k << " " << j;
    }
    if (k == 0) {
      EXPECT_GE(s.Clearance(q[k]), 0.0);
      continue;
    }
    for (int i = 1; i <= 4; ++i) {
      EXPECT_GE(s.Clearance(q[k - 1] + 0.25 * i * (q[k] - q[k - 1])), 0.0) << k << " " << i;
    }
    for (int joint = 1; joint < 6; ++joint) {
      EXPECT_LT((JointOrigin(s.spec, q[k], joint) - JointOrigin(s.spec, q[k - 1], joint)).norm(),
                0.05)
          << k << " joint " << joint;
    }
  }
}

std::vector<Eigen::VectorXd> TrackerPath(const GraphScenario& s) {
  auto tracker = RobotTracker::Create(*s.robot, RobotIkOptions{}, s.q0, &*s.scene);
  EXPECT_TRUE(tracker.ok()) << tracker.status();
  std::vector<Eigen::VectorXd> q{tracker->Solve(s.targets[0]).q};
  for (size_t k = 1; k < s.targets.size(); ++k) {
    q.push_back(tracker->StepTo(s.targets[k], s.times[k] - s.times[k - 1]).q);
  }
  return q;
}

// The scenario can fail: the tracker from q0 keeps the nearest branch into the ball.
TEST(RobotPathBranchGraph, TheTrackerFromTheNearestBranchRunsIntoTheBall) {
  const GraphScenario s = MakeGraphScenario();
  ASSERT_TRUE(s.robot && s.scene && !s.balls.empty());
  double least = std::numeric_limits<double>::infinity();
  for (const Eigen::VectorXd& q : TrackerPath(s)) least = std::min(least, s.Clearance(q));
  EXPECT_LT(least, 0.0);
}

TEST(RobotPathBranchGraph, StartsOnABranchThatPassesTheBall) {
  const GraphScenario s = MakeGraphScenario();
  ASSERT_TRUE(s.robot && s.scene && !s.balls.empty());
  const auto graph = Graph(s, s.targets, s.times, s.q0, &*s.scene);
  ASSERT_TRUE(graph.has_value());
  ExpectPhysicalPath(s, JointValues(*graph));
  for (size_t k = 0; k < graph->size(); ++k) {
    EXPECT_EQ((*graph)[k].status, planning::StepStatus::kReached) << k;
    EXPECT_EQ((*graph)[k].solver, IkSolver::kAnalytic) << k;
  }
}

// PlanRobotPath keeps the graph's path (start 9): every earlier start keeps q0's branch.
TEST(RobotPathBranchGraph, PlanRobotPathTakesTheGraphsPath) {
  const GraphScenario s = MakeGraphScenario();
  ASSERT_TRUE(s.robot && s.scene && !s.balls.empty());
  auto plan = PlanRobotPath(*s.robot, &*s.scene, s.targets, s.times, RobotIkOptions{}, s.q0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->summary.start, 9) << plan->summary.BriefReport();
  EXPECT_EQ(plan->summary.reached, kSamples) << plan->summary.BriefReport();
  ExpectPhysicalPath(s, JointValues(plan->samples));
}

// The test's own cost of a path from q0 (velocity-weighted squared joint motion, as
// MotionWeights: (v_min / v_j)^2), with nothing to keep clear of.
double MotionCost(const ChainSpec& spec, const Eigen::VectorXd& q0,
                  const std::vector<Eigen::VectorXd>& q) {
  double v_min = std::numeric_limits<double>::infinity();
  for (const JointSpec& joint : spec.joints) v_min = std::min(v_min, joint.limits->max_velocity);
  double cost = 0.0;
  Eigen::VectorXd last = q0;
  for (const Eigen::VectorXd& next : q) {
    for (int j = 0; j < 6; ++j) {
      cost += std::pow(v_min / spec.joints[j].limits->max_velocity * (next[j] - last[j]), 2);
    }
    last = next;
  }
  return cost;
}

// Every sequence of branches (each joint on the copy nearest the last sample's, every joint
// within its speed limit) of 8 samples 0.1 s apart, searched exhaustively: none cheaper than the
// graph's. Free space and no link radii: the cost is the joint motion alone.
TEST(RobotPathBranchGraph, NoBranchSequenceIsCheaper) {
  GraphScenario s = MakeGraphScenario();
  s.spec.link_radii.clear();
  auto robot = Robot::Create(s.spec);
  ASSERT_TRUE(robot.ok()) << robot.status();
  s.robot.emplace(*std::move(robot));
  auto ik = AnalyticIk::Create(s.spec);
  ASSERT_TRUE(ik.ok());
  std::vector<ToolTarget> targets;
  std::vector<double> times;
  std::vector<std::vector<Eigen::VectorXd>> branches;
  for (int k = 0; k < 8; ++k) {
    times.push_back(0.1 * k);
    targets.push_back(s.targets[10 * k]);
    branches.emplace_back();
    for (const AnalyticSolution& b : ik->Solve(ToolFrame(s.spec, s.witness[10 * k]))) {
      branches.back().push_back(b.q);
    }
  }
  const auto graph = Graph(s, targets, times, s.q0, nullptr);
  ASSERT_TRUE(graph.has_value());
  const double graph_cost = MotionCost(s.spec, s.q0, JointValues(*graph));
  double cheapest = std::numeric_limits<double>::infinity();
  std::vector<Eigen::VectorXd> path;
  std::function<void(int)> search = [&](int k) {
    if (k == static_cast<int>(branches.size())) {
      cheapest = std::min(cheapest, MotionCost(s.spec, s.q0, path));
      return;
    }
    const Eigen::VectorXd near = k == 0 ? s.q0 : path.back();
    for (Eigen::VectorXd q : branches[k]) {
      bool allowed = true;
      for (int j = 0; j < 6; ++j) {
        q[j] += 2 * std::numbers::pi * std::round((near[j] - q[j]) / (2 * std::numbers::pi));
        const JointLimits& limits = *s.spec.joints[j].limits;
        allowed = allowed && q[j] >= limits.lower && q[j] <= limits.upper;
        if (k > 0) allowed = allowed && std::abs(q[j] - near[j]) <= limits.max_velocity * 0.1;
      }
      if (!allowed) continue;
      path.push_back(q);
      search(k + 1);
      path.pop_back();
    }
  };
  search(0);
  ASSERT_TRUE(std::isfinite(cheapest));
  EXPECT_NEAR(graph_cost, cheapest, 1e-9 * (1 + cheapest));
}

// Where the arm stands on the first target, the path starts there.
TEST(RobotPathBranchGraph, AStandingStartIsKept) {
  const GraphScenario s = MakeGraphScenario();
  ASSERT_TRUE(s.robot && s.scene);
  const auto graph = Graph(s, s.targets, s.times, s.witness[0], &*s.scene);
  ASSERT_TRUE(graph.has_value());
  EXPECT_LT((graph->front().q - s.witness[0]).cwiseAbs().maxCoeff(), 1e-12);
  ExpectPhysicalPath(s, JointValues(*graph));
}

TEST(RobotPathBranchGraph, NoPathWhereTheGraphDoesNotApplyOrBreaks) {
  const GraphScenario s = MakeGraphScenario();
  ASSERT_TRUE(s.robot && s.scene);
  // Position targets leave the arm redundant: the ladder's case.
  std::vector<ToolTarget> positions;
  for (const ToolTarget& t : s.targets) positions.push_back(*ToolTarget::Position(t.position));
  EXPECT_FALSE(Graph(s, positions, s.times, s.q0, &*s.scene).has_value());
  // One sample is no path.
  EXPECT_FALSE(Graph(s, {s.targets[0]}, {0.0}, s.q0, &*s.scene).has_value());
  // A target out of reach halfway along.
  std::vector<ToolTarget> far = s.targets;
  far[100].position += Eigen::Vector3d(3.0, 0.0, 0.0);
  EXPECT_FALSE(Graph(s, far, s.times, s.q0, &*s.scene).has_value());
  // A 7R arm has no closed form of its own.
  auto panda = Robot::Create(presets::Panda());
  ASSERT_TRUE(panda.ok());
  auto graph = internal::BranchGraphRobotPath(*panda, nullptr, s.targets, s.times, RobotIkOptions{},
                                              Eigen::VectorXd::Zero(7), {});
  ASSERT_TRUE(graph.ok());
  EXPECT_FALSE(graph->has_value());
}

TEST(RobotPathBranchGraph, StopIsCancelled) {
  const GraphScenario s = MakeGraphScenario();
  ASSERT_TRUE(s.robot && s.scene);
  auto graph = internal::BranchGraphRobotPath(*s.robot, &*s.scene, s.targets, s.times,
                                              RobotIkOptions{}, s.q0, [] { return true; });
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace ikd::robot
