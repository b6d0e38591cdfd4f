// Kinematic chains: DH import (standard and modified) against the DH matrices written out
// directly, the makers' zero poses, fixed-joint merging and field-naming validation.
#include "ikd/robot/chain.h"

#include <cmath>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/robot/presets.h"

namespace ikd::robot {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = 3.14159265358979323846;

// Standard DH link transform Rz(theta) Tz(d) Tx(a) Rx(alpha), written out (Spong eq. 3.10).
Eigen::Matrix4d StandardDh(double a, double alpha, double d, double theta) {
  const double ct = std::cos(theta), st = std::sin(theta), ca = std::cos(alpha),
               sa = std::sin(alpha);
  Eigen::Matrix4d T;
  T << ct, -st * ca, st * sa, a * ct, st, ct * ca, -ct * sa, a * st, 0, sa, ca, d, 0, 0, 0, 1;
  return T;
}

// Modified DH link transform Rx(alpha) Tx(a) Rz(theta) Tz(d), written out (Craig eq. 3.6).
Eigen::Matrix4d ModifiedDh(double a, double alpha, double d, double theta) {
  const double ct = std::cos(theta), st = std::sin(theta), ca = std::cos(alpha),
               sa = std::sin(alpha);
  Eigen::Matrix4d T;
  T << ct, -st, 0, a, st * ca, ct * ca, -sa, -sa * d, st * sa, ct * sa, ca, ca * d, 0, 0, 0, 1;
  return T;
}

struct Row {
  double a, alpha, d;
};
const Row kUr5[] = {{0, kPi / 2, 0.089159}, {-0.425, 0, 0},         {-0.39225, 0, 0},
                    {0, kPi / 2, 0.10915},  {0, -kPi / 2, 0.09465}, {0, 0, 0.0823}};
const Row kPanda[] = {{0, 0, 0.333},        {0, -kPi / 2, 0},           {0, kPi / 2, 0.316},
                      {0.0825, kPi / 2, 0}, {-0.0825, -kPi / 2, 0.384}, {0, kPi / 2, 0},
                      {0.088, kPi / 2, 0}};

Eigen::VectorXd RandomAngles(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-kPi, kPi);
  Eigen::VectorXd q(n);
  for (int k = 0; k < n; ++k) q[k] = u(rng);
  return q;
}

// UR5 zero pose: hand at (a2 + a3, -(d4 + d6), d1 - d5) from UR's published DH table.
TEST(ChainTest, Ur5ZeroPoseMatchesTheDhTable) {
  const Eigen::Vector3d p = ToolPose(presets::Ur5(), Eigen::VectorXd::Zero(6)).translation();
  EXPECT_NEAR(p.x(), -0.81725, 1e-12);
  EXPECT_NEAR(p.y(), -0.19145, 1e-12);
  EXPECT_NEAR(p.z(), 0.089159 - 0.09465, 1e-12);
}

// Panda zero pose: flange at (0.088, 0, 0.926), pointing down (Franka's documentation).
TEST(ChainTest, PandaZeroPoseMatchesFranka) {
  const Eigen::Isometry3d X = ToolPose(presets::Panda(), Eigen::VectorXd::Zero(7));
  EXPECT_NEAR((X.translation() - Eigen::Vector3d(0.088, 0, 0.926)).norm(), 0.0, 1e-12);
  EXPECT_NEAR(X.linear().col(2).dot(Eigen::Vector3d(0, 0, -1)), 1.0, 1e-12);
}

// iiwa14 zero pose: straight up, 0.36 + 0.42 + 0.40 + 0.126 m.
TEST(ChainTest, IiwaZeroPoseIsStraightUp) {
  const Eigen::Vector3d p = ToolPose(presets::Iiwa14(), Eigen::VectorXd::Zero(7)).translation();
  EXPECT_NEAR((p - Eigen::Vector3d(0, 0, 1.306)).norm(), 0.0, 1e-12);
}

TEST(ChainTest, StandardDhMatchesTheMatrixProduct) {
  std::mt19937_64 rng(3);
  const ChainSpec ur5 = presets::Ur5();
  for (int trial = 0; trial < 50; ++trial) {
    const Eigen::VectorXd q = RandomAngles(6, rng);
    Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
    for (int k = 0; k < 6; ++k) T *= StandardDh(kUr5[k].a, kUr5[k].alpha, kUr5[k].d, q[k]);
    EXPECT_LT((ToolPose(ur5, q).matrix() - T).norm(), 1e-12);
  }
}

TEST(ChainTest, ModifiedDhMatchesTheMatrixProduct) {
  std::mt19937_64 rng(4);
  const ChainSpec panda = presets::Panda();
  for (int trial = 0; trial < 50; ++trial) {
    const Eigen::VectorXd q = RandomAngles(7, rng);
    Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
    for (int k = 0; k < 7; ++k) T *= ModifiedDh(kPanda[k].a, kPanda[k].alpha, kPanda[k].d, q[k]);
    T *= ModifiedDh(0, 0, 0.107, 0);  // flange
    EXPECT_LT((ToolPose(panda, q).matrix() - T).norm(), 1e-12);
  }
}

