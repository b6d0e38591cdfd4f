// mock_arm's own geometry (clients/mock_geometry.h) against closed forms: distances of points,
// segments and capsules placed so that the answer is known by construction, and the sampled
// check of the motion between two states against a rod turning past a ball.
#include "mock_geometry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ikd::clients::mock {
namespace {

TEST(MockGeometryTest, PointSegmentDistanceIsThePerpendicularOrTheNearerEnd) {
  const Eigen::Vector3d a(0, 0, 0), b(2, 0, 0);
  EXPECT_DOUBLE_EQ(PointSegmentDistance({1.5, 3, 4}, a, b), 5.0);  // foot inside
  EXPECT_DOUBLE_EQ(PointSegmentDistance({5, 4, 0}, a, b), 5.0);    // beyond b: to b
  EXPECT_DOUBLE_EQ(PointSegmentDistance({-3, 0, 4}, a, b), 5.0);   // before a: to a
}

TEST(MockGeometryTest, SegmentSegmentDistanceOfCrossingAndParallelSegments) {
  // Skew: along x at z = 0 and along y at z = 1.5, crossing above (0.5, 0): 1.5.
  EXPECT_DOUBLE_EQ(SegmentSegmentDistance({0, 0, 0}, {1, 0, 0}, {0.5, -1, 1.5}, {0.5, 1, 1.5}),
                   1.5);
  // The same, the second one shifted past the first's end: from (1, 0, 0) to (2, 0, 1.5).
  EXPECT_DOUBLE_EQ(SegmentSegmentDistance({0, 0, 0}, {1, 0, 0}, {2, -1, 1.5}, {2, 1, 1.5}),
                   std::hypot(1.0, 1.5));
  // Parallel, overlapping, 0.3 apart.
  EXPECT_NEAR(SegmentSegmentDistance({0, 0, 0}, {1, 0, 0}, {0.5, 0.3, 0}, {1.5, 0.3, 0}), 0.3,
              1e-15);
}

TEST(MockGeometryTest, ChainSelfClearanceOfAFoldedChain) {
  // A U: limb 0 up the y axis, limb 1 across 0.2 m, limb 2 back down; limbs 0 and 2 are 0.2 m
  // apart, radii 0.03 and 0.05.
  Eigen::Matrix3Xd sites(3, 4);
  sites << 0, 0, 0.2, 0.2,  //
      0, 1, 1, 0.4,         //
      0, 0, 0, 0;
  EXPECT_NEAR(ChainSelfClearance(sites, {0.03, 0.01, 0.05}), 0.2 - 0.08, 1e-15);
  // Two limbs have no non-adjacent pair.
  EXPECT_EQ(ChainSelfClearance(sites.leftCols(3), {0.03, 0.01}), INFINITY);
}

TEST(MockGeometryTest, CapsuleClearanceFromASphere) {
  Obstacle ball;
  ball.kind = Obstacle::Kind::kSphere;
  ball.a = {0.5, 0.4, 0};
  ball.radius = 0.1;
  EXPECT_NEAR(CapsuleClearance(ball, {0, 0, 0}, {1, 0, 0}, 0.05), 0.4 - 0.15, 1e-15);
  EXPECT_NEAR(CapsuleClearance(ball, {0, 0.35, 0}, {1, 0.35, 0}, 0.05), -0.1, 1e-15);
}

// A rod of length 1 turning about the origin in the plane (q = its angle) and a ball of radius
// 0.05 centred 0.5 m out on the x axis: at angle a the rod's clearance is 0.5 |sin a| - 0.05
// (the foot of the perpendicular lies on the rod for |a| < pi / 2), this test's own closed form.
double RodClearance(const Eigen::VectorXd& q) { return 0.5 * std::abs(std::sin(q[0])) - 0.05; }

TEST(MockGeometryTest, MotionThroughABallBetweenTwoClearStatesIsFound) {
  const Eigen::VectorXd from = Eigen::VectorXd::Constant(1, -0.5), turn = Eigen::VectorXd::Ones(1);
  ASSERT_GT(RodClearance(from), 0.0);
  ASSERT_GT(RodClearance(from + turn), 0.0);
  // 500 samples of 2 mrad: s = 1/2 is one of them, where the rod passes through the centre.
  EXPECT_NEAR(LeastClearanceInside(from, turn, 0.002, RodClearance), -0.05, 1e-15);
}

TEST(MockGeometryTest, MotionSamplesAtTheStepAndAtLeastSixteenTimes) {
  std::vector<double> seen;
  const auto record = [&seen](const Eigen::VectorXd& q) {
    seen.push_back(q[0]);
    return RodClearance(q);
  };
  const Eigen::VectorXd from = Eigen::VectorXd::Constant(1, 0.2);
  // A turn of 0.5 rad sampled every 0.01 rad: 50 intervals, 49 inside.
  const double least = LeastClearanceInside(from, Eigen::VectorXd::Constant(1, 0.5), 0.01, record);
  ASSERT_EQ(seen.size(), 49u);
  EXPECT_NEAR(seen.front(), 0.21, 1e-15);
  EXPECT_NEAR(seen.back(), 0.69, 1e-15);
  EXPECT_NEAR(least, 0.5 * std::sin(0.21) - 0.05, 1e-15);  // clearance grows with the angle
  // A tiny turn is still sampled 16 times (15 inside).
  seen.clear();
  LeastClearanceInside(from, Eigen::VectorXd::Constant(1, 1e-6), 0.01, record);
  EXPECT_EQ(seen.size(), 15u);
}

// Three links in the plane, capsules of radius 0.02: link 0 along x from the origin, link 1 a
// 0.1 m riser, and link 2 either back over link 0 (folded: its axis on link 0's) or beyond it
// (spread: 0.1 m away).
LinkBodies ThreeLinks(bool folded) {
  const Eigen::Vector3d o(0, 0, 0), a(0.3, 0, 0),
      b = folded ? Eigen::Vector3d(0.2, 0, 0) : Eigen::Vector3d(0.3, 0.1, 0);
  const Eigen::Vector3d c = folded ? Eigen::Vector3d(-0.1, 0, 0) : Eigen::Vector3d(0.6, 0.1, 0);
  return {{{o, a, 0.02}}, {{a, b, 0.02}}, {{b, c, 0.02}}};
}

TEST(MockGeometryTest, LinkPairsAlwaysTouchingAreLeftOutTheRestChecked) {
  // Folded in every draw: links 0 and 2 always touch, so the pair is left out.
  EXPECT_TRUE(LinkPairsToCheck(3, 10, [] { return ThreeLinks(true); }).empty());
  // Spread in some draws: checked, although it touches in most.
  int draw = 0;
  const auto pairs = LinkPairsToCheck(3, 10, [&] { return ThreeLinks(++draw % 5 != 0); });
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0], std::make_pair(0, 2));
  // Never touching is still checked (stricter than the server, which allows such pairs).
  EXPECT_EQ(LinkPairsToCheck(3, 10, [] { return ThreeLinks(false); }).size(), 1u);
  // Clearances: folded -2 r; spread 0.1 - 2 r (link 0's end to link 2's start).
  EXPECT_NEAR(LinkPairsClearance(ThreeLinks(true), pairs), -0.04, 1e-15);
  EXPECT_NEAR(LinkPairsClearance(ThreeLinks(false), pairs), 0.06, 1e-15);
  EXPECT_EQ(LinkPairsClearance(ThreeLinks(true), {}), INFINITY);
}

TEST(MockGeometryTest, ALinkOfSeveralCapsulesIsAsCloseAsItsClosestOne) {
  // Link 2 spread (0.06 from link 0), plus a ball of radius 0.05 beyond its end (0.18 m from
  // link 0's end: clearance 0.11) and one 0.1 m above link 0's middle: 0.1 - 0.05 - 0.02.
  LinkBodies links = ThreeLinks(false);
  links[2].push_back({Eigen::Vector3d(0.45, 0.1, 0), Eigen::Vector3d(0.45, 0.1, 0), 0.05});
  links[2].push_back({Eigen::Vector3d(0.15, 0, 0.1), Eigen::Vector3d(0.15, 0, 0.1), 0.05});
  EXPECT_NEAR(LinkPairsClearance(links, {{0, 2}}), 0.03, 1e-15);
}

}  // namespace
}  // namespace ikd::clients::mock
