// SolveWithPosture (robot_posture.h): the answers are checked with the tests' own forward
// kinematics (robot_cases.h) and their own joint distances, against analytic limits: a
// posture that itself reaches the target is the answer when its weight dominates; a
// non-redundant pose keeps an exact solution; a posture is never farther than the plain solve.
#include "ikd/robot/robot_posture.h"

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "ikd/robot/presets.h"
#include "solver/robot/robot_cases.h"

namespace ikd::robot {
namespace {

// Largest joint difference modulo a full turn: the tests' own.
double JointDistance(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  double worst = 0.0;
  for (int j = 0; j < a.size(); ++j) {
    worst = std::max(worst, std::abs(std::remainder(a[j] - b[j], 2.0 * std::numbers::pi)));
  }
  return worst;
}

Eigen::VectorXd Vec(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size());
}

bool InsideLimits(const ChainSpec& spec, const Eigen::VectorXd& q) {
  for (int j = 0; j < q.size(); ++j) {
    const auto& limits = spec.joints[j].limits;
    if (limits && (q[j] < limits->lower - 1e-12 || q[j] > limits->upper + 1e-12)) return false;
  }
  return true;
}

struct Answers {
  RobotIkResult plain, with_posture;
};

Answers SolveBoth(const Robot& robot, const ToolTarget& target, const Eigen::VectorXd& seed,
                  const ik::Posture& posture) {
  auto tracker = RobotTracker::Create(robot, RobotIkOptions{}, seed);
  EXPECT_TRUE(tracker.ok());
  Answers answers;
  answers.plain = tracker->Solve(target);
  tracker->Reset(seed);
  absl::StatusOr<RobotIkResult> with = SolveWithPosture(*tracker, robot, target, posture);
  EXPECT_TRUE(with.ok()) << with.status();
  if (with.ok()) answers.with_posture = *std::move(with);
  return answers;
}

// The Panda's ready pose turned about its upper-arm axis (joint 3) and its shoulder: the same
// tool pose is reached on the self-motion manifold through both, and the posture wins.
TEST(RobotPosture, PostureOnTheTargetIsTheAnswerWhenItsWeightDominates) {
  const ChainSpec spec = presets::Panda();
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(robot.ok());
  const Eigen::VectorXd ready = Vec(kRobotCases[1].ready);
  for (bool pose : {true, false}) {
    SCOPED_TRACE(pose ? "pose target" : "position target");
    // The posture: found by the plain solver from a seed far along the manifold.
    Eigen::VectorXd far = ready;
    far[0] += 0.6, far[2] -= 0.7;
    const Eigen::Isometry3d X = ToolFrame(spec, ready);
    const ToolTarget target =
        pose ? *ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()))
             : *ToolTarget::Position(X.translation());
    auto posture_solve = SolveRobotIk(*robot, target, far, {});
    ASSERT_TRUE(posture_solve.ok());
    ASSERT_EQ(posture_solve->status, planning::StepStatus::kReached);
    const ik::Posture posture{.q = posture_solve->q, .weight = 1e4};
    ASSERT_GT(JointDistance(posture.q, ready), 0.3) << "the posture is elsewhere on the manifold";

    const Answers a = SolveBoth(*robot, target, ready, posture);
    ASSERT_EQ(a.with_posture.status, planning::StepStatus::kReached);
    const Eigen::Isometry3d reached = ToolFrame(spec, a.with_posture.q);
    EXPECT_LT((reached.translation() - X.translation()).norm(), 1e-5);
    if (pose) {
      EXPECT_LT(Eigen::AngleAxisd(reached.linear().transpose() * X.linear()).angle(), 1e-5);
    }
    EXPECT_TRUE(InsideLimits(spec, a.with_posture.q));
    EXPECT_LT(JointDistance(a.plain.q, ready), 0.05) << "without a posture the seed's pose stays";
    // Weight 1e4: the cost's minimum lies within ~1e-4 of the posture (relative to the ranges).
    EXPECT_LT(JointDistance(a.with_posture.q, posture.q), 2e-2);
  }
}

