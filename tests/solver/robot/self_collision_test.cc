// Self-collision of industrial arms: which link pairs are checked (adjacent, always and never
// touching, allowed by the spec), and the clearances of the checked ones against this test's own
// closed forms on a folding arm whose links lie in one plane.
#include "ikd/robot/self_collision.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/planning/swept_clearance.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/robot_body.h"
#include "ikd/robot/robot_diagnosis.h"

namespace ikd::robot {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kRadius = 0.02;

// Three continuous joints about parallel z axes: links of 0.3, 0.1 and 0.3 m in the plane
// z = 0, each the capsule of radius 2 cm from its joint to the next (the last to the tool).
// q_k is link k's angle relative to link k-1, so q = (0, pi, 0) folds link 2 back onto link 0.
ChainSpec FoldingArm() {
  ChainSpec spec = *ChainFromDh({{0.3, 0.0, 0.0, 0.0, std::nullopt},
                                 {0.1, 0.0, 0.0, 0.0, std::nullopt},
                                 {0.3, 0.0, 0.0, 0.0, std::nullopt}},
                                DhConvention::kStandard);
  spec.link_radii.assign(3, kRadius);
  spec.check_self_collision = true;
  return spec;
}

Eigen::VectorXd Q(double a, double b, double c) { return Eigen::Vector3d(a, b, c); }

TEST(SelfCollisionTest, FoldingArmChecksItsOuterLinksOnly) {
  const SelfCollisionMatrix m = SelfCollisionMatrix::Compute(FoldingArm());
  EXPECT_EQ(m.num_links(), 3);
  EXPECT_EQ(m.rule(0, 1), PairRule::kAdjacent);
  EXPECT_EQ(m.rule(2, 1), PairRule::kAdjacent);
  // Folded (|q_1| near pi) links 0 and 2 meet, spread out they do not: sampled, both occur.
  EXPECT_EQ(m.rule(0, 2), PairRule::kChecked);
  EXPECT_EQ(m.rule(2, 0), PairRule::kChecked);
  ASSERT_EQ(m.checked().size(), 1u);
  EXPECT_EQ(m.checked()[0], std::make_pair(0, 2));
}

TEST(SelfCollisionTest, ClearancesMatchClosedForms) {
  const ChainSpec spec = FoldingArm();
  const SelfCollisionMatrix m = SelfCollisionMatrix::Compute(spec);
  // (0, pi, 0): link 1 folds back to x = 0.2 and link 2 runs from there to x = -0.1 along
  // link 0, axes overlapping: clearance -2 r.
  SelfContact folded = LeastSelfClearance(m, LinkCapsulesAt(spec, Q(0, kPi, 0)));
  EXPECT_EQ(folded.link_a, 0);
  EXPECT_EQ(folded.link_b, 2);
  EXPECT_NEAR(folded.clearance, -2 * kRadius, 1e-12);
  // (0, pi/2, pi/2): link 1 rises 0.1 m at x = 0.3, link 2 runs back parallel to link 0 at
  // y = 0.1 over x in [0, 0.3]: clearance 0.1 - 2 r.
  const SelfContact parallel = LeastSelfClearance(m, LinkCapsulesAt(spec, Q(0, kPi / 2, kPi / 2)));
  EXPECT_NEAR(parallel.clearance, 0.1 - 2 * kRadius, 1e-12);
  // (0.7, pi/2, -pi/2): link 2 leaves link 1's end parallel to link 0, beyond it: the nearest
  // points are link 0's end (0.3, 0) turned by 0.7 and link 2's start, 0.1 m apart.
  const SelfContact away = LeastSelfClearance(m, LinkCapsulesAt(spec, Q(0.7, kPi / 2, -kPi / 2)));
  EXPECT_NEAR(away.clearance, 0.1 - 2 * kRadius, 1e-12);
  // Every pair below a bound, closest first.
  const auto below = SelfContactsBelow(m, LinkCapsulesAt(spec, Q(0, kPi, 0)), 0.0);
  ASSERT_EQ(below.size(), 1u);
  EXPECT_NEAR(below[0].clearance, -2 * kRadius, 1e-12);
  EXPECT_TRUE(SelfContactsBelow(m, LinkCapsulesAt(spec, Q(0, kPi / 2, kPi / 2)), 0.05).empty());
}

TEST(SelfCollisionTest, DiagnosisNamesBothLinksWithoutAScene) {
  const Robot robot = *Robot::Create(FoldingArm());
  const ToolTarget target =
      *ToolTarget::Position(ToolPose(robot.spec(), Q(0, kPi, 0)).translation());
  const std::vector<ik::Reason> reasons =
      DiagnoseRobot(robot, nullptr, Q(0, kPi, 0), target, RobotIkOptions());
  bool named = false;
  for (const ik::Reason& r : reasons) {
    if (r.kind != ik::Reason::Kind::kCollision) continue;
    named = r.link == 0 && r.other_link == 2 && r.obstacle == -1;
    EXPECT_NEAR(r.distance, -2 * kRadius, 1e-12);
  }
  EXPECT_TRUE(named);
}

// Joint 1 turns from pi/2 to 3 pi/2 with joint 2 at pi/2: both ends hold link 2 0.1 m from
// link 0 (above it, then below it beyond its end), and half way link 2 starts on link 0.
TEST(SelfCollisionTest, MotionThroughTheFoldIsACollisionBetweenClearEnds) {
  const Robot robot = *Robot::Create(FoldingArm());
  const RobotBody body(robot);
  const Eigen::VectorXd from = Q(0, kPi / 2, kPi / 2), to = Q(0, 3 * kPi / 2, kPi / 2);
  std::vector<planning::Capsule> links;
  body.Links(from, &links);
  EXPECT_NEAR(body.SelfClearance(links), 0.1 - 2 * kRadius, 1e-12);
  body.Links(to, &links);
  EXPECT_NEAR(body.SelfClearance(links), 0.1 - 2 * kRadius, 1e-12);
  const planning::SweptClearance swept = planning::SweptClearanceOf(body, nullptr, from, to);
  EXPECT_LT(swept.min_clearance, 0.0);
  // Turning joint 0 alone moves the arm rigidly: the clearance stays 0.1 - 2 r all along.
  const planning::SweptClearance rigid =
      planning::SweptClearanceOf(body, nullptr, from, Q(2.0, kPi / 2, kPi / 2));
  EXPECT_GT(rigid.min_clearance, 0.0);
  EXPECT_LE(rigid.min_clearance, 0.1 - 2 * kRadius + 1e-12);
}

TEST(SelfCollisionTest, PairsTheSpecAllowsAreNotChecked) {
  ChainSpec spec = FoldingArm();
  spec.allowed_collisions = {{2, 0}};
  ASSERT_TRUE(spec.Validate().ok());
  const SelfCollisionMatrix m = SelfCollisionMatrix::Compute(spec);
  EXPECT_EQ(m.rule(0, 2), PairRule::kAllowedBySpec);
  EXPECT_TRUE(m.checked().empty());
  const Robot robot = *Robot::Create(spec);
  const ToolTarget target = *ToolTarget::Position(ToolPose(spec, Q(0, kPi, 0)).translation());
  for (const ik::Reason& r :
       DiagnoseRobot(robot, nullptr, Q(0, kPi, 0), target, RobotIkOptions())) {
    EXPECT_NE(r.kind, ik::Reason::Kind::kCollision);
  }
}

TEST(SelfCollisionTest, AllowedPairsNamingNoLinkAreRejected) {
  ChainSpec spec = FoldingArm();
  spec.allowed_collisions = {{0, 2}, {1, 3}};
  absl::Status status = spec.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("allowed_collisions[1]"), std::string::npos) << status;
  EXPECT_NE(status.message().find("link 3"), std::string::npos) << status;
  spec.allowed_collisions = {{1, 1}};
  status = spec.Validate();
  EXPECT_NE(status.message().find("allowed_collisions[0]"), std::string::npos) << status;
  EXPECT_FALSE(Robot::Create(spec).ok());
}

