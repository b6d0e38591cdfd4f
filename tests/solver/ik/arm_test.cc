#include "ikd/ik/arm.h"

#include <cmath>
#include <numbers>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::ik {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = std::numbers::pi;

ArmSpec Planar(int n) {
  ArmSpec spec;
  for (int k = 0; k < n; ++k) spec.limbs.push_back({0.5 + 0.1 * k, 0.02});
  return spec;
}

ArmSpec Spatial(int n) {
  ArmSpec spec = Planar(n);
  spec.planar = false;
  spec.base_position = Eigen::Vector3d(0.3, -0.2, 0.5);
  spec.base_orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()));
  return spec;
}

// Planar two-link forward kinematics, textbook form: x = l1 cos q1 + l2 cos(q1 + q2) (1e-14).
TEST(ArmTest, PlanarForwardKinematicsMatchesTextbook) {
  ArmSpec spec = Planar(2);
  auto arm = *Arm::Create(spec);
  const double q1 = 0.4, q2 = -1.1, l1 = 0.5, l2 = 0.6;
  const Eigen::Matrix3Xd sites = *arm.SitesFromAngles({q1, q2});
  EXPECT_NEAR(sites(0, 2), l1 * std::cos(q1) + l2 * std::cos(q1 + q2), 1e-14);
  EXPECT_NEAR(sites(1, 2), l1 * std::sin(q1) + l2 * std::sin(q1 + q2), 1e-14);
  EXPECT_EQ(sites(2, 2), 0.0);
}

// Angles -> sites -> angles round trip to 1e-12 (issue 3), planar 7-link with a rotated base.
TEST(ArmTest, PlanarRoundTrip) {
  ArmSpec spec = Planar(7);
  spec.base_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()));
  spec.base_position = Eigen::Vector3d(1, 2, 3);
  auto arm = *Arm::Create(spec);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> angle(-3.0, 3.0);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<double> q(7);
    for (double& a : q) a = angle(rng);
    const std::vector<double> back = arm.AnglesFromSites(*arm.SitesFromAngles(q));
    for (int k = 0; k < 7; ++k) EXPECT_NEAR(back[k], q[k], 1e-12) << k;
  }
}

// Spatial 6-link round trip to 1e-12 with generic bends, and the bend is the angle between
// consecutive limbs, an independent geometric fact (1e-12).
TEST(ArmTest, SpatialRoundTripAndBendIsTheAngleBetweenLimbs) {
  auto arm = *Arm::Create(Spatial(6));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> bend(0.05, kPi - 0.05), azimuth(-3.1, 3.1);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<double> q(12);
    for (int k = 0; k < 6; ++k) q[2 * k] = bend(rng), q[2 * k + 1] = azimuth(rng);
    const Eigen::Matrix3Xd sites = *arm.SitesFromAngles(q);
    const std::vector<double> back = arm.AnglesFromSites(sites);
    for (int k = 0; k < 12; ++k) EXPECT_NEAR(back[k], q[k], 1e-12) << k;
    for (int k = 1; k < 6; ++k) EXPECT_NEAR(arm.JointAngle(sites, k), q[2 * k], 1e-12);
    for (int k = 0; k < 6; ++k) {
      EXPECT_NEAR((sites.col(k + 1) - sites.col(k)).norm(), arm.spec().limbs[k].length, 1e-14);
    }
  }
}

// Limb 0 of a spatial arm is in spherical coordinates about the base z axis:
// direction (sin b cos a, sin b sin a, cos b) in the arm frame (1e-14).
TEST(ArmTest, SpatialFirstLimbIsSphericalCoordinates) {
  ArmSpec spec = Planar(1);
  spec.planar = false;
  auto arm = *Arm::Create(spec);
  const double b = 0.7, a = -2.0;
  const Eigen::Matrix3Xd sites = *arm.SitesFromAngles({b, a});
  const Eigen::Vector3d expected =
      0.5 * Eigen::Vector3d(std::sin(b) * std::cos(a), std::sin(b) * std::sin(a), std::cos(b));
  EXPECT_LT((sites.col(1) - expected).norm(), 1e-14);
}

// Law of cosines: |r_{k+1} - r_{k-1}| at bend theta equals the forward-kinematics span (1e-14).
TEST(ArmTest, SpanAtBendMatchesForwardKinematics) {
  auto arm = *Arm::Create(Planar(3));
  for (double theta : {0.0, 0.5, -1.2, 2.9}) {
    const Eigen::Matrix3Xd sites = *arm.SitesFromAngles({0.1, theta, 0.0});
    EXPECT_NEAR(arm.SpanAtBend(1, std::abs(theta)), (sites.col(2) - sites.col(0)).norm(), 1e-14);
    EXPECT_NEAR(arm.JointAngle(sites, 1), theta, 1e-14);
  }
}