// A small weight keeps the answer near the seed; a large one moves it towards the posture; the
// posture distance never grows with the weight (the tests' own distance).
TEST(RobotPosture, WeightTradesSeedAgainstPosture) {
  const ChainSpec spec = presets::Iiwa14();
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(robot.ok());
  const Eigen::VectorXd ready = Vec(kRobotCases[2].ready);
  const Eigen::Isometry3d X = ToolFrame(spec, ready);
  const ToolTarget target = *ToolTarget::Position(X.translation());
  Eigen::VectorXd nominal = Eigen::VectorXd::Zero(7);  // not on the target: a preference only
  nominal[3] = -0.4;
  double previous = INFINITY;
  for (double weight : {1e-3, 1.0, 1e3}) {
    SCOPED_TRACE(weight);
    const Answers a = SolveBoth(*robot, target, ready, {.q = nominal, .weight = weight});
    ASSERT_EQ(a.with_posture.status, planning::StepStatus::kReached);
    EXPECT_LT((ToolFrame(spec, a.with_posture.q).translation() - X.translation()).norm(), 1e-5);
    EXPECT_TRUE(InsideLimits(spec, a.with_posture.q));
    const double to_posture = (a.with_posture.q - nominal).norm();
    EXPECT_LE(to_posture, (a.plain.q - nominal).norm() + 1e-9);
    EXPECT_LE(to_posture, previous + 1e-6);
    previous = to_posture;
    if (weight == 1e-3) {
      EXPECT_LT(JointDistance(a.with_posture.q, ready), 0.05);
    }
  }
  // First-order optimality of the heavy posture's answer, by the tests' own Jacobian (central
  // differences of ToolFrame) and cost gradient: no direction that keeps the tool on the target
  // lowers the cost (the gradient's part in the Jacobian's null space, in the ranges' metric).
  const Answers heavy = SolveBoth(*robot, target, ready, {.q = nominal, .weight = 1e3});
  const Eigen::VectorXd& q = heavy.with_posture.q;
  Eigen::VectorXd range(7);
  for (int j = 0; j < 7; ++j)
    range[j] = spec.joints[j].limits->upper - spec.joints[j].limits->lower;
  Eigen::MatrixXd J(3, 7);
  for (int j = 0; j < 7; ++j) {
    Eigen::VectorXd plus = q, minus = q;
    plus[j] += 1e-6, minus[j] -= 1e-6;
    J.col(j) = (ToolFrame(spec, plus).translation() - ToolFrame(spec, minus).translation()) / 2e-6;
  }
  // In scaled coordinates u_j = q_j / range_j: gradient and Jacobian, then the null-space part.
  const Eigen::VectorXd gradient_u =
      (2.0 * ((q - ready) + 1e3 * (q - nominal)).array() / range.array()).matrix();
  const Eigen::MatrixXd J_u = J * range.asDiagonal();
  const Eigen::MatrixXd N =
      Eigen::MatrixXd::Identity(7, 7) - J_u.completeOrthogonalDecomposition().pseudoInverse() * J_u;
  EXPECT_LT((N * gradient_u).norm(), 1e-2 * gradient_u.norm())
      << "the heavy posture's answer is a local minimum on the target";
}

