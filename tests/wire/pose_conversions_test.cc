// SkeletonFromProto (pose_conversions.h): the wire skeleton in the pose solver's terms, the
// ModelLimits skeleton bounds, and the solver's checks named at the request path.
#include "pose_conversions.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/eigen_matchers.h"
#include "testing/field_violation.h"
#include "testing/proto_vector.h"

namespace ikd::server {
namespace {

using ::ikd::testing::Vec;
using ::ikd::testing::CompareMatrices;
using ::ikd::testing::IsFieldViolation;
using ::testing::ElementsAre;

void AddBone(v1::SkeletonSpec& spec, int i, int j, double length) {
  v1::SkeletonBone* bone = spec.add_bones();
  bone->set_i(i);
  bone->set_j(j);
  bone->set_length(length);
}

void AddLimit(v1::SkeletonSpec& spec, int a, int center, int b, double min, double max) {
  v1::SkeletonAngleLimit* limit = spec.add_limits();
  limit->set_a(a);
  limit->set_center(center);
  limit->set_b(b);
  limit->set_min(min);
  limit->set_max(max);
}

// hip - knee (0.4 m) - ankle (0.35 m), the knee bounded to [0.1, 3] rad.
v1::SkeletonSpec Leg() {
  v1::SkeletonSpec spec;
  for (const char* site : {"hip", "knee", "ankle"}) spec.add_sites(site);
  AddBone(spec, 0, 1, 0.4);
  AddBone(spec, 1, 2, 0.35);
  AddLimit(spec, 0, 1, 2, 0.1, 3.0);
  return spec;
}

// Four sites joined in a ring (a graph, not a tree).
v1::SkeletonSpec Square() {
  v1::SkeletonSpec spec;
  for (const char* site : {"a", "b", "c", "d"}) spec.add_sites(site);
  AddBone(spec, 0, 1, 1.0);
  AddBone(spec, 1, 2, 1.0);
  AddBone(spec, 2, 3, 1.0);
  AddBone(spec, 3, 0, 1.0);
  return spec;
}

absl::Status Convert(const v1::SkeletonSpec& spec, const ModelLimits& limits = ModelLimits()) {
  return SkeletonFromProto(spec, "skeleton.spec", limits).status();
}

TEST(SkeletonFromProtoTest, SitesBonesLabelsAndLimitsArrive) {
  v1::SkeletonSpec spec = Leg();
  v1::SkeletonLabel* alias = spec.add_labels();
  alias->set_label("left_knee");
  alias->set_site("knee");
  const absl::StatusOr<pose::Skeleton> skeleton =
      SkeletonFromProto(spec, "skeleton.spec", ModelLimits());
  ASSERT_TRUE(skeleton.ok()) << skeleton.status();
  EXPECT_THAT(skeleton->site_names(), ElementsAre("hip", "knee", "ankle"));
  ASSERT_EQ(skeleton->num_bones(), 2);
  EXPECT_EQ(skeleton->bones()[1].i, 1);
  EXPECT_EQ(skeleton->bones()[1].j, 2);
  EXPECT_EQ(skeleton->bones()[1].length, 0.35);
  EXPECT_EQ(skeleton->FindLabel("left_knee"), 1);
  EXPECT_EQ(skeleton->FindLabel("ankle"), 2);
  ASSERT_EQ(skeleton->limits().size(), 1u);
  EXPECT_EQ(skeleton->limits()[0].center, 1);
  EXPECT_EQ(skeleton->limits()[0].min, 0.1);
  EXPECT_EQ(skeleton->limits()[0].max, 3.0);
  EXPECT_TRUE(skeleton->is_tree());
}

// Rest positions give the bone directions; the rest pose has the bone lengths along them:
// down 0.4 m to the knee, then 0.35 m along +x to the ankle.
TEST(SkeletonFromProtoTest, RestPositionsGiveTheRestPoseDirections) {
  v1::SkeletonSpec spec = Leg();
  *spec.add_rest_positions() = Vec(0, 0, 0);
  *spec.add_rest_positions() = Vec(0, 0, -1);
  *spec.add_rest_positions() = Vec(2, 0, -1);
  const absl::StatusOr<pose::Skeleton> skeleton =
      SkeletonFromProto(spec, "skeleton.spec", ModelLimits());
  ASSERT_TRUE(skeleton.ok()) << skeleton.status();
  Eigen::Matrix3Xd expected(3, 3);
  expected << 0, 0, 0.35,  //
      0, 0, 0,             //
      0, -0.4, -0.4;
  EXPECT_TRUE(CompareMatrices(skeleton->rest_pose(), expected, 1e-12));
}

// A graph passes only with allow_cycles; without it the closing bone is named.
TEST(SkeletonFromProtoTest, CyclesNeedAllowCycles) {
  v1::SkeletonSpec spec = Square();
  EXPECT_TRUE(IsFieldViolation(Convert(spec), "skeleton.spec.bones[3]", "closes a cycle"));
  spec.set_allow_cycles(true);
  const absl::StatusOr<pose::Skeleton> graph =
      SkeletonFromProto(spec, "skeleton.spec", ModelLimits());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_FALSE(graph->is_tree());
}

// ModelLimits::max_skeleton_sites: at the bound accepted, one beyond refused.
TEST(SkeletonFromProtoTest, MaxSkeletonSitesIsTheBound) {
  ModelLimits limits;
  limits.max_skeleton_sites = 3;
  v1::SkeletonSpec spec = Leg();
  EXPECT_TRUE(Convert(spec, limits).ok());
  spec.add_sites("toe");
  AddBone(spec, 2, 3, 0.1);
  EXPECT_TRUE(
      IsFieldViolation(Convert(spec, limits), "skeleton.spec.sites", "at most 3 sites, got 4"));
}

// ModelLimits::max_skeleton_bones bounds the bones and, separately, the angle limits.
TEST(SkeletonFromProtoTest, MaxSkeletonBonesBoundsBonesAndLimits) {
  ModelLimits limits;
  limits.max_skeleton_bones = 3;
  v1::SkeletonSpec square = Square();
  square.set_allow_cycles(true);
  EXPECT_TRUE(
      IsFieldViolation(Convert(square, limits), "skeleton.spec.bones", "at most 3 bones, got 4"));
  square.mutable_bones()->RemoveLast();  // the chain a-b-c-d: 3 bones
  EXPECT_TRUE(Convert(square, limits).ok());

  // A star of 4 bones around site 0 with 5 angle limits between its leaves.
  limits.max_skeleton_bones = 4;
  v1::SkeletonSpec star;
  for (const char* site : {"center", "a", "b", "c", "d"}) star.add_sites(site);
  for (int leaf = 1; leaf <= 4; ++leaf) AddBone(star, 0, leaf, 1.0);
  for (const auto& [a, b] :
       {std::pair{1, 2}, std::pair{1, 3}, std::pair{1, 4}, std::pair{2, 3}, std::pair{2, 4}}) {
    AddLimit(star, a, 0, b, 0.0, 3.0);
  }
  EXPECT_TRUE(
      IsFieldViolation(Convert(star, limits), "skeleton.spec.limits", "at most 4 limits, got 5"));
  star.mutable_limits()->RemoveLast();
  EXPECT_TRUE(Convert(star, limits).ok());
}

// The solver's field names (skeleton.h) nest below the request path.
TEST(SkeletonFromProtoTest, SolverErrorsNameTheFieldBelowThePath) {
  struct Case {
    std::string field;
    std::string bound;
    void (*set)(v1::SkeletonSpec&);
  };
  const Case cases[] = {
      {"sites", "at least 2 sites",
       [](v1::SkeletonSpec& s) {
         s.clear_bones();
         s.clear_limits();
         s.mutable_sites()->DeleteSubrange(1, 2);
       }},
      {"sites[1]", "empty name", [](v1::SkeletonSpec& s) { s.set_sites(1, ""); }},
      {"bones[1].length", "must be finite and > 0, got -1",
       [](v1::SkeletonSpec& s) { s.mutable_bones(1)->set_length(-1); }},
      {"bones[0].j", "site 3 not in [0, 3)",
       [](v1::SkeletonSpec& s) { s.mutable_bones(0)->set_j(3); }},
      {"bones", "disconnected",
       [](v1::SkeletonSpec& s) {
         s.clear_limits();
         s.mutable_bones()->RemoveLast();
       }},
      {"labels[0].site", "no site named \"foot\"",
       [](v1::SkeletonSpec& s) {
         v1::SkeletonLabel* label = s.add_labels();
         label->set_label("toe");
         label->set_site("foot");
       }},
      {"limits[0]", "need 0 <= min <= max <= pi",
       [](v1::SkeletonSpec& s) { s.mutable_limits(0)->set_min(3.1); }},
      {"rest_positions", "need 3 x 3, got 3 x 2",
       [](v1::SkeletonSpec& s) {
         *s.add_rest_positions() = Vec(0, 0, 0);
         *s.add_rest_positions() = Vec(0, 0, 1);
       }},
  };
  for (const Case& c : cases) {
    v1::SkeletonSpec spec = Leg();
    c.set(spec);
    EXPECT_TRUE(IsFieldViolation(SkeletonFromProto(spec, "config.spec", ModelLimits()).status(),
                                 "config.spec." + c.field, c.bound))
        << c.field;
  }
}

}  // namespace
}  // namespace ikd::server