TEST(ChainTest, ThetaOffsetShiftsTheJointZero) {
  std::vector<DhRow> rows = {{0.3, 0.0, 0.0, 0.0, {}}, {0.2, 0.0, 0.0, 0.5, {}}};
  auto shifted = ChainFromDh(rows, DhConvention::kStandard);
  rows[1].theta_offset = 0.0;
  auto plain = ChainFromDh(rows, DhConvention::kStandard);
  ASSERT_TRUE(shifted.ok() && plain.ok());
  const Eigen::Vector2d q(0.1, 0.2);
  EXPECT_LT((ToolPose(*shifted, q).matrix() - ToolPose(*plain, Eigen::Vector2d(0.1, 0.7)).matrix())
                .norm(),
            1e-14);
}

TEST(ChainTest, MergingFixedJointsKeepsTheKinematics) {
  ChainSpec spec = presets::Iiwa14();
  JointSpec fixed;
  fixed.name = "adapter";
  fixed.type = JointType::kFixed;
  fixed.X_PJ =
      Eigen::Translation3d(0.01, 0.02, 0.03) * Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitX());
  spec.joints.insert(spec.joints.begin() + 3, fixed);
  spec.joints.push_back(fixed);
  const ChainSpec merged = MergeFixedJoints(spec);
  EXPECT_EQ(merged.joints.size(), 7u);
  EXPECT_EQ(NumMovingJoints(spec), 7);
  std::mt19937_64 rng(5);
  const Eigen::VectorXd q = RandomAngles(7, rng);
  EXPECT_LT((ToolPose(spec, q).matrix() - ToolPose(merged, q).matrix()).norm(), 1e-12);
  ASSERT_EQ(LinkPoses(spec, q).size(), 7u);
}

// The tool Jacobian against central differences of ToolPose (h = 1e-6: truncation ~1e-12,
// rounding ~1e-10), on the three presets and on a chain with a fixed and a prismatic joint.
TEST(ChainTest, ToolJacobianMatchesFiniteDifferences) {
  ChainSpec with_slide = presets::Iiwa14();
  JointSpec fixed;
  fixed.type = JointType::kFixed;
  fixed.X_PJ =
      Eigen::Translation3d(0.01, 0.02, 0.03) * Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitX());
  JointSpec slide;
  slide.type = JointType::kPrismatic;
  slide.axis = Eigen::Vector3d(1.0, 2.0, 2.0) / 3.0;
  slide.X_PJ =
      Eigen::Translation3d(0.0, 0.05, 0.1) * Eigen::AngleAxisd(0.7, Eigen::Vector3d::UnitY());
  with_slide.joints.insert(with_slide.joints.begin() + 2, fixed);
  with_slide.joints.insert(with_slide.joints.begin() + 4, slide);
  std::mt19937_64 rng(9);
  for (const ChainSpec& spec : {presets::Ur5(), presets::Panda(), presets::Iiwa14(), with_slide}) {
    const int n = NumMovingJoints(spec);
    const Eigen::VectorXd q = RandomAngles(n, rng);
    const Eigen::MatrixXd J = ToolJacobian(spec, q);
    ASSERT_EQ(J.rows(), 6);
    ASSERT_EQ(J.cols(), n);
    constexpr double h = 1e-6;
    for (int k = 0; k < n; ++k) {
      Eigen::VectorXd plus = q, minus = q;
      plus[k] += h, minus[k] -= h;
      const Eigen::Isometry3d Xp = ToolPose(spec, plus), Xm = ToolPose(spec, minus);
      const Eigen::Vector3d v = (Xp.translation() - Xm.translation()) / (2 * h);
      const Eigen::AngleAxisd turn(Xp.linear() * Xm.linear().transpose());
      const Eigen::Vector3d w = turn.angle() * turn.axis() / (2 * h);
      EXPECT_LT((J.col(k).head<3>() - v).norm(), 1e-8) << spec.name << " joint " << k;
      EXPECT_LT((J.col(k).tail<3>() - w).norm(), 1e-8) << spec.name << " joint " << k;
    }
  }
}

TEST(ChainTest, ValidationNamesTheField) {
  ChainSpec spec = presets::Ur5();
  spec.joints[2].axis = Eigen::Vector3d(0, 0, 2);
  EXPECT_THAT(spec.Validate().message(), HasSubstr("joints[2].axis"));
  spec = presets::Ur5();
  spec.joints[1].limits = JointLimits{1.0, -1.0, 1.0};
  EXPECT_THAT(spec.Validate().message(), HasSubstr("joints[1].limits"));
  EXPECT_THAT(spec.Validate().message(), HasSubstr("lower must be <= upper"));
  spec = presets::Ur5();
  spec.joints[0].limits->max_velocity = 0.0;
  EXPECT_THAT(spec.Validate().message(), HasSubstr("max_velocity must be > 0"));
  spec = presets::Ur5();
  spec.X_FT.linear() *= 2.0;
  EXPECT_THAT(spec.Validate().message(), HasSubstr("X_FT must be a rotation"));
  spec = presets::Ur5();  // fuzzer finding: offsets this far overflowed the link sites
  spec.joints[3].X_PJ.translation().y() = -3e200;
  EXPECT_THAT(spec.Validate().message(),
              HasSubstr("joints[3].X_PJ translation must be within 1e+06 m in every coordinate"));
  spec = presets::Ur5();
  spec.joints.clear();
  EXPECT_THAT(spec.Validate().message(), HasSubstr("joints must not be empty"));
  const auto bad =
      ChainFromDh({{0.1, 0, 0, 0, {}}, {std::nan(""), 0, 0, 0, {}}}, DhConvention::kStandard);
  EXPECT_THAT(bad.status().message(), HasSubstr("rows[1]"));
}

}  // namespace
}  // namespace ikd::robot