// The UR5 has no redundancy for a pose: the answer stays an exact solution, and a posture
// placed on another branch selects that branch.
TEST(RobotPosture, NonRedundantPoseSelectsThePosturesBranch) {
  const ChainSpec spec = presets::Ur5();
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(robot.ok());
  const Eigen::VectorXd ready = Vec(kRobotCases[0].ready);
  const Eigen::Isometry3d X = ToolFrame(spec, ready);
  const ToolTarget target = *ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()));
  // Another branch: the elbow the other way, solved from a seed on that side.
  Eigen::VectorXd other_side = ready;
  other_side[2] = -ready[2];
  other_side[1] = ready[1] + ready[2];
  auto branch = SolveRobotIk(*robot, target, other_side, {});
  ASSERT_TRUE(branch.ok());
  ASSERT_EQ(branch->status, planning::StepStatus::kReached);
  ASSERT_GT(JointDistance(branch->q, ready), 0.5);
  const Answers a = SolveBoth(*robot, target, ready, {.q = branch->q, .weight = 100.0});
  ASSERT_EQ(a.with_posture.status, planning::StepStatus::kReached);
  const Eigen::Isometry3d reached = ToolFrame(spec, a.with_posture.q);
  EXPECT_LT((reached.translation() - X.translation()).norm(), 1e-5);
  EXPECT_LT(Eigen::AngleAxisd(reached.linear().transpose() * X.linear()).angle(), 1e-5);
  EXPECT_LT(JointDistance(a.plain.q, ready), 1e-3);
  EXPECT_LT(JointDistance(a.with_posture.q, branch->q), 1e-4);
}

// A limited joint's difference is the way it must sweep, not the shorter way round: the
// Panda's joint 1 (+-2.9 rad) from 2.8 to -2.8 is 5.6 rad; a continuous joint's is modulo a turn.
TEST(RobotPosture, LimitedJointsAreNotMeasuredModuloATurn) {
  auto panda = Robot::Create(presets::Panda());
  ASSERT_TRUE(panda.ok());
  const ik::JointMetric metric = RobotJointMetric(*panda);
  ASSERT_EQ(metric.turns.size(), 7u);
  EXPECT_FALSE(metric.turns[0]);
  EXPECT_NEAR(metric.scale[0], 2 * 2.8973, 1e-9);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(7), seed = q;
  q[0] = 2.8, seed[0] = -2.8;
  const ik::Posture posture{.q = seed, .weight = 1.0};
  EXPECT_NEAR(ik::PostureCost(q, seed, posture, metric), 2 * std::pow(5.6 / (2 * 2.8973), 2),
              1e-12);
  ik::JointMetric turning = metric;
  turning.turns[0] = true;
  const double wrapped = 2 * std::numbers::pi - 5.6;
  EXPECT_NEAR(ik::PostureCost(q, seed, posture, turning), 2 * std::pow(wrapped / (2 * 2.8973), 2),
              1e-12);
}

TEST(RobotPosture, InvalidPostureNamesTheField) {
  ik::Posture posture{.q = Eigen::VectorXd::Zero(6), .weight = 1.0};
  EXPECT_EQ(posture.Validate(7).message(), "posture must hold the arm's 7 joint positions, got 6");
  posture.q = Eigen::VectorXd::Zero(7);
  posture.q[4] = NAN;
  EXPECT_EQ(posture.Validate(7).message(), "posture[4] must be finite");
  posture.q[4] = 0.0;
  posture.weight = 0.0;
  EXPECT_EQ(posture.Validate(7).message(), "posture_weight must be in (0, 1e6], got 0");
  posture.weight = INFINITY;
  EXPECT_FALSE(posture.Validate(7).ok());
  // The solve says so instead of reading past the posture's end.
  auto robot = Robot::Create(presets::Panda());
  ASSERT_TRUE(robot.ok());
  auto tracker = RobotTracker::Create(*robot, RobotIkOptions{}, robot->MidRange());
  ASSERT_TRUE(tracker.ok());
  const ik::Posture short_posture{.q = Eigen::VectorXd::Zero(6), .weight = 1.0};
  auto solved =
      SolveWithPosture(*tracker, *robot, *ToolTarget::Position({0.4, 0.1, 0.5}), short_posture);
  EXPECT_EQ(solved.status().message(), "posture must hold the arm's 7 joint positions, got 6");
}

}  // namespace
}  // namespace ikd::robot