// The Panda's table has zero-length links (joints 1-2, 3-4 ... share origins): with radii the
// links on either side of one touch in every configuration, and are allowed as such.
TEST(SelfCollisionTest, LinksAroundAZeroLengthLinkAlwaysTouch) {
  ChainSpec spec = presets::Panda();
  spec.link_radii.assign(NumMovingJoints(spec), 0.05);
  spec.check_self_collision = true;
  const SelfCollisionMatrix m = SelfCollisionMatrix::Compute(spec);
  const auto segments = LinkSegments(spec, Eigen::VectorXd::Zero(NumMovingJoints(spec)));
  int zero_length = 0;
  for (int k = 1; k + 1 < m.num_links(); ++k) {
    if ((segments[k].second - segments[k].first).norm() > 1e-12) continue;
    ++zero_length;
    EXPECT_EQ(m.rule(k - 1, k + 1), PairRule::kAlwaysTouching)
        << "links " << k - 1 << ", " << k + 1;
  }
  EXPECT_GE(zero_length, 1);
  for (const auto& [a, b] : m.checked()) EXPECT_GE(b - a, 2);
}

// Lines never penetrate each other: an arm without radii (the presets) checks no pair, so
// nothing changes for it.
TEST(SelfCollisionTest, ArmsWithoutRadiiCheckNothing) {
  for (ChainSpec spec : {presets::Ur5(), presets::Panda(), presets::Iiwa14()}) {
    spec.check_self_collision = true;
    const SelfCollisionMatrix m = SelfCollisionMatrix::Compute(spec);
    EXPECT_TRUE(m.checked().empty()) << spec.name;
    for (int a = 0; a < m.num_links(); ++a) {
      for (int b = a + 2; b < m.num_links(); ++b) EXPECT_EQ(m.rule(a, b), PairRule::kNeverTouching);
    }
  }
}

