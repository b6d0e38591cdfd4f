// DiagnoseRobot (robot/robot_diagnosis.h) on the UR5: joints at limits, the stretched arm's
// singular direction, the tool's residuals and a link in a ball, each checked with the test's
// own forward kinematics (robot_cases.h ToolFrame) and distances.
#include "ikd/robot/robot_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>
#include <Eigen/SVD>

#include "ikd/robot/presets.h"
#include "solver/robot/robot_cases.h"

namespace ikd::robot {
namespace {

using Kind = ik::Reason::Kind;

std::vector<ik::Reason> OfKind(const std::vector<ik::Reason>& reasons, Kind kind) {
  std::vector<ik::Reason> out;
  for (const ik::Reason& r : reasons) {
    if (r.kind == kind) out.push_back(r);
  }
  return out;
}

class DiagnoseRobotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = presets::Ur5();
    spec_.link_radii.assign(6, 0.05);
    robot_ = std::make_unique<Robot>(*Robot::Create(spec_));
  }
  ToolTarget PoseAt(const Eigen::VectorXd& q) const {
    const Eigen::Isometry3d X = ToolFrame(spec_, q);
    return *ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()));
  }
  ChainSpec spec_;
  std::unique_ptr<Robot> robot_;
  const Eigen::VectorXd ready_ =
      (Eigen::VectorXd(6) << 0.0, -1.2, 1.5, -1.8, -1.57, 0.0).finished();
};

TEST_F(DiagnoseRobotTest, ReadyPoseOnItsTargetHasNoReason) {
  EXPECT_TRUE(DiagnoseRobot(*robot_, nullptr, ready_, PoseAt(ready_), RobotIkOptions{}).empty());
}

TEST_F(DiagnoseRobotTest, JointAtItsLimitIsNamed) {
  Eigen::VectorXd q = ready_;
  q[0] = spec_.joints[0].limits->upper;
  const auto limits = OfKind(DiagnoseRobot(*robot_, nullptr, q, PoseAt(q), {}), Kind::kJointLimit);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].joint, 0);
  EXPECT_EQ(limits[0].bound, spec_.joints[0].limits->upper);
}

// Elbow straight (q3 = 0) with a full-pose target: the least singular value reported is the
// one of the test's own central-difference 6 x 6 Jacobian (linear rows, then the rotation
// vector's), below the threshold.
TEST_F(DiagnoseRobotTest, StretchedArmIsSingularByTheTestsOwnJacobian) {
  Eigen::VectorXd q = ready_;
  q[2] = 0.0;
  const auto singular = OfKind(DiagnoseRobot(*robot_, nullptr, q, PoseAt(q), {}), Kind::kSingular);
  ASSERT_EQ(singular.size(), 1u);
  Eigen::MatrixXd J(6, 6);
  for (int j = 0; j < 6; ++j) {
    Eigen::VectorXd plus = q, minus = q;
    plus[j] += 1e-6, minus[j] -= 1e-6;
    const Eigen::Isometry3d Xp = ToolFrame(spec_, plus), Xm = ToolFrame(spec_, minus);
    J.col(j).head<3>() = (Xp.translation() - Xm.translation()) / 2e-6;
    const Eigen::AngleAxisd turn(Xp.linear() * Xm.linear().transpose());
    J.col(j).tail<3>() = turn.angle() * turn.axis() / 2e-6;
  }
  const double least = Eigen::JacobiSVD<Eigen::MatrixXd>(J).singularValues()[5];
  EXPECT_LT(least, kSingularValue);
  EXPECT_NEAR(singular[0].value, least, 1e-6);
  EXPECT_NEAR(singular[0].direction.norm(), 1.0, 1e-9);
  // A generic pose is not singular.
  EXPECT_TRUE(
      OfKind(DiagnoseRobot(*robot_, nullptr, ready_, PoseAt(ready_), {}), Kind::kSingular).empty());
}

