// DiagnoseChain (ik/diagnosis.h): reasons read from hand-built configurations whose distances,
// angles and reach the test computes itself.
#include "ikd/ik/diagnosis.h"

#include <cmath>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

namespace ikd::ik {
namespace {

using Kind = Reason::Kind;

// A planar arm of three 0.5 m limbs (radius 0.02) at the origin, joints limited to +-limit.
Arm PlanarArm(double limit = 2.5) {
  ArmSpec spec;
  for (int k = 0; k < 3; ++k) spec.limbs.push_back({0.5, 0.02});
  spec.joint_limits.assign(2, JointLimit{-limit, limit});
  return *Arm::Create(spec);
}

// Sites of the planar arm from its absolute limb headings (the test's own forward kinematics).
Eigen::Matrix3Xd PlanarSites(const std::vector<double>& headings) {
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, headings.size() + 1);
  for (size_t k = 0; k < headings.size(); ++k) {
    sites.col(k + 1) =
        sites.col(k) + 0.5 * Eigen::Vector3d(std::cos(headings[k]), std::sin(headings[k]), 0);
  }
  return sites;
}

std::vector<Reason> OfKind(const std::vector<Reason>& reasons, Kind kind) {
  std::vector<Reason> out;
  for (const Reason& r : reasons) {
    if (r.kind == kind) out.push_back(r);
  }
  return out;
}

TEST(DiagnoseChainTest, ClearArmOnItsTargetHasNoReason) {
  const Arm arm = PlanarArm();
  const Eigen::Matrix3Xd sites = PlanarSites({0.3, 0.6, 0.2});
  EXPECT_TRUE(DiagnoseChain(arm, nullptr, sites, sites.col(3), 0.01).empty());
}

// A ball of radius 0.05 whose centre is 0.04 m beside limb 1's midpoint: limb 1 penetrates it
// by 0.05 + 0.02 - 0.04 = 0.03 m; limbs 0 and 2 (their ends 0.25 m along) stay clear.
TEST(DiagnoseChainTest, CollisionNamesTheLimbTheObstacleAndTheDepth) {
  const Arm arm = PlanarArm();
  const Eigen::Matrix3Xd sites = PlanarSites({0.0, 0.0, 0.0});
  const planning::Scene scene = *planning::Scene::Create(
      {{"crate", planning::Box{{0.0, 2.0, 0.0}, Eigen::Quaterniond::Identity(), {0.1, 0.1, 0.1}}},
       {"ball", planning::Sphere{{0.75, 0.04, 0.0}, 0.05}}});
  const std::vector<Reason> reasons = DiagnoseChain(arm, &scene, sites, sites.col(3), 0.01);
  const std::vector<Reason> hits = OfKind(reasons, Kind::kCollision);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].link, 1);
  EXPECT_EQ(scene.obstacles()[hits[0].obstacle].id, "ball");
  EXPECT_EQ(hits[0].other_link, -1);
  EXPECT_NEAR(hits[0].distance, -0.03, 1e-12);
  EXPECT_EQ(reasons.front().kind, Kind::kCollision);  // collisions first
}

// Limb 2 folded back across limb 0 (headings 0, 2.5, -0.6): the test's own segment distance says
// they cross; the pair is named, adjacent limbs never are.
TEST(DiagnoseChainTest, SelfCollisionNamesBothLimbs) {
  const Arm arm = PlanarArm(3.0);
  const Eigen::Matrix3Xd sites = PlanarSites({0.0, 2.6, -0.9});
  const std::vector<Reason> hits =
      OfKind(DiagnoseChain(arm, nullptr, sites, sites.col(3), 0.01), Kind::kCollision);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].link, 0);
  EXPECT_EQ(hits[0].other_link, 2);
  EXPECT_EQ(hits[0].obstacle, -1);
  EXPECT_LT(hits[0].distance, -0.04 + 1e-12);  // crossing segments: at most -(0.02 + 0.02)
}

