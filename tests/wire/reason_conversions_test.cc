// ReasonsToProto (reason_conversions.h): each solver Reason on the wire with its obstacle's id,
// its joint's name and a one-line description, written out here in full for every kind.
#include "reason_conversions.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::server {
namespace {

using Kind = ik::Reason::Kind;
using Reasons = google::protobuf::RepeatedPtrField<v1::Reason>;

const std::vector<std::string> kJointNames = {"joint_0", "joint_1", "joint_2"};

// Obstacles 0 "floor" and 1 "post".
planning::Scene TwoObstacles() {
  absl::StatusOr<planning::Scene> scene = planning::Scene::Create(
      {{"floor", planning::HalfSpace{}}, {"post", planning::Capsule{{1, 0, 0}, {1, 0, 1}, 0.05}}});
  EXPECT_TRUE(scene.ok()) << scene.status();
  return *std::move(scene);
}

ik::Reason Reason(Kind kind) {
  ik::Reason reason;
  reason.kind = kind;
  return reason;
}

// One reason converted (limbs of a chain arm unless `link_word` says otherwise).
v1::Reason Convert(const ik::Reason& reason, const planning::Scene* scene,
                   const char* link_word = "limb") {
  Reasons out;
  ReasonsToProto({reason}, scene, kJointNames, link_word, &out);
  EXPECT_EQ(out.size(), 1);
  return out.empty() ? v1::Reason() : out[0];
}

// Every number and index is copied; the obstacle index becomes the obstacle's id.
TEST(ReasonsToProtoTest, CollisionWithAnObstacleNamesItsId) {
  const planning::Scene scene = TwoObstacles();
  ik::Reason reason = Reason(Kind::kCollision);
  reason.link = 2;
  reason.obstacle = 1;
  reason.distance = -0.004;
  reason.direction = Eigen::Vector3d(0, 0.6, 0.8);
  const v1::Reason r = Convert(reason, &scene);
  EXPECT_EQ(r.kind(), v1::Reason::KIND_COLLISION);
  EXPECT_EQ(r.link(), 2);
  EXPECT_EQ(r.other_link(), -1);
  EXPECT_EQ(r.obstacle_id(), "post");
  EXPECT_EQ(r.joint(), -1);
  EXPECT_EQ(r.joint_name(), "");
  EXPECT_EQ(r.distance(), -0.004);
  EXPECT_EQ(r.direction().y(), 0.6);
  EXPECT_EQ(r.direction().z(), 0.8);
  EXPECT_EQ(r.description(), "limb 2 penetrates obstacle \"post\" by 0.004 m");
}

// Self-collision: the partner is the other link, in the arm's own word for it.
TEST(ReasonsToProtoTest, SelfCollisionNamesTheOtherLink) {
  ik::Reason reason = Reason(Kind::kCollision);
  reason.link = 0;
  reason.other_link = 3;
  reason.distance = -0.01;
  const v1::Reason r = Convert(reason, nullptr, "link");
  EXPECT_EQ(r.other_link(), 3);
  EXPECT_EQ(r.obstacle_id(), "");
  EXPECT_EQ(r.description(), "link 0 penetrates link 3 by 0.01 m");
}

TEST(ReasonsToProtoTest, NearCollisionGivesTheDistanceAndTheMargin) {
  const planning::Scene scene = TwoObstacles();
  ik::Reason reason = Reason(Kind::kNearCollision);
  reason.link = 1;
  reason.obstacle = 0;
  reason.distance = 0.005;
  reason.bound = 0.01;
  const v1::Reason r = Convert(reason, &scene);
  EXPECT_EQ(r.kind(), v1::Reason::KIND_NEAR_COLLISION);
  EXPECT_EQ(r.obstacle_id(), "floor");
  EXPECT_EQ(r.bound(), 0.01);
  EXPECT_EQ(r.description(),
            "limb 1 is 0.005 m from obstacle \"floor\", inside the 0.01 m safety margin");
}

// The joint index becomes the joint's name; no scene is needed when no obstacle is named.
TEST(ReasonsToProtoTest, JointLimitNamesTheJoint) {
  ik::Reason reason = Reason(Kind::kJointLimit);
  reason.joint = 1;
  reason.value = 1.5;
  reason.bound = 1.4;
  const v1::Reason r = Convert(reason, nullptr);
  EXPECT_EQ(r.kind(), v1::Reason::KIND_JOINT_LIMIT);
  EXPECT_EQ(r.joint(), 1);
  EXPECT_EQ(r.joint_name(), "joint_1");
  EXPECT_EQ(r.value(), 1.5);
  EXPECT_EQ(r.description(), "joint joint_1 (positions[1]) at 1.5 rad, its limit 1.4");
}

TEST(ReasonsToProtoTest, OutOfReachGivesTheDistances) {
  ik::Reason reason = Reason(Kind::kOutOfReach);
  reason.value = 2.0;
  reason.distance = 0.5;
  reason.bound = 1.5;
  const v1::Reason r = Convert(reason, nullptr);
  EXPECT_EQ(r.kind(), v1::Reason::KIND_OUT_OF_REACH);
  EXPECT_EQ(r.description(), "the target is 2 m from the base, 0.5 m beyond the reach 1.5 m");
}

TEST(ReasonsToProtoTest, AnIndustrialPoseOutOfReachGivesTheClosedFormsMiss) {
  ik::Reason reason = Reason(Kind::kOutOfReach);
  reason.distance = 0.25;
  reason.value = 0.5;
  reason.bound = 1e-5;
  EXPECT_EQ(Convert(reason, nullptr, "link").description(),
            "no configuration reaches the tool pose: the closed form's nearest branch misses it by "
            "0.25 m and 0.5 rad");
  reason.distance = reason.value = 0.0;
  EXPECT_EQ(Convert(reason, nullptr, "link").description(),
            "no configuration within the joint limits reaches the tool pose: every closed-form "
            "branch on it passes a joint limit");
}

TEST(ReasonsToProtoTest, SingularGivesTheValueAndTheDirection) {
  ik::Reason reason = Reason(Kind::kSingular);
  reason.value = 1e-4;
  reason.bound = 1e-3;
  reason.direction = Eigen::Vector3d(0, 0, 1);
  const v1::Reason r = Convert(reason, nullptr, "link");
  EXPECT_EQ(r.kind(), v1::Reason::KIND_SINGULAR);
  EXPECT_EQ(r.description(),
            "singular: the tool Jacobian's least singular value 0.0001 is below 0.001; the tool "
            "can barely move along (0.000, 0.000, 1.000)");
}

TEST(ReasonsToProtoTest, ResidualsGiveTheErrorAndTheTolerance) {
  ik::Reason hand = Reason(Kind::kResidual);
  hand.value = 0.002;
  hand.bound = 1e-6;
  const v1::Reason r = Convert(hand, nullptr);
  EXPECT_EQ(r.kind(), v1::Reason::KIND_RESIDUAL);
  EXPECT_EQ(r.description(), "the hand is 0.002 m from its target (tolerance 1e-06 m)");

  ik::Reason turned = Reason(Kind::kRotationResidual);
  turned.value = 0.1;
  turned.bound = 0.001;
  const v1::Reason t = Convert(turned, nullptr, "link");
  EXPECT_EQ(t.kind(), v1::Reason::KIND_ROTATION_RESIDUAL);
  EXPECT_EQ(t.description(),
            "the tool is turned 0.1 rad from its target orientation (tolerance 0.001 rad)");
}

// Reasons are appended in order after what `out` already holds.
TEST(ReasonsToProtoTest, AppendsInOrder) {
  Reasons out;
  out.Add()->set_description("earlier");
  ReasonsToProto({Reason(Kind::kOutOfReach), Reason(Kind::kResidual)}, nullptr, kJointNames, "limb",
                 &out);
  ASSERT_EQ(out.size(), 3);
  EXPECT_EQ(out[0].description(), "earlier");
  EXPECT_EQ(out[1].kind(), v1::Reason::KIND_OUT_OF_REACH);
  EXPECT_EQ(out[2].kind(), v1::Reason::KIND_RESIDUAL);
}

}  // namespace
}  // namespace ikd::server
