// The server's robot cache: one immutable robot per distinct ArmSpec (the same object for equal
// specs, a new one for a changed spec), least recently used specs dropped beyond the capacity,
// errors not kept and named at the request path.
#include "robot_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::server {
namespace {

using ::testing::HasSubstr;

v1::ArmSpec Preset(v1::RobotPreset preset) {
  v1::ArmSpec spec;
  spec.mutable_robot()->set_preset(preset);
  return spec;
}

TEST(RobotCacheTest, EqualSpecsShareOneRobot) {
  RobotCache cache(4);
  auto a = cache.Get(Preset(v1::ROBOT_PRESET_UR5), "arm.spec");
  auto b = cache.Get(Preset(v1::ROBOT_PRESET_UR5), "arm.spec");
  ASSERT_TRUE(a.ok() && b.ok()) << a.status();
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ((*a)->num_joints(), 6);
  EXPECT_EQ(cache.size(), 1u);
}

// A changed field (here the home configuration) is another robot.
TEST(RobotCacheTest, ChangedSpecBuildsAnotherRobot) {
  RobotCache cache(4);
  v1::ArmSpec spec = Preset(v1::ROBOT_PRESET_UR5);
  auto a = cache.Get(spec, "arm.spec");
  for (int k = 0; k < 6; ++k) spec.mutable_robot()->add_home_positions(0.1);
  auto b = cache.Get(spec, "arm.spec");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->get(), b->get());
  EXPECT_EQ(cache.size(), 2u);
}

TEST(RobotCacheTest, DropsTheLeastRecentlyUsedBeyondCapacity) {
  RobotCache cache(2);
  auto ur5 = cache.Get(Preset(v1::ROBOT_PRESET_UR5), "arm.spec");
  auto panda = cache.Get(Preset(v1::ROBOT_PRESET_PANDA), "arm.spec");
  ASSERT_TRUE(ur5.ok() && panda.ok());
  ASSERT_TRUE(cache.Get(Preset(v1::ROBOT_PRESET_UR5), "arm.spec").ok());  // UR5 now most recent
  ASSERT_TRUE(cache.Get(Preset(v1::ROBOT_PRESET_IIWA14), "arm.spec").ok());  // drops the Panda
  EXPECT_EQ(cache.size(), 2u);
  auto ur5_again = cache.Get(Preset(v1::ROBOT_PRESET_UR5), "arm.spec");
  auto panda_again = cache.Get(Preset(v1::ROBOT_PRESET_PANDA), "arm.spec");
  ASSERT_TRUE(ur5_again.ok() && panda_again.ok());
  EXPECT_EQ(ur5_again->get(), ur5->get());
  EXPECT_NE(panda_again->get(), panda->get());  // rebuilt
}

TEST(RobotCacheTest, ErrorsNameThePathAndAreNotKept) {
  RobotCache cache(2);
  v1::ArmSpec spec = Preset(v1::ROBOT_PRESET_UR5);
  spec.mutable_robot()->add_home_positions(0.1);  // one value for six joints
  auto robot = cache.Get(spec, "arm.spec");
  ASSERT_FALSE(robot.ok());
  EXPECT_THAT(std::string(robot.status().message()), HasSubstr("arm.spec.robot.home_positions"));
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace ikd::server