// Inside the margin but clear: one NEAR_COLLISION with the margin as its bound.
TEST(DiagnoseChainTest, ClosestPairInsideTheMarginIsNamed) {
  const Arm arm = PlanarArm();
  const Eigen::Matrix3Xd sites = PlanarSites({0.0, 0.0, 0.0});
  const planning::Scene scene =
      *planning::Scene::Create({{"ball", planning::Sphere{{0.75, 0.075, 0.0}, 0.05}}});
  const std::vector<Reason> near =
      OfKind(DiagnoseChain(arm, &scene, sites, sites.col(3), 0.01), Kind::kNearCollision);
  ASSERT_EQ(near.size(), 1u);
  EXPECT_NEAR(near[0].distance, 0.075 - 0.05 - 0.02, 1e-12);
  EXPECT_EQ(near[0].bound, 0.01);
}

// Joint 2's turn at its +1.0 limit: named by its index in the joint positions (planar: 2).
TEST(DiagnoseChainTest, JointAtItsLimitIsNamedWithTheBound) {
  const Arm arm = PlanarArm(1.0);
  const Eigen::Matrix3Xd sites = PlanarSites({0.2, 0.5, 1.5});  // turns 0.3 and 1.0
  const std::vector<Reason> limits =
      OfKind(DiagnoseChain(arm, nullptr, sites, sites.col(3), 0.01), Kind::kJointLimit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].joint, 2);
  EXPECT_NEAR(limits[0].value, 1.0, 1e-12);
  EXPECT_EQ(limits[0].bound, 1.0);
  EXPECT_NEAR(arm.AnglesFromSites(sites)[limits[0].joint], 1.0, 1e-12);
}

// A spatial arm's bend limit: the reason's joint is the bend's index (2k) in the positions.
TEST(DiagnoseChainTest, SpatialBendAtItsLimitIsNamedByItsPosition) {
  ArmSpec spec;
  spec.planar = false;
  for (int k = 0; k < 3; ++k) spec.limbs.push_back({0.5, 0.02});
  spec.joint_limits.assign(2, JointLimit{0.0, 0.8});
  const Arm arm = *Arm::Create(spec);
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, 4);
  sites.col(1) = Eigen::Vector3d(0, 0, 0.5);
  sites.col(2) = sites.col(1) + 0.5 * Eigen::Vector3d(std::sin(0.3), 0, std::cos(0.3));
  sites.col(3) = sites.col(2) + 0.5 * Eigen::Vector3d(std::sin(1.1), 0, std::cos(1.1));  // bend 0.8
  const std::vector<Reason> limits =
      OfKind(DiagnoseChain(arm, nullptr, sites, sites.col(3), 0.01), Kind::kJointLimit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].joint, 4);
  EXPECT_NEAR(arm.AnglesFromSites(sites)[4], 0.8, 1e-12);
}

// A target 2 m from the base of a 1.5 m arm: 0.5 m out of reach, and the stretched hand is
// 0.5 m short of it, towards it.
TEST(DiagnoseChainTest, TargetBeyondTheReachGivesTheExcessAndTheResidual) {
  const Arm arm = PlanarArm();
  const Eigen::Matrix3Xd sites = PlanarSites({0.0, 0.0, 0.0});
  const Eigen::Vector3d target(2.0, 0.0, 0.0);
  const std::vector<Reason> reasons = DiagnoseChain(arm, nullptr, sites, target, 0.01);
  const std::vector<Reason> reach = OfKind(reasons, Kind::kOutOfReach);
  ASSERT_EQ(reach.size(), 1u);
  EXPECT_NEAR(reach[0].distance, 0.5, 1e-12);
  EXPECT_NEAR(reach[0].bound, 1.5, 1e-12);
  const std::vector<Reason> residual = OfKind(reasons, Kind::kResidual);
  ASSERT_EQ(residual.size(), 1u);
  EXPECT_NEAR(residual[0].value, 0.5, 1e-12);
  EXPECT_NEAR(residual[0].direction.x(), 1.0, 1e-12);
}

}  // namespace
}  // namespace ikd::ik
