// URDF import: a hand-computable three-joint arm, the ROS-Industrial UR5 description against
// UR's DH table, the errors of malformed or unsupported descriptions, and the links'
// <collision> geometry (primitives, STL meshes, what is left out and said so).
#include "ikd/urdf/urdf.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/robot/link_geometry.h"
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

std::string LinkWith(const std::string& name, const std::string& collisions) {
  return "<link name=\"" + name + "\">" + collisions + "</link>";
}
std::string Collision(const std::string& geometry, const std::string& xyz = "0 0 0",
                      const std::string& rpy = "0 0 0") {
  return "<collision><origin xyz=\"" + xyz + "\" rpy=\"" + rpy + "\"/><geometry>" + geometry +
         "</geometry></collision>";
}

// The toy arm with geometry: a box on the base, a cylinder along l1 (0.3 m up to j2), a box
// on l2, a sphere on l3 and one on the tool link that a fixed joint puts 0.2 m above l3.
std::string ToyArmWithGeometry(
    const std::string& l1_geometry = "<cylinder radius=\"0.05\" length=\"0.3\"/>",
    const std::string& extra_l2 = "") {
  return "<robot name=\"toy\">" +
         LinkWith("base", Collision("<box size=\"0.2 0.2 0.5\"/>", "0 0 0.25")) +
         LinkWith("l1", Collision(l1_geometry, "0 0 0.15")) +
         LinkWith("l2", Collision("<box size=\"0.06 0.06 0.4\"/>", "0 0 0.2") + extra_l2) +
         LinkWith("l3", Collision("<sphere radius=\"0.04\"/>")) +
         LinkWith("tool", Collision("<sphere radius=\"0.03\"/>")) +
         Joint("j1", "revolute", "base", "l1", "0 0 0.5", "0 0 0", "0 0 1", kLimit) +
         Joint("j2", "revolute", "l1", "l2", "0 0 0.3", "0 0 0", "0 1 0", kLimit) +
         Joint("j3", "continuous", "l2", "l3", "0 0 0.4", "0 0 0", "0 2 0") +
         Joint("t", "fixed", "l3", "tool", "0 0 0.2", "0 0 0", "1 0 0") + "</robot>";
}

bool NoteMentions(const ChainSpec& spec, const std::string& a, const std::string& b) {
  for (const std::string& note : spec.geometry_notes) {
    if (note.find(a) != std::string::npos && note.find(b) != std::string::npos) return true;
  }
  return false;
}

TEST(UrdfTest, CollisionElementsFollowTheirLinksThroughFixedJoints) {
  auto chain = ChainFromUrdf(ToyArmWithGeometry(), "base", "tool");
  ASSERT_TRUE(chain.ok()) << chain.status();
  ASSERT_EQ(chain->link_shapes.size(), 3u);
  EXPECT_EQ(chain->link_shapes[0].size(), 1u);  // the cylinder
  EXPECT_EQ(chain->link_shapes[2].size(), 2u);  // l3's sphere and the tool's
  EXPECT_TRUE(chain->ChecksSelfCollision());
  // By hand, at q = (0, pi/2, 0): j2 at (0, 0, 0.8) tips l2 towards +x, so l3's sphere sits at
  // (0.4, 0, 0.8) and the tool's at (0.6, 0, 0.8); l1's cylinder stays on the z axis from 0.5 to
  // 0.8 m.
  const LinkCapsules links = LinkCapsulesAt(*chain, Eigen::Vector3d(0.0, kPi / 2, 0.0));
  const planning::Capsule& l3_ball = links.capsules[links.first[2]];
  const planning::Capsule& tool_ball = links.capsules[links.first[2] + 1];
  EXPECT_LT((l3_ball.a - Eigen::Vector3d(0.4, 0, 0.8)).norm(), 1e-12);
  EXPECT_EQ(l3_ball.radius, 0.04);
  EXPECT_LT((tool_ball.a - Eigen::Vector3d(0.6, 0, 0.8)).norm(), 1e-12);
  EXPECT_EQ(tool_ball.radius, 0.03);
  const planning::Capsule& cylinder = links.capsules[0];
  EXPECT_LT((cylinder.a - Eigen::Vector3d(0, 0, 0.5)).norm(), 1e-12);
  EXPECT_LT((cylinder.b - Eigen::Vector3d(0, 0, 0.8)).norm(), 1e-12);
  EXPECT_EQ(cylinder.radius, 0.05);
  // Approximations and the base's geometry are said, not dropped silently.
  EXPECT_TRUE(NoteMentions(*chain, "<collision> #0 of link 'base'", "left out"));
  EXPECT_TRUE(NoteMentions(*chain, "<collision> #0 of link 'l1'", "cylinder covered by a capsule"));
  EXPECT_TRUE(
      NoteMentions(*chain, "<collision> #0 of link 'l2'", "box 0.06 x 0.06 x 0.4 m covered"));
  // Without any <collision> element the chain keeps the joint-origin capsules.
  EXPECT_TRUE(ChainFromUrdf(ToyArm(), "base", "tool")->link_shapes.empty());
}

std::string BinaryStlOfBox(double half) {
  std::string out(80, ' ');
  std::vector<std::array<Eigen::Vector3d, 3>> triangles;
  for (int axis = 0; axis < 3; ++axis) {
    for (double side : {-half, half}) {
      Eigen::Vector3d c[4];
      for (int k = 0; k < 4; ++k) {
        c[k][axis] = side;
        c[k][(axis + 1) % 3] = (k == 1 || k == 2) ? half : -half;
        c[k][(axis + 2) % 3] = k >= 2 ? half : -half;
      }
      triangles.push_back({c[0], c[1], c[2]});
      triangles.push_back({c[0], c[2], c[3]});
    }
  }
  const uint32_t n = static_cast<uint32_t>(triangles.size());
  auto put32 = [&](uint32_t bits) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  };
  put32(n);
  for (const auto& t : triangles) {
    for (int i = 0; i < 3; ++i) put32(0);
    for (const Eigen::Vector3d& v : t) {
      for (int i = 0; i < 3; ++i) {
        const float f = static_cast<float>(v[i]);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        put32(bits);
      }
    }
    out += std::string(2, '\0');
  }
  return out;
}