// A target 0.1 m above the tool and turned 0.2 rad about z: both residuals, with the test's own
// figures.
TEST_F(DiagnoseRobotTest, ResidualsGiveTheGapAndTheTurn) {
  const Eigen::Isometry3d X = ToolFrame(spec_, ready_);
  const Eigen::Quaterniond turned(Eigen::AngleAxisd(0.2, Eigen::Vector3d::UnitZ()) * X.linear());
  const ToolTarget target = *ToolTarget::Pose(X.translation() + Eigen::Vector3d(0, 0, 0.1), turned);
  const auto reasons = DiagnoseRobot(*robot_, nullptr, ready_, target, {});
  const auto gap = OfKind(reasons, Kind::kResidual);
  ASSERT_EQ(gap.size(), 1u);
  EXPECT_NEAR(gap[0].value, 0.1, 1e-12);
  EXPECT_NEAR(gap[0].direction.z(), 1.0, 1e-12);
  const auto turn = OfKind(reasons, Kind::kRotationResidual);
  ASSERT_EQ(turn.size(), 1u);
  EXPECT_NEAR(turn[0].value, 0.2, 1e-12);
  EXPECT_NEAR(std::abs(turn[0].direction.z()), 1.0, 1e-9);
}

// A full pose 1.5 m beyond the ready tool: no configuration reaches it, and the closed form's
// nearest miss is at least how far it lies past every link laid end to end (the test's own
// bound: the sum of the spec's joint offsets and the tool's).
TEST_F(DiagnoseRobotTest, APoseBeyondEveryLinkIsOutOfReach) {
  const Eigen::Isometry3d X = ToolFrame(spec_, ready_);
  const Eigen::Vector3d away = X.translation() + 1.5 * X.translation().normalized();
  const ToolTarget target = *ToolTarget::Pose(away, Eigen::Quaterniond(X.linear()));
  double links = spec_.X_FT.translation().norm();
  for (const JointSpec& joint : spec_.joints) links += joint.X_PJ.translation().norm();
  const auto out = OfKind(DiagnoseRobot(*robot_, nullptr, ready_, target, {}), Kind::kOutOfReach);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_GE(out[0].distance, (away - spec_.X_WB.translation()).norm() - links);
  EXPECT_TRUE(std::isfinite(out[0].value));
  // A pose some configuration reaches is not out of reach, however far the answer is from it.
  Eigen::VectorXd elsewhere = ready_;
  elsewhere[0] += 1.0;
  elsewhere[2] -= 0.5;
  EXPECT_TRUE(
      OfKind(DiagnoseRobot(*robot_, nullptr, ready_, PoseAt(elsewhere), {}), Kind::kOutOfReach)
          .empty());
  // Position targets say nothing of reach (their closed form is not asked).
  EXPECT_TRUE(OfKind(DiagnoseRobot(*robot_, nullptr, ready_, ToolTarget{away, std::nullopt}, {}),
                     Kind::kOutOfReach)
                  .empty());
}

// A ball of radius 0.04 centred on the middle of link 2's capsule axis (between the joint
// origins, the test's own frames): link 2 in collision by the two radii.
TEST_F(DiagnoseRobotTest, LinkInABallIsNamedWithTheDepth) {
  std::vector<Eigen::Vector3d> origins;
  Eigen::Isometry3d X = spec_.X_WB;
  for (size_t k = 0; k < spec_.joints.size(); ++k) {
    X = X * spec_.joints[k].X_PJ;
    origins.push_back(X.translation());
    X = X * Eigen::AngleAxisd(ready_[k], spec_.joints[k].axis.normalized());
  }
  const Eigen::Vector3d centre = 0.5 * (origins[2] + origins[3]);
  const planning::Scene scene =
      *planning::Scene::Create({{"ball", planning::Sphere{centre, 0.04}}});
  const auto hits =
      OfKind(DiagnoseRobot(*robot_, &scene, ready_, PoseAt(ready_), {}), Kind::kCollision);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].link, 2);
  EXPECT_EQ(hits[0].obstacle, 0);
  EXPECT_NEAR(hits[0].distance, -0.09, 1e-9);
}

}  // namespace
}  // namespace ikd::robot
