// The chain-arm path optimizer's contact terms (ik/path_contacts.h) against the test's own
// geometry: a planar arm beside a ball, its contact's gap, point and normal from the test's
// distances, and the contact gradient against finite differences of the test's own distance
// through the test's own forward kinematics.
#include "../solver/ik/path_contacts.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace ikd::ik::internal {
namespace {

constexpr double kLimbRadius = 0.02, kBallRadius = 0.1;

Arm PlanarArm() {
  ArmSpec spec;
  spec.planar = true;
  spec.limbs = {{0.5, kLimbRadius}, {0.4, kLimbRadius}, {0.3, kLimbRadius}};
  return *Arm::Create(spec);
}

// The test's planar forward kinematics: limb k's heading is the sum of angles 0..k.
Eigen::Matrix3Xd Sites(const Eigen::VectorXd& q) {
  const double lengths[] = {0.5, 0.4, 0.3};
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, 4);
  double heading = 0.0;
  for (int k = 0; k < 3; ++k) {
    heading += q[k];
    sites.col(k + 1) =
        sites.col(k) + lengths[k] * Eigen::Vector3d(std::cos(heading), std::sin(heading), 0.0);
  }
  return sites;
}

// The test's own surface distance of limb k from the ball: centre to segment, less the radii.
double BallDistance(const Eigen::Matrix3Xd& sites, int k, const Eigen::Vector3d& centre) {
  const Eigen::Vector3d a = sites.col(k), b = sites.col(k + 1);
  const double t = std::clamp((centre - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
  return (a + t * (b - a) - centre).norm() - kBallRadius - kLimbRadius;
}

planning::Scene BallAt(const Eigen::Vector3d& centre) {
  return *planning::Scene::Create({{"ball", planning::Sphere{centre, kBallRadius}}});
}

TEST(PathContactFinderTest, ALimbNearTheBallIsOneContactWithTheTestsGapAndNormal) {
  // The arm straight along x; the ball 3 cm above limb 1's middle (x = 0.7).
  const Arm arm = PlanarArm();
  const Eigen::VectorXd q = Eigen::VectorXd::Zero(3);
  const Eigen::Vector3d centre(0.7, kBallRadius + kLimbRadius + 0.03, 0.0);
  const planning::Scene scene = BallAt(centre);
  constexpr double kReach = 0.05;
  PathContactFinder finder(arm, &scene, kReach);
  std::vector<PathContact> contacts;
  finder.Find(/*sample=*/4, Sites(q), contacts);
  ASSERT_EQ(contacts.size(), 1u);
  const PathContact& c = contacts[0];
  EXPECT_EQ(c.sample, 4);
  EXPECT_EQ(c.limb, 1);
  EXPECT_EQ(c.other, -1);
  EXPECT_NEAR(c.t, 0.5, 1e-12);
  EXPECT_NEAR(c.gap, kReach - BallDistance(Sites(q), 1, centre), 1e-12);
  EXPECT_NEAR((c.normal - Eigen::Vector3d(0.0, -1.0, 0.0)).norm(), 0.0, 1e-12);

  PathContactFinder short_reach(arm, &scene, 0.02);  // the ball 3 cm off: beyond it
  contacts.clear();
  short_reach.Find(0, Sites(q), contacts);
  EXPECT_TRUE(contacts.empty());
}

TEST(PathContactFinderTest, FoldedLimbsNearEachOtherAreASelfContact) {
  // Limb 2 folded back over limb 0, 5 cm above its axis: their surfaces 1 cm apart.
  const Arm arm = PlanarArm();
  Eigen::VectorXd q(3);
  const double up = std::asin(0.05 / 0.4);
  q << 0.0, 3.14159265358979323846 - up, -(3.14159265358979323846 - up) + 3.14159265358979323846;
  const Eigen::Matrix3Xd sites = Sites(q);
  PathContactFinder finder(arm, nullptr, 0.05);
  std::vector<PathContact> contacts;
  finder.Find(0, sites, contacts);
  bool found = false;
  for (const PathContact& c : contacts) {
    if (std::min(c.limb, c.other) != 0 || std::max(c.limb, c.other) != 2) continue;
    found = true;
    EXPECT_NEAR(c.gap, 0.05 - (0.05 - 2 * kLimbRadius), 1e-9);
  }
  EXPECT_TRUE(found);
}

TEST(ContactGradientTest, MatchesFiniteDifferencesOfTheTestsDistance) {
  const Arm arm = PlanarArm();
  Eigen::VectorXd q(3);
  q << 0.3, -0.4, 0.5;
  const Eigen::Matrix3Xd sites = Sites(q);
  const Eigen::Vector3d middle = 0.5 * (sites.col(1) + sites.col(2));
  const Eigen::Vector3d side =
      Eigen::Vector3d::UnitZ().cross((sites.col(2) - sites.col(1)).normalized());
  const Eigen::Vector3d centre = middle + (kBallRadius + kLimbRadius + 0.01) * side;
  const planning::Scene scene = BallAt(centre);
  PathContactFinder finder(arm, &scene, 0.05);
  std::vector<PathContact> contacts;
  finder.Find(0, sites, contacts);
  ASSERT_EQ(contacts.size(), 1u);
  std::vector<Eigen::Matrix3Xd> jacobians;
  SiteJacobians(arm, sites, q.transpose(), jacobians);
  const Eigen::RowVectorXd g = ContactGradient(contacts[0], jacobians.data(), 3);
  constexpr double kH = 1e-6;
  for (int j = 0; j < 3; ++j) {
    Eigen::VectorXd plus = q, minus = q;
    plus[j] += kH;
    minus[j] -= kH;
    const double numeric =
        (BallDistance(Sites(plus), 1, centre) - BallDistance(Sites(minus), 1, centre)) / (2 * kH);
    EXPECT_NEAR(g[j], numeric, 1e-6) << "angle " << j;
  }
}

}  // namespace
}  // namespace ikd::ik::internal