TEST(UrdfTest, MeshesAreCoveredWhenSentAndNamedWhenNot) {
  const std::string mesh = "<mesh filename=\"package://toy/meshes/arm.stl\" scale=\"0.5 0.5 2\"/>";
  // A 0.1 m cube mesh scaled to 0.05 x 0.05 x 0.2, 0.15 m up l1: every corner inside the cover.
  auto chain = ChainFromUrdf(ToyArmWithGeometry(mesh), "base", "tool",
                             Eigen::Isometry3d::Identity(), {{"arm.stl", BinaryStlOfBox(0.05)}});
  ASSERT_TRUE(chain.ok()) << chain.status();
  ASSERT_FALSE(chain->link_shapes[0].empty());
  for (int corner = 0; corner < 8; ++corner) {
    const Eigen::Vector3d p(corner & 1 ? 0.025 : -0.025, corner & 2 ? 0.025 : -0.025,
                            0.15 + (corner & 4 ? 0.1 : -0.1));
    double outside = INFINITY;
    for (const LinkShape& c : chain->link_shapes[0]) {
      const Eigen::Vector3d ab = c.b - c.a;
      const double t =
          ab.squaredNorm() > 0 ? std::clamp((p - c.a).dot(ab) / ab.squaredNorm(), 0.0, 1.0) : 0.0;
      outside = std::min(outside, (p - c.a - t * ab).norm() - c.radius);
    }
    EXPECT_LE(outside, 1e-6) << corner;  // float vertices
  }
  EXPECT_TRUE(NoteMentions(*chain, "<collision> #0 of link 'l1'", "(12 triangles) covered by"));
  // Sent under the name as written, too.
  EXPECT_TRUE(ChainFromUrdf(ToyArmWithGeometry(mesh), "base", "tool", Eigen::Isometry3d::Identity(),
                            {{"package://toy/meshes/arm.stl", BinaryStlOfBox(0.05)}})
                  ->link_shapes[0]
                  .size() > 0);
  // Not sent: l1 has no geometry, and the note names the file.
  auto missing = ChainFromUrdf(ToyArmWithGeometry(mesh), "base", "tool");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_TRUE(missing->link_shapes[0].empty());
  EXPECT_FALSE(missing->link_shapes[1].empty());
  EXPECT_TRUE(NoteMentions(*missing, "package://toy/meshes/arm.stl", "was not sent"));
  // A chain whose only geometry is meshes not sent keeps the joint-origin capsules.
  const std::string only_meshes =
      "<robot name=\"m\">" + Link("base") + LinkWith("l1", Collision(mesh)) + Link("l2") +
      Joint("j1", "revolute", "base", "l1", "0 0 0.5", "0 0 0", "0 0 1", kLimit) +
      Joint("j2", "revolute", "l1", "l2", "0 0 0.3", "0 0 0", "0 1 0", kLimit) + "</robot>";
  auto bare = ChainFromUrdf(only_meshes, "base", "l2");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_TRUE(bare->link_shapes.empty());
  EXPECT_TRUE(NoteMentions(*bare, "<collision> #0 of link 'l1'", "was not sent"));
  // Sent but not STL: left out, said so.
  auto collada =
      ChainFromUrdf(ToyArmWithGeometry("<mesh filename=\"package://toy/meshes/arm.dae\"/>"), "base",
                    "tool", Eigen::Isometry3d::Identity(), {{"arm.dae", "<COLLADA/>"}});
  ASSERT_TRUE(collada.ok()) << collada.status();
  EXPECT_TRUE(NoteMentions(*collada, "arm.dae", "is not STL"));
  // Sent as STL but unreadable: refused, naming the element and the file.
  EXPECT_THAT(
      ChainFromUrdf(ToyArmWithGeometry(mesh), "base", "tool", Eigen::Isometry3d::Identity(),
                    {{"arm.stl", "garbage"}})
          .status()
          .message(),
      HasSubstr(
          "meshes: 'package://toy/meshes/arm.stl' (<collision> #0 of link 'l1'): not an STL"));
}

TEST(UrdfTest, BadCollisionSizesNameTheElement) {
  EXPECT_THAT(ChainFromUrdf(ToyArmWithGeometry("<cylinder radius=\"-0.05\" length=\"0.3\"/>"),
                            "base", "tool")
                  .status()
                  .message(),
              HasSubstr("<collision> #0 of link 'l1': cylinder radius must be finite, >= 0"));
  EXPECT_THAT(ChainFromUrdf(ToyArmWithGeometry("<sphere radius=\"0.1\"/>",
                                               Collision("<box size=\"0.1 -1 0.1\"/>")),
                            "base", "tool")
                  .status()
                  .message(),
              HasSubstr("<collision> #1 of link 'l2': box size must be finite, >= 0"));
  // urdfdom drops an element whose size is no number and goes on; the import does not.
  const std::string nan_sphere =
      std::string(ChainFromUrdf(ToyArmWithGeometry("<sphere radius=\"nan\"/>"), "base", "tool")
                      .status()
                      .message());
  EXPECT_THAT(nan_sphere, HasSubstr("radius [nan] is not a valid float"));
  EXPECT_THAT(nan_sphere, HasSubstr("Could not parse collision element for Link [l1]"));
}

}  // namespace
}  // namespace ikd::robot