// Links with shapes of their own (link_shapes, as a URDF's <collision> gives them) are checked
// by default: the folding arm's links as thin rods plus a 6 cm ball on link 2's far end. At
// q = (0, pi/2, pi/2) link 2 runs back over link 0 at y = 0.1 from x = 0.3 to 0: the ball's
// centre (0, 0.1, 0) lies 0.1 from link 0's axis, so the pair's clearance is 0.1 - 0.06 - 0.005,
// below the rods' own 0.1 - 2 x 0.005.
TEST(SelfCollisionTest, LinkShapesAreCheckedByDefaultEveryCapsuleOfThePair) {
  ChainSpec spec = FoldingArm();
  spec.link_radii.clear();
  spec.check_self_collision.reset();
  const double rod = 0.005, ball = 0.06;
  // In each link's frame (at its joint, x along the link): the rod from the joint to the next.
  spec.link_shapes = {{{Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0.3, 0, 0), rod}},
                      {{Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0.1, 0, 0), rod}},
                      {{Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0.3, 0, 0), rod},
                       {Eigen::Vector3d(0.3, 0, 0), Eigen::Vector3d(0.3, 0, 0), ball}}};
  ASSERT_TRUE(spec.Validate().ok()) << spec.Validate();
  const SelfCollisionMatrix m = SelfCollisionMatrix::Compute(spec);
  ASSERT_EQ(m.checked().size(), 1u);
  const SelfContact parallel = LeastSelfClearance(m, LinkCapsulesAt(spec, Q(0, kPi / 2, kPi / 2)));
  EXPECT_NEAR(parallel.clearance, 0.1 - ball - rod, 1e-12);
  // The ball's centre is the tool centre point (the test's own reading of the DH frames).
  EXPECT_LT(
      (ToolPose(spec, Q(0, kPi / 2, kPi / 2)).translation() - Eigen::Vector3d(0, 0.1, 0)).norm(),
      1e-12);
}

