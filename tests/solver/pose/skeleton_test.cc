// Skeleton model: validation of the spec, presets, label lookup, rest pose and angle geometry.
#include "ikd/pose/skeleton.h"

#include <cmath>
#include <limits>
#include <numbers>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/constraints/topology.h"

namespace ikd::pose {
namespace {

using ::testing::HasSubstr;

SkeletonSpec Chain3() {
  SkeletonSpec spec;
  spec.sites = {"a", "b", "c"};
  spec.bones = {{0, 1, 1.0}, {1, 2, 1.0}};
  return spec;
}

// Every malformed spec is refused with InvalidArgument naming the field and the rule.
TEST(SkeletonTest, RejectsBadSpecs) {
  struct Case {
    const char* name;
    void (*edit)(SkeletonSpec&);
    const char* expected;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  static double bad_length;
  const Case cases[] = {
      {"one site",
       [](SkeletonSpec& s) {
         s.sites = {"a"};
         s.bones = {};
       },
       "at least 2 sites"},
      {"no bones", [](SkeletonSpec& s) { s.bones.clear(); }, "at least 1 bone"},
      {"empty name", [](SkeletonSpec& s) { s.sites[1] = ""; }, "sites[1]: empty name"},
      {"repeated name", [](SkeletonSpec& s) { s.sites[2] = "a"; },
       "sites[2]: name \"a\" is repeated"},
      {"index out of range", [](SkeletonSpec& s) { s.bones[1].j = 3; },
       "bones[1].j: site 3 not in [0, 3)"},
      {"negative index", [](SkeletonSpec& s) { s.bones[0].i = -1; }, "bones[0].i"},
      {"self bone",
       [](SkeletonSpec& s) {
         s.bones[1] = {2, 2, 1.0};
       },
       "bones[1]: a bone joins two different"},
      {"zero length", [](SkeletonSpec& s) { s.bones[0].length = 0.0; },
       "bones[0].length: must be finite and > 0"},
      {"negative length", [](SkeletonSpec& s) { s.bones[1].length = -0.3; }, "bones[1].length"},
      {"nan length", [](SkeletonSpec& s) { s.bones[1].length = bad_length; }, "bones[1].length"},
      {"infinite length",
       [](SkeletonSpec& s) { s.bones[0].length = std::numeric_limits<double>::infinity(); },
       "bones[0].length"},
      {"repeated bone",
       [](SkeletonSpec& s) {
         s.bones.push_back({1, 0, 1.0});
       },
       "already joined"},
      {"cycle in a tree",
       [](SkeletonSpec& s) {
         s.bones.push_back({2, 0, 1.0});
       },
       "bones[2]: closes a cycle; a tree is required"},
      {"disconnected",
       [](SkeletonSpec& s) {
         s.sites.push_back("d");
         s.sites.push_back("e");
         s.bones.push_back({3, 4, 1.0});
       },
       "disconnected: site \"d\" is not connected to \"a\""},
      {"isolated site", [](SkeletonSpec& s) { s.sites.push_back("lonely"); },
       "\"lonely\" is not connected"},
      {"alias to unknown site",
       [](SkeletonSpec& s) {
         s.labels = {{"kp0", "z"}};
       },
       "labels[0].site: no site named \"z\""},
      {"alias repeats a name",
       [](SkeletonSpec& s) {
         s.labels = {{"b", "a"}};
       },
       "labels[0].label: \"b\" is already"},
      {"empty alias",
       [](SkeletonSpec& s) {
         s.labels = {{"", "a"}};
       },
       "labels[0].label: empty label"},
      {"limit not on bones",
       [](SkeletonSpec& s) {
         s.limits = {{0, 2, 1, 0.1, 1.0}};
       },
       "must each be joined to center"},
      {"limit a == b",
       [](SkeletonSpec& s) {
         s.limits = {{0, 1, 0, 0.1, 1.0}};
       },
       "a and b must differ"},
      {"limit min > max",
       [](SkeletonSpec& s) {
         s.limits = {{0, 1, 2, 2.0, 1.0}};
       },
       "0 <= min <= max <= pi"},
      {"limit beyond pi",
       [](SkeletonSpec& s) {
         s.limits = {{0, 1, 2, 0.0, 4.0}};
       },
       "limits[0]"},
      {"limit site out of range",
       [](SkeletonSpec& s) {
         s.limits = {{0, 1, 7, 0.0, 1.0}};
       },
       "site 7 not in"},
      {"rest shape", [](SkeletonSpec& s) { s.rest_positions = Eigen::Matrix3Xd::Zero(3, 2); },
       "rest_positions: need 3 x 3"},
  };
  bad_length = nan;
  for (const Case& c : cases) {
    SkeletonSpec spec = Chain3();
    c.edit(spec);
    auto skeleton = Skeleton::Create(spec);
    ASSERT_FALSE(skeleton.ok()) << c.name;
    EXPECT_EQ(skeleton.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(skeleton.status().message(), HasSubstr(c.expected)) << c.name;
  }
}

// A fixed angle (a and b also joined) is not a limit; NaN rest positions are refused.
TEST(SkeletonTest, RejectsLimitOnTriangleAndNonFiniteRest) {
  SkeletonSpec triangle = Chain3();
  triangle.bones.push_back({0, 2, 1.5});
  triangle.allow_cycles = true;
  triangle.limits = {{0, 1, 2, 0.1, 1.0}};
  EXPECT_THAT(Skeleton::Create(triangle).status().message(), HasSubstr("the angle is fixed"));
  SkeletonSpec rest = Chain3();
  rest.rest_positions = Eigen::Matrix3Xd::Zero(3, 3);
  rest.rest_positions(1, 2) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(Skeleton::Create(rest).status().message(), HasSubstr("rest_positions: non-finite"));
}

// A graph with a cycle is accepted when allowed, and its constraint topology is a graph.
TEST(SkeletonTest, AcceptsCyclesWhenAllowed) {
  SkeletonSpec spec = Chain3();
  spec.sites.push_back("d");
  spec.bones.push_back({2, 0, 1.0});
  spec.bones.push_back({2, 3, 0.5});
  spec.allow_cycles = true;
  auto skeleton = Skeleton::Create(spec);
  ASSERT_TRUE(skeleton.ok()) << skeleton.status();
  EXPECT_FALSE(skeleton->is_tree());
  EXPECT_EQ(constraints::AnalyzeTopology(4, skeleton->BoneConstraints()).kind,
            constraints::TopologyKind::kGraph);
}

// Human17: 17 named sites, 16 bones forming one tree, adult limb lengths (0.05 .. 0.5 m), the
// rest pose has every bone at its exact length (1e-12) and stands about 1.7 m tall.
TEST(SkeletonTest, Human17Preset) {
  const Skeleton human = Skeleton::Human17();
  EXPECT_EQ(human.num_sites(), 17);
  EXPECT_EQ(human.num_bones(), 16);
  EXPECT_TRUE(human.is_tree());
  EXPECT_EQ(constraints::AnalyzeTopology(17, human.BoneConstraints()).kind,
            constraints::TopologyKind::kTree);
  for (const Bone& b : human.bones()) {
    EXPECT_GT(b.length, 0.05);
    EXPECT_LT(b.length, 0.5);
    EXPECT_NEAR((human.rest_pose().col(b.i) - human.rest_pose().col(b.j)).norm(), b.length, 1e-12);
  }
  const double height = human.rest_pose().row(2).maxCoeff() - human.rest_pose().row(2).minCoeff();
  EXPECT_GT(height, 1.45);
  EXPECT_LT(height, 1.8);
  EXPECT_EQ(human.FindLabel("left_wrist"), 13);
  EXPECT_EQ(human.FindSite("pelvis"), 0);
  EXPECT_FALSE(human.FindLabel("tail").has_value());
  // The rest pose respects the elbow and knee limits.
  for (const AngleLimit& limit : human.limits()) {
    const double angle = Skeleton::AngleAt(limit, human.rest_pose());
    EXPECT_GE(angle, limit.min);
    EXPECT_LE(angle, limit.max);
  }
}

// Arm preset: a chain base - joint_k - hand, straight along +x; bad sizes are refused.
TEST(SkeletonTest, ArmPreset) {
  auto arm = Skeleton::Arm(3, 0.3);
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(arm->num_sites(), 4);
  EXPECT_EQ(arm->site_names().front(), "base");
  EXPECT_EQ(arm->site_names()[1], "joint_1");
  EXPECT_EQ(arm->site_names().back(), "hand");
  EXPECT_NEAR(arm->rest_pose()(0, 3), 0.9, 1e-12);
  EXPECT_EQ(constraints::AnalyzeTopology(4, arm->BoneConstraints()).kind,
            constraints::TopologyKind::kOpenChain);
  EXPECT_THAT(Skeleton::Arm(0, 0.3).status().message(), HasSubstr("num_limbs"));
  EXPECT_THAT(Skeleton::Arm(2, -1.0).status().message(), HasSubstr("bones[0].length"));
  EXPECT_THAT(Skeleton::Arm(2, std::numeric_limits<double>::quiet_NaN()).status().message(),
              HasSubstr("length"));
}

// Aliases map extra labels to sites; a generated rest pose has exact bone lengths (1e-12).
TEST(SkeletonTest, AliasesAndGeneratedRestPose) {
  SkeletonSpec spec = Chain3();
  spec.labels = {{"kp_7", "c"}};
  spec.bones[1].length = 0.25;
  auto skeleton = Skeleton::Create(spec);
  ASSERT_TRUE(skeleton.ok()) << skeleton.status();
  EXPECT_EQ(skeleton->FindLabel("kp_7"), 2);
  EXPECT_EQ(skeleton->FindLabel("c"), 2);
  EXPECT_FALSE(skeleton->FindSite("kp_7").has_value());  // an alias is not a site name
  const Eigen::Matrix3Xd& rest = skeleton->rest_pose();
  EXPECT_NEAR((rest.col(0) - rest.col(1)).norm(), 1.0, 1e-12);
  EXPECT_NEAR((rest.col(1) - rest.col(2)).norm(), 0.25, 1e-12);
}

// WithBoneLengths rescales the bones and keeps the rest directions; a wrong count is refused.
TEST(SkeletonTest, WithBoneLengths) {
  const Skeleton human = Skeleton::Human17();
  std::vector<double> lengths;
  for (const Bone& b : human.bones()) lengths.push_back(1.1 * b.length);
  auto scaled = human.WithBoneLengths(lengths);
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  for (int k = 0; k < scaled->num_bones(); ++k) {
    const Bone& b = scaled->bones()[k];
    EXPECT_DOUBLE_EQ(b.length, lengths[k]);
    const Eigen::Vector3d d_new = scaled->rest_pose().col(b.j) - scaled->rest_pose().col(b.i);
    const Eigen::Vector3d d_old = human.rest_pose().col(b.j) - human.rest_pose().col(b.i);
    EXPECT_NEAR(d_new.norm(), lengths[k], 1e-12);
    EXPECT_NEAR(d_new.normalized().dot(d_old.normalized()), 1.0, 1e-12);
  }
  EXPECT_THAT(human.WithBoneLengths({1.0}).status().message(), HasSubstr("need one per bone (16)"));
  lengths[3] = -1.0;
  EXPECT_THAT(human.WithBoneLengths(lengths).status().message(), HasSubstr("bones[3].length"));
}

// Law of cosines: a right angle between bones 0.3 and 0.4 spans 0.5; AngleAt reads it back.
TEST(SkeletonTest, AngleGeometry) {
  SkeletonSpec spec = Chain3();
  spec.bones = {{0, 1, 0.3}, {1, 2, 0.4}};
  spec.limits = {{0, 1, 2, 0.5, 2.5}};
  auto skeleton = Skeleton::Create(spec);
  ASSERT_TRUE(skeleton.ok()) << skeleton.status();
  const AngleLimit& limit = skeleton->limits()[0];
  EXPECT_NEAR(skeleton->SpanAtAngle(limit, std::numbers::pi / 2), 0.5, 1e-15);
  EXPECT_NEAR(skeleton->SpanAtAngle(limit, std::numbers::pi), 0.7, 1e-15);
  Eigen::Matrix3Xd sites(3, 3);
  sites << 0.3, 0, 0, 0, 0, 0.4, 0, 0, 0;
  EXPECT_NEAR(Skeleton::AngleAt(limit, sites), std::numbers::pi / 2, 1e-15);
}

}  // namespace
}  // namespace ikd::pose