TEST(ArmTest, LimitViolationMeasuresDistanceOutsideTheRange) {
  ArmSpec spec = Planar(3);
  spec.joint_limits = {JointLimit{-0.5, 1.0}, std::nullopt};
  auto arm = *Arm::Create(spec);
  EXPECT_NEAR(arm.LimitViolation(*arm.SitesFromAngles({0.0, 1.3, 2.5})), 0.3, 1e-12);
  EXPECT_NEAR(arm.LimitViolation(*arm.SitesFromAngles({0.0, -0.9, 2.5})), 0.4, 1e-12);
  EXPECT_EQ(arm.LimitViolation(*arm.SitesFromAngles({0.0, 0.2, -2.5})), 0.0);
}

// Reach shell: max = sum of lengths; min = 2 max l - sum l when the longest limb dominates.
TEST(ArmTest, ReachShell) {
  ArmSpec spec;
  spec.limbs = {{3.0, 0}, {1.0, 0}, {0.5, 0}};
  auto arm = *Arm::Create(spec);
  EXPECT_DOUBLE_EQ(arm.max_reach(), 4.5);
  EXPECT_DOUBLE_EQ(arm.min_reach(), 1.5);
  EXPECT_DOUBLE_EQ(arm.shortest_limb(), 0.5);
  EXPECT_DOUBLE_EQ((*Arm::Create(Planar(4))).min_reach(), 0.0);
}

TEST(ArmTest, HomeSitesSatisfyLimbLengths) {
  for (bool planar : {true, false}) {
    ArmSpec spec = Planar(5);
    spec.planar = planar;
    auto arm = *Arm::Create(spec);
    EXPECT_LT(arm.chain_model().MaxRelativeViolation(arm.HomeSites()), 1e-14);
  }
}

TEST(ArmTest, RejectsBadInputNamingTheField) {
  struct Case {
    std::function<void(ArmSpec&)> edit;
    const char* expected;
  };
  const Case cases[] = {
      {[](ArmSpec& s) { s.limbs.clear(); }, "limbs: need between 1"},
      {[](ArmSpec& s) { s.limbs[1].length = 0.0; },
       "limbs[1].length must be finite and in (0, 1e+06] m, got 0"},
      {[](ArmSpec& s) { s.limbs[0].length = 2e6; },
       "limbs[0].length must be finite and in (0, 1e+06]"},
      {[](ArmSpec& s) { s.limbs[2].length = std::nan(""); }, "limbs[2].length"},
      {[](ArmSpec& s) { s.limbs[0].radius = -0.1; },
       "limbs[0].radius must be finite and in [0, 1e+06]"},
      {[](ArmSpec& s) {
         s.joint_limits = {JointLimit{1.0, 0.5}, std::nullopt};
       },
       "joint_limits[0]: min 1 must be <= max 0.5"},
      {[](ArmSpec& s) { s.joint_limits = {std::nullopt}; }, "joint_limits: need 0 or 2"},
      {[](ArmSpec& s) {
         s.joint_limits = {JointLimit{-4.0, 0.5}, std::nullopt};
       },
       "joint_limits[0].min"},
      {[](ArmSpec& s) {
         s.site_weights = {1, 1, 0, 1};
       },
       "site_weights[2]"},
      {[](ArmSpec& s) { s.home_angles = {0.1}; }, "home_angles: need 0 or 3"},
      {[](ArmSpec& s) { s.base_position.x() = INFINITY; }, "base_position"},
      {[](ArmSpec& s) { s.base_position.y() = -1.5e6; },
       "base_position must be finite and within 1e+06 m of the origin in every coordinate"},
      {[](ArmSpec& s) { s.base_orientation.coeffs().setZero(); }, "base_orientation"},
  };
  for (const Case& c : cases) {
    ArmSpec spec = Planar(3);
    c.edit(spec);
    auto arm = Arm::Create(spec);
    ASSERT_FALSE(arm.ok()) << c.expected;
    EXPECT_EQ(arm.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(arm.status().message()), HasSubstr(c.expected));
  }
  auto arm = *Arm::Create(Planar(3));
  EXPECT_THAT(std::string(arm.SitesFromAngles({0.1}).status().message()), HasSubstr("need 3"));
}

}  // namespace
}  // namespace ikd::ik
