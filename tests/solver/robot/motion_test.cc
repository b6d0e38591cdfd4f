// The clearance pulls of robot/motion.h: the arm's own links are seen SelfShift farther by the
// soft terms only.
#include "../solver/robot/motion.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/planning/scene.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/robot.h"
#include "solver/robot/own_capsule_distances.h"

namespace ikd::robot::internal {
namespace {

constexpr double kMargin = 0.01;  // RobotIkOptions' default safety margin

Eigen::VectorXd PandaReady() {
  return (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished();
}

// At the Panda's ready pose its forearm (link 4) and flange body (link 6) are 20 mm apart
// (docs/preset_geometry.md; the test's own capsule distances): inside three margins, outside
// one and a half. Shifted, the link capsules' clearances against the arm are their true ones
// plus the shift, and a capsule held by the scene is not shifted.
TEST(LinkClearancesTest, TheShiftMovesTheArmsOwnLinksOnly) {
  const Robot panda = *Robot::Create(presets::PandaWithBody());
  const Eigen::VectorXd q = PandaReady();
  const double own = test::LinkGapLowerBound(panda.spec(), LinkPoses(panda.spec(), q), 4, 6);
  ASSERT_GT(own, 1.5 * kMargin);
  ASSERT_LT(own, 3.0 * kMargin);
  const std::vector<double> plain = LinkClearances(panda, nullptr, q);
  const std::vector<double> shifted = LinkClearances(panda, nullptr, q, 0.015);
  ASSERT_EQ(plain.size(), shifted.size());
  for (size_t k = 0; k < plain.size(); ++k) {
    if (std::isfinite(plain[k])) {
      EXPECT_NEAR(shifted[k], plain[k] + 0.015, 1e-12) << "link " << k;
    } else {
      EXPECT_FALSE(std::isfinite(shifted[k])) << "link " << k;
    }
  }
  // No scene: the least is the 4-6 pair (the test's bound is within 0.5 mm of exact).
  EXPECT_NEAR(*std::min_element(plain.begin(), plain.end()), own, 5e-4);
  // A ball on the tool centre point: the capsules it overlaps are held by the scene, which no
  // shift moves.
  const planning::Scene scene = *planning::Scene::Create(
      {{"ball", planning::Sphere{ToolPose(panda.spec(), q).translation(), 0.01}}});
  const std::vector<double> with_ball = LinkClearances(panda, &scene, q);
  const std::vector<double> with_ball_shifted = LinkClearances(panda, &scene, q, 0.015);
  const size_t held = std::min_element(with_ball.begin(), with_ball.end()) - with_ball.begin();
  EXPECT_LT(with_ball[held], 0.0);
  EXPECT_EQ(with_ball_shifted[held], with_ball[held]);
}

// The null-space pull at the ready pose, no scene: with the links seen as they are, the 20 mm
// pair pushes the joints (it is inside the 3-margin buffer); with the arm's own links shifted
// by 1.5 margins, it does not.
TEST(PullFromObstaclesTest, TheArmsOwnLinksPullOnlyWithinOneAndAHalfMargins) {
  const Robot panda = *Robot::Create(presets::PandaWithBody());
  const Eigen::VectorXd q = PandaReady();
  Eigen::VectorXd unshifted = Eigen::VectorXd::Zero(7), shifted = Eigen::VectorXd::Zero(7);
  PullFromObstacles(panda, nullptr, q, 3.0 * kMargin, 0.0, 1.0, unshifted);
  PullFromObstacles(panda, nullptr, q, 3.0 * kMargin, SelfShift(3.0, kMargin), 1.0, shifted);
  EXPECT_GT(unshifted.norm(), 0.0);
  EXPECT_EQ(shifted.norm(), 0.0);
  // The unshifted pull opens the pair: a small step along it raises the test's own gap.
  const double before = test::LinkGapLowerBound(panda.spec(), LinkPoses(panda.spec(), q), 4, 6);
  const Eigen::VectorXd moved = q + 1e-3 * unshifted.normalized();
  const double after = test::LinkGapLowerBound(panda.spec(), LinkPoses(panda.spec(), moved), 4, 6);
  EXPECT_GT(after, before);
}

}  // namespace
}  // namespace ikd::robot::internal
