// The presets' collision models (issue 33, item 2): the published dimensions lie inside them,
// they are connected bodies standing on their mounting plane, they can fold into themselves,
// and they leave the kinematics alone. Distances are this test's own point-segment formula.
#include "ikd/robot/presets.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/robot/self_collision.h"
#include "solver/robot/own_capsule_distances.h"

namespace ikd::robot {
namespace {

using test::DistanceToSegment;

constexpr double kPi = std::numbers::pi;

// How far x (in link k's frame) lies outside the union of link k's capsules (< 0: inside).
double OutsideLink(const ChainSpec& spec, int k, const Eigen::Vector3d& x) {
  double outside = std::numeric_limits<double>::infinity();
  for (const LinkShape& c : spec.link_shapes[k]) {
    outside = std::min(outside, DistanceToSegment(x, c.a, c.b) - c.radius);
  }
  return outside;
}

// A solid cylinder of radius r about a-b in link k's frame: a published outline.
struct PublishedCylinder {
  int link;
  Eigen::Vector3d a, b;
  double radius;
  const char* source;
};

// The worst point of the cylinder's side and end discs against the link's capsules.
double WorstOutside(const ChainSpec& spec, const PublishedCylinder& c) {
  const Eigen::Vector3d axis = (c.b - c.a).normalized();
  const Eigen::Vector3d u = axis.unitOrthogonal(), v = axis.cross(u);
  double worst = -std::numeric_limits<double>::infinity();
  auto ring = [&](const Eigen::Vector3d& centre, double r) {
    for (int i = 0; i < 72; ++i) {
      const double phi = 2 * kPi * i / 72;
      const Eigen::Vector3d x = centre + r * (std::cos(phi) * u + std::sin(phi) * v);
      worst = std::max(worst, OutsideLink(spec, c.link, x));
    }
  };
  for (int s = 0; s <= 40; ++s) ring(c.a + (c.b - c.a) * s / 40.0, c.radius);
  for (int s = 0; s < 8; ++s) ring(c.a, c.radius * s / 8.0), ring(c.b, c.radius * s / 8.0);
  return worst;
}

std::vector<ChainSpec> Bodies() {
  return {presets::Ur5WithBody(), presets::PandaWithBody(), presets::Iiwa14WithBody()};
}

Eigen::VectorXd RandomWithinLimits(const ChainSpec& spec, std::mt19937_64& rng) {
  Eigen::VectorXd q(spec.joints.size());
  for (int j = 0; j < q.size(); ++j) {
    std::uniform_real_distribution<double> in(spec.joints[j].limits->lower,
                                              spec.joints[j].limits->upper);
    q[j] = in(rng);
  }
  return q;
}

TEST(PresetsTest, BodiesAreValidNameTheirSourceAndLeaveTheKinematicsAlone) {
  const std::vector<ChainSpec> bare = {presets::Ur5(), presets::Panda(), presets::Iiwa14()};
  const std::vector<std::string> sources = {"universal_robot", "franka_ros", "iiwa_stack"};
  std::mt19937_64 rng(3);
  for (size_t i = 0; i < bare.size(); ++i) {
    const ChainSpec body = Bodies()[i];
    SCOPED_TRACE(body.name);
    EXPECT_TRUE(body.Validate().ok()) << body.Validate();
    ASSERT_EQ(static_cast<int>(body.link_shapes.size()), NumMovingJoints(body));
    for (const auto& link : body.link_shapes) EXPECT_FALSE(link.empty());
    EXPECT_TRUE(body.link_radii.empty());
    EXPECT_TRUE(body.ChecksSelfCollision());
    ASSERT_FALSE(body.geometry_notes.empty());
    EXPECT_NE(body.geometry_notes[0].find(sources[i]), std::string::npos);
    EXPECT_FALSE(bare[i].ChecksSelfCollision());
    for (int n = 0; n < 20; ++n) {
      const Eigen::VectorXd q = RandomWithinLimits(body, rng);
      EXPECT_TRUE(ToolPose(body, q).isApprox(ToolPose(bare[i], q), 1e-15));
    }
  }
}

// ur_description's physical_parameters.yaml (ros-industrial/universal_robot a7a2c545), its
// "manually measured" radii about the centre lines its offsets give, axial extents as its
// meshes show them; in our link frames (link k moved by joint k, z along joint k's axis).
TEST(PresetsTest, Ur5HoldsTheRadiiUniversalRobotsMeasured) {
  const PublishedCylinder published[] = {
      {0, {0, 0, 0.0239}, {0, 0, 0.1577}, 0.060, "shoulder_radius, about joint 1"},
      {0, {0, -0.0706, 0.089159}, {0, 0, 0.089159}, 0.060, "shoulder_radius, joint 2 stub"},
      {1, {0, 0, 0.0706}, {0, 0, 0.2045}, 0.060, "shoulder_radius, joint 2 housing"},
      {1, {0, 0, 0.13585}, {-0.425, 0, 0.13585}, 0.054, "upper_arm_radius at shoulder_offset"},
      {1, {-0.425, 0, 0.0706}, {-0.425, 0, 0.2045}, 0.060, "elbow_radius, joint 3 housing"},
      {2, {0, 0, 0.0145}, {0, 0, 0.0711}, 0.060, "elbow_radius, forearm end"},
      {2, {0, 0, 0.0165}, {-0.39225, 0, 0.0165}, 0.040, "forearm_radius at elbow_offset"},
      {2, {-0.39225, 0, -0.0408}, {-0.39225, 0, 0.0640}, 0.045, "wrist_radius, joint 4 housing"},
      {3, {0, 0, 0.0636}, {0, 0, 0.10915}, 0.045, "wrist_radius, wrist 1 body"},
      {3, {0, -0.0475, 0.10915}, {0, 0.0572, 0.10915}, 0.045, "wrist_radius, joint 5 housing"},
      {4, {0, 0, 0.0488}, {0, 0, 0.09465}, 0.045, "wrist_radius, wrist 2 body"},
      {4, {0, -0.0572, 0.09465}, {0, 0.0475, 0.09465}, 0.045, "wrist_radius, joint 6 housing"},
  };
  const ChainSpec ur5 = presets::Ur5WithBody();
  for (const PublishedCylinder& c : published) {
    EXPECT_LE(WorstOutside(ur5, c), 1e-6) << c.source;
  }
}

// The published link lengths where they run through the link's own material: the Panda's
// elbow and wrist offsets (a = 0.0825 and 0.088 m in Franka's DH table), and every joint of
// the Panda and the iiwa14 where two axes cross at one point (a zero-length link).
TEST(PresetsTest, PublishedOffsetsAndAxisCrossingsLieInTheLinks) {
  const ChainSpec panda = presets::PandaWithBody(), iiwa = presets::Iiwa14WithBody();
  for (int s = 0; s <= 20; ++s) {
    EXPECT_LT(OutsideLink(panda, 2, {0.0825 * s / 20, 0, 0}), 0.0) << s;
    EXPECT_LT(OutsideLink(panda, 5, {0.088 * s / 20, 0, 0}), 0.0) << s;
  }
  for (int k : {0, 4}) EXPECT_LT(OutsideLink(panda, k, Eigen::Vector3d::Zero()), 0.0) << k;
  for (int k : {1, 3, 5}) EXPECT_LT(OutsideLink(iiwa, k, Eigen::Vector3d::Zero()), 0.0) << k;
}

// Joint 1 turns about the world's vertical, so link 0 keeps its height: a floor at z = 0 (the
// mounting plane) must never touch it, or every configuration would collide.
TEST(PresetsTest, TheFirstLinkStaysAboveTheMountingPlane) {
  std::mt19937_64 rng(5);
  for (const ChainSpec& body : Bodies()) {
    for (int n = 0; n < 50; ++n) {
      const Eigen::Isometry3d X = LinkPoses(body, RandomWithinLimits(body, rng))[0];
      for (const LinkShape& c : body.link_shapes[0]) {
        const double lowest = std::min((X * c.a).z(), (X * c.b).z()) - c.radius;
        EXPECT_GE(lowest, 0.0) << body.name;
      }
    }
  }
}

// Consecutive links share a joint: their bodies overlap in every configuration (a gap would
// be a housing missing from the model).
TEST(PresetsTest, ConsecutiveLinksAlwaysOverlap) {
  std::mt19937_64 rng(7);
  for (const ChainSpec& body : Bodies()) {
    for (int n = 0; n < 50; ++n) {
      const std::vector<Eigen::Isometry3d> X = LinkPoses(body, RandomWithinLimits(body, rng));
      for (size_t k = 0; k + 1 < X.size(); ++k) {
        // Some point of link k's axis segments lies inside link k+1 (sampled, so conservative).
        double deepest = std::numeric_limits<double>::infinity();
        for (const LinkShape& c : body.link_shapes[k]) {
          for (int s = 0; s <= 50; ++s) {
            const Eigen::Vector3d x = X[k] * (c.a + (c.b - c.a) * s / 50.0);
            deepest =
                std::min(deepest, OutsideLink(body, k + 1, X[k + 1].inverse() * x) - c.radius);
          }
        }
        EXPECT_LT(deepest, 0.0) << body.name << " links " << k << ", " << k + 1;
      }
    }
  }
}

// The makers' ready poses are ordinary working poses: no two links that are not neighbours
// come within the 1 cm safety margin there.
TEST(PresetsTest, ReadyPosesAreClearOfThemselvesByTheSafetyMargin) {
  const std::vector<Eigen::VectorXd> ready = {
      (Eigen::VectorXd(6) << 0.0, -1.57, 1.57, -1.57, -1.57, 0.0).finished(),
      (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished(),
      (Eigen::VectorXd(7) << 0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0).finished()};
  const std::vector<ChainSpec> bodies = Bodies();
  for (size_t i = 0; i < bodies.size(); ++i) {
    const ChainSpec& body = bodies[i];
    const std::vector<Eigen::Isometry3d> X = LinkPoses(body, ready[i]);
    for (int a = 0; a < static_cast<int>(X.size()); ++a) {
      for (int b = a + 2; b < static_cast<int>(X.size()); ++b) {
        if (body.name == "ur5" && b == a + 2 && a >= 2) continue;  // the wrist pairs below
        EXPECT_GE(test::LinkGapLowerBound(body, X, a, b), 0.01)
            << body.name << " links " << a << ", " << b;
      }
    }
  }
}

// A real arm can fold into itself (some pairs are checked), but no two links touch in every
// configuration, except, on the UR5, the links on either side of a short wrist link (2-4 and
// 3-5): its published 45 mm wrist housings reach within a few mm of each other whatever the
// joints, so the pairs are given up as MoveIt gives up pairs that always collide.
TEST(PresetsTest, SomeLinkPairsAreCheckedAndOnlyTheUr5WristPairsAlwaysTouch) {
  const std::vector<std::vector<std::pair<int, int>>> expected = {{{2, 4}, {3, 5}}, {}, {}};
  const std::vector<ChainSpec> bodies = Bodies();
  for (size_t i = 0; i < bodies.size(); ++i) {
    const SelfCollisionMatrix m = SelfCollisionMatrix::Compute(bodies[i], 2000);
    EXPECT_FALSE(m.checked().empty()) << bodies[i].name;
    std::vector<std::pair<int, int>> always;
    for (int a = 0; a < m.num_links(); ++a) {
      for (int b = a + 1; b < m.num_links(); ++b) {
        if (m.rule(a, b) == PairRule::kAlwaysTouching) always.emplace_back(a, b);
      }
    }
    EXPECT_EQ(always, expected[i]) << bodies[i].name;
  }
}

}  // namespace
}  // namespace ikd::robot
