// Every IK branch of a pose (robot_branches.h): the UR5's 8 on poses where all 8 exist, each
// checked by the test's own forward kinematics and told apart by the test's own joint
// distances; the nearest to the seed first; the bounds on their number and on the distance to
// the seed; bad options named.
#include "ikd/robot/robot_branches.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <gtest/gtest.h>
#include <Eigen/Geometry>

#include "ikd/robot/presets.h"
#include "solver/robot/robot_cases.h"

namespace ikd::robot {
namespace {

// The largest joint difference, each modulo a full turn (the test's own).
double TurnDistance(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  double largest = 0.0;
  for (int j = 0; j < a.size(); ++j) {
    largest = std::max(largest, std::abs(std::remainder(a[j] - b[j], 2 * std::numbers::pi)));
  }
  return largest;
}

ToolTarget PoseOf(const ChainSpec& spec, const Eigen::VectorXd& q) {
  const Eigen::Isometry3d X = ToolFrame(spec, q);
  return *ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()));
}

// Generic UR5 configurations (shoulder, elbow and wrist away from their singular positions):
// the pose of each has 8 solutions; every one is found, is on the pose by the test's own forward
// kinematics, differs from the others by more than 0.1 rad, and the list runs nearest to the
// seed first; the configuration that made the pose is among them.
TEST(RobotBranches, Ur5HasEightBranchesWhereAllExist) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  const std::vector<Eigen::VectorXd> made = {
      (Eigen::VectorXd(6) << 0.3, -1.2, 1.4, -1.5, -1.3, 0.4).finished(),
      (Eigen::VectorXd(6) << -0.8, -2.0, -1.1, 0.7, 1.2, -2.0).finished(),
      (Eigen::VectorXd(6) << 1.9, -0.9, 2.1, -2.4, 0.9, 1.1).finished()};
  const Eigen::VectorXd seed = Eigen::VectorXd::Zero(6);
  for (const Eigen::VectorXd& q_made : made) {
    const ToolTarget target = PoseOf(robot->spec(), q_made);
    BranchOptions branches;
    branches.max_solutions = 16;
    branches.attempts = 200;
    auto all = SolveBranches(*robot, target, seed, RobotIkOptions{}, branches);
    ASSERT_TRUE(all.ok()) << all.status();
    ASSERT_EQ(all->size(), 8u) << "made by " << q_made.transpose();
    bool made_found = false;
    for (size_t i = 0; i < all->size(); ++i) {
      const Eigen::VectorXd& q = (*all)[i].q;
      const Eigen::Isometry3d X = ToolFrame(robot->spec(), q);
      EXPECT_LE((X.translation() - target.position).norm(), 1e-5);
      EXPECT_LE(Eigen::AngleAxisd(X.linear().transpose() * target.orientation->toRotationMatrix())
                    .angle(),
                1e-5);
      for (size_t k = 0; k < i; ++k) {
        EXPECT_GT(TurnDistance(q, (*all)[k].q), 0.1);
      }
      if (i > 0) {
        EXPECT_GE(TurnDistance(q, seed), TurnDistance((*all)[i - 1].q, seed));
      }
      made_found = made_found || TurnDistance(q, q_made) < 1e-4;
    }
    EXPECT_TRUE(made_found) << "made by " << q_made.transpose();
  }
}

// max_solutions keeps the nearest to the seed; max_seed_distance drops the farther ones.
TEST(RobotBranches, BoundsKeepTheNearestToTheSeed) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  const Eigen::VectorXd q_made = (Eigen::VectorXd(6) << 0.3, -1.2, 1.4, -1.5, -1.3, 0.4).finished();
  const ToolTarget target = PoseOf(robot->spec(), q_made);
  BranchOptions all_of_them;
  all_of_them.max_solutions = 16;
  all_of_them.attempts = 200;
  auto all = SolveBranches(*robot, target, q_made, RobotIkOptions{}, all_of_them);
  ASSERT_TRUE(all.ok());
  ASSERT_GE(all->size(), 3u);
  EXPECT_LT(TurnDistance(all->front().q, q_made), 1e-4);  // the seed's own branch first
  BranchOptions two = all_of_them;
  two.max_solutions = 2;
  auto nearest = SolveBranches(*robot, target, q_made, RobotIkOptions{}, two);
  ASSERT_TRUE(nearest.ok());
  ASSERT_EQ(nearest->size(), 2u);
  EXPECT_LT(TurnDistance((*nearest)[1].q, (*all)[1].q), 1e-6);
  BranchOptions close = all_of_them;
  close.max_seed_distance =
      0.5 * (TurnDistance((*all)[1].q, q_made) + TurnDistance((*all)[0].q, q_made));
  auto within = SolveBranches(*robot, target, q_made, RobotIkOptions{}, close);
  ASSERT_TRUE(within.ok());
  ASSERT_EQ(within->size(), 1u);
}

TEST(RobotBranches, BadOptionsNameTheFieldAndStopCancels) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  const ToolTarget target = *ToolTarget::Position(Eigen::Vector3d(0.3, 0.2, 0.4));
  const Eigen::VectorXd seed = Eigen::VectorXd::Zero(6);
  BranchOptions bad;
  bad.max_solutions = 0;
  auto result = SolveBranches(*robot, target, seed, RobotIkOptions{}, bad);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("max_solutions"), std::string::npos);
  bad = BranchOptions{};
  bad.min_separation = -1.0;
  result = SolveBranches(*robot, target, seed, RobotIkOptions{}, bad);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("min_separation"), std::string::npos);
  result =
      SolveBranches(*robot, target, Eigen::VectorXd::Zero(4), RobotIkOptions{}, BranchOptions{});
  EXPECT_FALSE(result.ok());
  // A stop (a cancelled call) ends the search after the attempts before it.
  int asked = 0;
  result = SolveBranches(*robot, target, seed, RobotIkOptions{}, BranchOptions{}, nullptr,
                         [&] { return ++asked > 3; });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(asked, 4);
}

}  // namespace
}  // namespace ikd::robot