// Off unless the spec asks (chain.h: joint-origin capsules are not the links' shapes): the
// folding arm with radii then checks nothing, and a fold is no reason.
TEST(SelfCollisionTest, OffUnlessTheSpecAsks) {
  ChainSpec spec = FoldingArm();
  spec.check_self_collision = false;
  spec.allowed_collisions = {{0, 2}};
  const SelfCollisionMatrix m = SelfCollisionMatrix::Compute(spec);
  EXPECT_TRUE(m.checked().empty());
  EXPECT_EQ(m.rule(0, 2), PairRule::kOff);
  EXPECT_EQ(m.rule(0, 1), PairRule::kAdjacent);
  const Robot robot = *Robot::Create(spec);
  const ToolTarget target = *ToolTarget::Position(ToolPose(spec, Q(0, kPi, 0)).translation());
  for (const ik::Reason& r :
       DiagnoseRobot(robot, nullptr, Q(0, kPi, 0), target, RobotIkOptions())) {
    EXPECT_NE(r.kind, ik::Reason::Kind::kCollision);
  }
  EXPECT_FALSE(RobotBody(robot).ChecksSelf());
}

// The bounding balls hold every capsule of their link wherever the arm is (the test's own
// centres and distances), and the pairs they pass over change no answer: the least pair, the
// pairs below a bound and the per-link clearances equal every checked pair measured.
TEST(SelfCollisionTest, BoundingBallsPassOverNoPairThatCounts) {
  for (const ChainSpec& spec :
       {presets::PandaWithBody(), presets::Iiwa14WithBody(), presets::Ur5WithBody()}) {
    const SelfCollisionMatrix matrix = SelfCollisionMatrix::Compute(spec, 2000);
    ASSERT_FALSE(matrix.checked().empty()) << spec.name;
    std::mt19937_64 rng(3);
    for (int trial = 0; trial < 200; ++trial) {
      Eigen::VectorXd q(spec.joints.size());
      for (int j = 0; j < q.size(); ++j) {
        const JointLimits& limits = *spec.joints[j].limits;
        q[j] = std::uniform_real_distribution<double>(limits.lower, limits.upper)(rng);
      }
      const LinkCapsules links = LinkCapsulesAt(spec, q);
      for (int k = 0; k < links.num_links(); ++k) {
        Eigen::Vector3d centre = Eigen::Vector3d::Zero();
        for (int i = links.first[k]; i < links.first[k + 1]; ++i) {
          centre += links.capsules[i].a + links.capsules[i].b;
        }
        centre /= 2.0 * (links.first[k + 1] - links.first[k]);
        for (int i = links.first[k]; i < links.first[k + 1]; ++i) {
          const planning::Capsule& c = links.capsules[i];
          EXPECT_LE(std::max((c.a - centre).norm(), (c.b - centre).norm()) + c.radius,
                    matrix.bounding_radii()[k])
              << spec.name << " link " << k;
        }
      }
      SelfContact least{-1, -1, std::numeric_limits<double>::infinity()};
      std::vector<double> each(links.num_links(), std::numeric_limits<double>::infinity());
      int below = 0;
      for (const auto& [a, b] : matrix.checked()) {
        const double d = LinkPairClearance(links, a, b);
        if (d < least.clearance) least = {a, b, d};
        each[a] = std::min(each[a], d + 0.01);
        each[b] = std::min(each[b], d + 0.01);
        below += d < 0.05;
      }
      const SelfContact found = LeastSelfClearance(matrix, links);
      EXPECT_EQ(found.clearance, least.clearance) << spec.name << " trial " << trial;
      EXPECT_EQ(found.link_a, least.link_a);
      EXPECT_EQ(found.link_b, least.link_b);
      EXPECT_EQ(static_cast<int>(SelfContactsBelow(matrix, links, 0.05).size()), below);
      std::vector<double> lowered(links.num_links(), std::numeric_limits<double>::infinity());
      LowerBySelfClearances(matrix, links, lowered, 0.01);
      EXPECT_EQ(lowered, each) << spec.name << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace ikd::robot
