// mock_arm's checks of the returned states (clients/mock_executor.h) on states the test builds
// with its own planar kinematics: a limb off its length, a state inside an obstacle, and a
// motion between two clear states that sweeps through one, each counted, and nothing counted
// for the same states away from the obstacle.
#include "mock_executor.h"

#include <google/protobuf/text_format.h>

#include <cmath>
#include <numbers>
#include <string>

#include <gtest/gtest.h>

namespace ikd::clients {
namespace {

constexpr double kLengths[] = {0.5, 0.4};

// Two planar limbs of radius 0.02 along the targets (t, hand) = (0, x axis), (0.01, y axis).
MockSetup TwoLimbs(const std::string& scene_text) {
  MockSetup setup;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "planar: true limbs { length: 0.5 radius: 0.02 } limbs { length: 0.4 radius: 0.02 }",
      &setup.arm));
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(scene_text, &setup.scene));
  setup.config.set_period(0.01);
  for (int i = 0; i < 2; ++i) {
    v1::TrackTarget& target = setup.targets.emplace_back();
    target.set_time(0.01 * i);
    target.mutable_position()->set_x(i == 0 ? 0.9 : 0.0);
    target.mutable_position()->set_y(i == 0 ? 0.0 : 0.9);
  }
  return setup;
}

// The state at joint angles (q1, q2) answering target `index`, sites by the test's own forward
// kinematics (limb 1's heading q1, limb 2's q1 + q2), limb 2 scaled by `stretch`.
v1::JointState StateAt(const MockSetup& setup, int index, double q1, double q2,
                       double stretch = 1.0) {
  v1::JointState state;
  state.set_time(setup.targets[index].time());
  *state.mutable_target() = setup.targets[index].position();
  state.add_positions(q1);
  state.add_positions(q2);
  double x = 0.0, y = 0.0, heading = 0.0;
  state.add_sites();
  for (int k = 0; k < 2; ++k) {
    heading += k == 0 ? q1 : q2;
    const double length = kLengths[k] * (k == 1 ? stretch : 1.0);
    x += length * std::cos(heading);
    y += length * std::sin(heading);
    v1::Vector3* site = state.add_sites();
    site->set_x(x);
    site->set_y(y);
  }
  state.set_status(v1::STEP_STATUS_REACHED);
  return state;
}

constexpr char kFarBall[] =
    "obstacles { id: 'ball' sphere { center { x: -1 y: -1 } radius: 0.1 } }";

TEST(MockExecutorTest, AStateWhoseLimbIsNotItsLengthIsCounted) {
  const MockSetup setup = TwoLimbs(kFarBall);
  auto executor = CheckingExecutorFor(setup);
  ASSERT_TRUE(executor.ok()) << executor.status();
  Report report;
  (*executor)->Execute(StateAt(setup, 0, 0.0, 0.0), nullptr, 0, &report);
  EXPECT_EQ(report.bad_limbs, 0u);
  EXPECT_EQ(report.out_of_order, 0u);
  EXPECT_EQ(report.missed_targets, 0u);
  (*executor)->Execute(StateAt(setup, 0, 0.0, 0.0, 1.001), nullptr, 0, &report);
  EXPECT_EQ(report.bad_limbs, 1u);
  EXPECT_NEAR(report.max_limb_error, 1e-3, 1e-9);
}

TEST(MockExecutorTest, AStateInsideAnObstacleIsACollisionByItsDepth) {
  // The ball's centre 5 cm from the hand on the x axis: the hand's capsule 7 cm into it.
  const MockSetup setup =
      TwoLimbs("obstacles { id: 'ball' sphere { center { x: 0.95 } radius: 0.1 } }");
  auto executor = CheckingExecutorFor(setup);
  ASSERT_TRUE(executor.ok()) << executor.status();
  Report report;
  (*executor)->Execute(StateAt(setup, 0, 0.0, 0.0), nullptr, 0, &report);
  EXPECT_EQ(report.collisions, 1u);
  ASSERT_TRUE(report.min_clearance.has_value());
  EXPECT_NEAR(*report.min_clearance, 0.05 - 0.1 - 0.02, 1e-12);
}

TEST(MockExecutorTest, AMotionThroughAnObstacleBetweenClearStatesIsCounted) {
  // From the x axis to the y axis the hand sweeps the quarter circle of radius 0.9; a ball on it
  // at 45 degrees is clear of both states (0.64 m from either axis), not of the motion. The same
  // ball beyond the arm's reach is clear of both.
  for (const double radius : {0.9, 1.5}) {
    const double c = radius * std::cos(std::numbers::pi / 4);
    const MockSetup setup =
        TwoLimbs("obstacles { id: 'ball' sphere { center { x: " + std::to_string(c) +
                 " y: " + std::to_string(c) + " } radius: 0.1 } }");
    auto executor = CheckingExecutorFor(setup);
    ASSERT_TRUE(executor.ok()) << executor.status();
    Report report;
    const v1::JointState from = StateAt(setup, 0, 0.0, 0.0);
    const v1::JointState to = StateAt(setup, 1, std::numbers::pi / 2, 0.0);
    (*executor)->Execute(from, nullptr, 0, &report);
    (*executor)->Execute(to, &from, 1, &report);
    EXPECT_EQ(report.collisions, 0u) << "radius " << radius;
    EXPECT_EQ(report.motion_collisions, radius < 1.0 ? 1u : 0u) << "radius " << radius;
    ASSERT_TRUE(report.min_motion_clearance.has_value());
    EXPECT_EQ(*report.min_motion_clearance < 0.0, radius < 1.0) << "radius " << radius;
  }
}

TEST(MockExecutorTest, AnInvalidArmIsRefusedByName) {
  MockSetup setup = TwoLimbs(kFarBall);
  setup.arm.mutable_limbs(1)->set_length(-0.4);
  auto executor = CheckingExecutorFor(setup);
  ASSERT_FALSE(executor.ok());
  EXPECT_NE(std::string(executor.status().message()).find("limbs[1]"), std::string::npos)
      << executor.status();
}

}  // namespace
}  // namespace ikd::clients
