// URDF import: a hand-computable three-joint arm, the ROS-Industrial UR5 description against
// UR's DH table, and the errors of malformed or unsupported descriptions.
#include "ikd/urdf/urdf.h"

#include <cmath>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/robot/presets.h"
#include "ikd/robot/robot.h"

namespace ikd::robot {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = 3.14159265358979323846;

std::string Link(const std::string& name) { return "<link name=\"" + name + "\"/>"; }
std::string Joint(const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child, const std::string& xyz, const std::string& rpy,
                  const std::string& axis, const std::string& limit = "") {
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent +
         "\"/><child link=\"" + child + "\"/><origin xyz=\"" + xyz + "\" rpy=\"" + rpy +
         "\"/><axis xyz=\"" + axis + "\"/>" + limit + "</joint>";
}
const std::string kLimit = "<limit lower=\"-2\" upper=\"2\" effort=\"10\" velocity=\"1.5\"/>";

// Up 0.5 m, a z joint; up 0.3, a y joint; up 0.4, a y joint; a 0.2 m tool along z.
std::string ToyArm(const std::string& second_type = "revolute") {
  return "<robot name=\"toy\">" + Link("base") + Link("l1") + Link("l2") + Link("l3") +
         Link("tool") + Joint("j1", "revolute", "base", "l1", "0 0 0.5", "0 0 0", "0 0 1", kLimit) +
         Joint("j2", second_type, "l1", "l2", "0 0 0.3", "0 0 0", "0 1 0", kLimit) +
         Joint("j3", "continuous", "l2", "l3", "0 0 0.4", "0 0 0", "0 2 0") +
         Joint("t", "fixed", "l3", "tool", "0 0 0.2", "0 0 0", "1 0 0") + "</robot>";
}

TEST(UrdfTest, ToyArmForwardKinematicsByHand) {
  auto chain = ChainFromUrdf(ToyArm(), "base", "tool");
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_EQ(NumMovingJoints(*chain), 3);
  ASSERT_TRUE(chain->joints[0].limits.has_value());
  EXPECT_DOUBLE_EQ(chain->joints[0].limits->max_velocity, 1.5);
  EXPECT_FALSE(chain->joints[2].limits.has_value());  // continuous
  // q2 = pi/2 about +y at 0.8 m tips the 0.4 + 0.2 m above it towards +x: (0.6, 0, 0.8).
  const Eigen::Vector3d p = ToolPose(*chain, Eigen::Vector3d(0.0, kPi / 2, 0.0)).translation();
  EXPECT_LT((p - Eigen::Vector3d(0.6, 0.0, 0.8)).norm(), 1e-12);
  // Adding q1 = pi/2 about z turns that to +y; q3 = -pi/2 then points the tool back up.
  const Eigen::Vector3d r =
      ToolPose(*chain, Eigen::Vector3d(kPi / 2, kPi / 2, -kPi / 2)).translation();
  EXPECT_LT((r - Eigen::Vector3d(0.0, 0.4, 1.0)).norm(), 1e-12);
  auto robot = Robot::Create(*chain);
  ASSERT_TRUE(robot.ok()) << robot.status();
  EXPECT_EQ(robot->num_joints(), 3);
}

// ROS-Industrial's ur5 description (ur_description) against UR's DH table: the same arm with
// its base frame turned by pi about z, so p_urdf(q) = Rz(pi) p_dh(q) for every q.
TEST(UrdfTest, RosUr5MatchesTheDhPreset) {
  const std::string pitch = "0 1.570796326794897 0";
  const std::string xml = "<robot name=\"ur5\">" + Link("base_link") + Link("shoulder_link") +
                          Link("upper_arm_link") + Link("forearm_link") + Link("wrist_1_link") +
                          Link("wrist_2_link") + Link("wrist_3_link") + Link("ee_link") +
                          Joint("shoulder_pan_joint", "revolute", "base_link", "shoulder_link",
                                "0 0 0.089159", "0 0 0", "0 0 1", kLimit) +
                          Joint("shoulder_lift_joint", "revolute", "shoulder_link",
                                "upper_arm_link", "0 0.13585 0", pitch, "0 1 0", kLimit) +
                          Joint("elbow_joint", "revolute", "upper_arm_link", "forearm_link",
                                "0 -0.1197 0.425", "0 0 0", "0 1 0", kLimit) +
                          Joint("wrist_1_joint", "revolute", "forearm_link", "wrist_1_link",
                                "0 0 0.39225", pitch, "0 1 0", kLimit) +
                          Joint("wrist_2_joint", "revolute", "wrist_1_link", "wrist_2_link",
                                "0 0.093 0", "0 0 0", "0 0 1", kLimit) +
                          Joint("wrist_3_joint", "revolute", "wrist_2_link", "wrist_3_link",
                                "0 0 0.09465", "0 0 0", "0 1 0", kLimit) +
                          Joint("ee_fixed_joint", "fixed", "wrist_3_link", "ee_link", "0 0.0823 0",
                                "0 0 1.570796326794897", "1 0 0") +
                          "</robot>";
  auto chain = ChainFromUrdf(xml, "base_link", "ee_link");
  ASSERT_TRUE(chain.ok()) << chain.status();
  const ChainSpec dh = presets::Ur5();
  const Eigen::Matrix3d Rz = Eigen::AngleAxisd(kPi, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int trial = 0; trial < 50; ++trial) {
    Eigen::VectorXd q(6);
    for (int k = 0; k < 6; ++k) q[k] = u(rng);
    EXPECT_LT((ToolPose(*chain, q).translation() - Rz * ToolPose(dh, q).translation()).norm(),
              1e-9);
  }
}

TEST(UrdfTest, ErrorsNameTheProblem) {
  EXPECT_THAT(ChainFromUrdf("<robot name=\"x\"><link", "a", "b").status().message(),
              HasSubstr("urdf: not a valid robot description"));
  EXPECT_THAT(ChainFromUrdf(ToyArm(), "base", "hand").status().message(),
              HasSubstr("tip_link 'hand' is not a link of robot 'toy'"));
  EXPECT_THAT(ChainFromUrdf(ToyArm(), "bass", "tool").status().message(),
              HasSubstr("base_link 'bass'"));
  EXPECT_THAT(ChainFromUrdf(ToyArm(), "l2", "l1").status().message(),
              HasSubstr("tip_link 'l1' is not below base_link 'l2'"));
  EXPECT_THAT(ChainFromUrdf(ToyArm("floating"), "base", "tool").status().message(),
              HasSubstr("joint 'j2': unsupported joint type"));
  // Fuzzer finding: a truncated UTF-8 sequence at the end made TinyXML read past the buffer.
  EXPECT_THAT(ChainFromUrdf(ToyArm() + "\xc2", "base", "tool").status().message(),
              HasSubstr("urdf: not valid UTF-8 text (a NUL or malformed byte sequence at byte "
                        "offset " +
                        std::to_string(ToyArm().size()) + ")"));
  EXPECT_THAT(ChainFromUrdf(std::string("<robot\0", 7), "base", "tool").status().message(),
              HasSubstr("byte offset 6"));
  EXPECT_TRUE(ChainFromUrdf(ToyArm() + "<!-- \xc3\xa9\xe2\x82\xac\xf0\x9f\xa4\x96 -->", "base",
                            "tool")
                  .ok());  // well-formed 2-, 3- and 4-byte characters pass
  auto prismatic = ChainFromUrdf(ToyArm("prismatic"), "base", "tool");
  ASSERT_TRUE(prismatic.ok());
  EXPECT_THAT(Robot::Create(*prismatic).status().message(),
              HasSubstr("prismatic joints are not supported"));
}

// Fuzzing findings (urdf_import_fuzzer): joints that close a loop (l1 -> tool -> l1) made the
// walk from the tip to the base run until memory ran out, and the loop's shared_ptr cycle in
// urdfdom's links leaked; now the loop is named (the fuzz build's LeakSanitizer checks the rest).
TEST(UrdfTest, JointLoopIsRefused) {
  const std::string loop =
      "<robot name=\"loop\">" + Link("base") + Link("l1") + Link("tool") +
      Joint("j1", "revolute", "base", "l1", "0 0 0.5", "0 0 0", "0 0 1", kLimit) +
      Joint("t", "fixed", "l1", "tool", "0 0 0.2", "0 0 0", "1 0 0") +
      // urdfdom links joints in name order: "z_back" makes tool l1's parent.
      Joint("z_back", "fixed", "tool", "l1", "0 0 0.1", "0 0 0", "1 0 0") + "</robot>";
  auto chain = ChainFromUrdf(loop, "base", "tool");
  EXPECT_EQ(chain.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(chain.status().message(), HasSubstr("form a loop through link"));
}

}  // namespace
}  // namespace ikd::robot
