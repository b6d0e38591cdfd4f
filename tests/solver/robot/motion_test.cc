// The clearance pulls of robot/motion.h: the arm's own links are seen SelfShift farther by the
// soft terms only.
#include "../solver/robot/motion.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/planning/scene.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/self_collision.h"
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

// The test's own exact capsule gap: the distance from a point of a-b to c-d is convex along
// a-b, so a golden-section search finds its least (to 1e-15 of the segment).
double OwnCapsuleGap(const Eigen::Vector3d& a, const Eigen::Vector3d& b, double ra,
                     const Eigen::Vector3d& c, const Eigen::Vector3d& d, double rc) {
  const auto at = [&](double s) { return test::DistanceToSegment(a + s * (b - a), c, d); };
  const double golden = (std::sqrt(5.0) - 1.0) / 2.0;
  double low = 0.0, high = 1.0;
  for (int i = 0; i < 90; ++i) {
    const double x1 = high - golden * (high - low), x2 = low + golden * (high - low);
    (at(x1) <= at(x2) ? high : low) = at(x1) <= at(x2) ? x2 : x1;
  }
  return std::min({at(0.0), at(1.0), at(0.5 * (low + high))}) - ra - rc;
}

// Every contact of link k at q, by the test's own geometry, nearest first: its capsules against
// the ball and against the links self-collision checks it with (`second`: one of the latter).
std::vector<std::pair<double, bool>> OwnContacts(const Robot& robot, const Eigen::Vector3d& ball,
                                                 double radius, const Eigen::VectorXd& q, int k) {
  const ChainSpec& spec = robot.spec();
  const std::vector<Eigen::Isometry3d> X = LinkPoses(spec, q);
  std::vector<std::pair<double, bool>> contacts;
  for (const LinkShape& p : spec.link_shapes[k]) {
    contacts.emplace_back(test::DistanceToSegment(ball, X[k] * p.a, X[k] * p.b) - p.radius - radius,
                          false);
  }
  for (const auto& [i, j] : SelfCollisionMatrixOf(robot).checked()) {
    if (i != k && j != k) continue;
    const int other = i == k ? j : i;
    for (const LinkShape& p : spec.link_shapes[k]) {
      for (const LinkShape& r : spec.link_shapes[other]) {
        contacts.emplace_back(OwnCapsuleGap(X[k] * p.a, X[k] * p.b, p.radius, X[other] * r.a,
                                            X[other] * r.b, r.radius),
                              true);
      }
    }
  }
  std::sort(contacts.begin(), contacts.end());
  return contacts;
}

// The gradients are the derivative of each link's nearest contact, by the test's own central
// differences of its own distances (a ball among the links, and the Panda's own link pairs),
// wherever that contact is clear of the next one (no kink within the difference step).
TEST(LinkClearanceGradientsTest, AreTheDerivativeOfTheNearestContact) {
  const Robot panda = *Robot::Create(presets::PandaWithBody());
  std::mt19937_64 rng(7);
  int rows = 0, self_rows = 0;
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::VectorXd q(7);
    for (int j = 0; j < 7; ++j) {
      const JointLimits& limits = *panda.spec().joints[j].limits;
      q[j] = std::uniform_real_distribution<double>(limits.lower, limits.upper)(rng);
    }
    // A ball near link 3's origin, so that the links about it meet it first.
    const Eigen::Vector3d ball = LinkPoses(panda.spec(), q)[3] * Eigen::Vector3d(0.05, 0.03, -0.02);
    const double radius = 0.01;
    const planning::Scene scene =
        *planning::Scene::Create({{"ball", planning::Sphere{ball, radius}}});
    const Eigen::MatrixXd gradient = LinkClearanceGradients(panda, &scene, q);
    ASSERT_EQ(gradient.rows(), 7);
    ASSERT_EQ(gradient.cols(), 7);
    constexpr double h = 1e-6;
    for (int k = 0; k < 7; ++k) {
      const auto contacts = OwnContacts(panda, ball, radius, q, k);
      if (contacts.size() > 1 && contacts[1].first - contacts[0].first < 1e-4) continue;  // kink
      const bool self = contacts[0].second;
      for (int j = 0; j < 7; ++j) {
        Eigen::VectorXd up = q, down = q;
        up[j] += h, down[j] -= h;
        const double own = (OwnContacts(panda, ball, radius, up, k)[0].first -
                            OwnContacts(panda, ball, radius, down, k)[0].first) /
                           (2.0 * h);
        EXPECT_NEAR(gradient(k, j), own, 1e-6)
            << "trial " << trial << " link " << k << " joint " << j;
        // A joint past the link moves neither it nor the ball.
        if (j > k && !self) {
          EXPECT_EQ(gradient(k, j), 0.0);
        }
      }
      ++rows;
      self_rows += self;
    }
  }
  EXPECT_GT(rows, 100);
  EXPECT_GT(self_rows, 10);  // the arm's own pairs are among them
}

// The one-pass field is the two answers it stands for: LinkClearances exactly, and the gradient
// rows of the links nearer than the bound (the others 0), with a ball beside the arm and the
// arm's own links near each other.
TEST(LinkClearancesWithGradientsTest, AreTheClearancesAndTheNearRowsOfTheGradients) {
  const Robot panda = *Robot::Create(presets::PandaWithBody());
  std::mt19937_64 rng(11);
  int near_rows = 0, far_rows = 0;
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::VectorXd q(7);
    for (int j = 0; j < 7; ++j) {
      const JointLimits& limits = *panda.spec().joints[j].limits;
      q[j] = std::uniform_real_distribution<double>(limits.lower, limits.upper)(rng);
    }
    const Eigen::Vector3d ball = LinkPoses(panda.spec(), q)[2] * Eigen::Vector3d(0.1, 0.0, 0.0);
    const planning::Scene scene =
        *planning::Scene::Create({{"ball", planning::Sphere{ball, 0.02}}});
    const double below = 0.05;
    const LinkClearanceField field = LinkClearancesWithGradients(panda, &scene, q, 0.0, below);
    EXPECT_EQ(field.clearance, LinkClearances(panda, &scene, q));
    const Eigen::MatrixXd all = LinkClearanceGradients(panda, &scene, q);
    for (int k = 0; k < 7; ++k) {
      if (field.clearance[k] < below) {
        EXPECT_EQ(field.gradient.row(k), all.row(k)) << "link " << k;
        ++near_rows;
      } else {
        EXPECT_TRUE(field.gradient.row(k).isZero(0.0)) << "link " << k;
        far_rows += all.row(k).norm() > 0.0;
      }
    }
  }
  EXPECT_GT(near_rows, 20);
  EXPECT_GT(far_rows, 20);
}

}  // namespace
}  // namespace ikd::robot::internal
