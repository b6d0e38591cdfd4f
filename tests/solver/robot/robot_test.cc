// The Cartesian site model of industrial arms: limb clusters rigid to machine precision, sites
// on the joint axes that independent DH forward kinematics gives, angle round trips, and a
// constraint set whose rank leaves exactly the joints' degrees of freedom.
#include "ikd/robot/robot.h"

#include <cmath>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <Eigen/SVD>

#include "ikd/robot/presets.h"

namespace ikd::robot {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = 3.14159265358979323846;

struct Case {
  const char* name;
  ChainSpec (*make)();
};
const Case kRobots[] = {
    {"ur5", presets::Ur5}, {"panda", presets::Panda}, {"iiwa14", presets::Iiwa14}};

class RobotTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    spec_ = GetParam().make();
    auto robot = Robot::Create(spec_);
    ASSERT_TRUE(robot.ok()) << robot.status();
    robot_.emplace(*std::move(robot));
  }
  // Uniform inside the joint limits (inside (-pi, pi) for wider ranges).
  Eigen::VectorXd RandomAngles(std::mt19937_64& rng) const {
    Eigen::VectorXd q(robot_->num_joints());
    for (int k = 0; k < q.size(); ++k) {
      const auto& limits = robot_->spec().joints[k].limits;
      const double lo = std::max(limits->lower, -kPi + 1e-6),
                   hi = std::min(limits->upper, kPi - 1e-6);
      q[k] = std::uniform_real_distribution<double>(lo, hi)(rng);
    }
    return q;
  }
  ChainSpec spec_;
  std::optional<Robot> robot_;
};

// Every limb cluster keeps its distances exactly: |r_ij| = l_ij to 1e-14 relative.
TEST_P(RobotTest, SitesFromAnglesKeepEveryConstraint) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::Matrix3Xd sites = robot_->SitesFromAngles(RandomAngles(rng));
    EXPECT_LT(robot_->model(TargetMode::kPose).MaxRelativeViolation(sites), 1e-14);
  }
}

// Independent forward kinematics (the DH chain's own frames): the tool sites carry the tool
// pose, and each joint's axis sites lie on that joint's axis line, 1e-9 m (issue 5).
TEST_P(RobotTest, SitesMatchIndependentForwardKinematics) {
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::VectorXd q = RandomAngles(rng);
    const Eigen::Matrix3Xd sites = robot_->SitesFromAngles(q);
    const Eigen::Isometry3d X_WT = ToolPose(spec_, q);
    const auto expected = robot_->ToolSitesFor(X_WT);
    for (int k = 0; k < 4; ++k) {
      EXPECT_LT((sites.col(robot_->tool_sites()[k]) - expected[k]).norm(), 1e-9);
    }
    EXPECT_LT((robot_->ToolPoseFromSites(sites).matrix() - X_WT.matrix()).norm(), 1e-9);
    const auto links = LinkPoses(spec_, q);
    for (int L = 1; L <= robot_->num_joints(); ++L) {
      const Eigen::Vector3d origin = links[L - 1].translation();
      const Eigen::Vector3d axis = links[L - 1].linear() * spec_.joints[L - 1].axis;
      for (int k = 0; k < 2; ++k) {
        const Eigen::Vector3d r = sites.col(robot_->link_sites(L)[k]) - origin;
        EXPECT_LT((r - r.dot(axis) * axis).norm(), 1e-9) << "joint " << L;
      }
    }
  }
}

// Angles -> sites -> angles to 1e-12 (issue 5).
TEST_P(RobotTest, AnglesRoundTrip) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    const Eigen::VectorXd q = RandomAngles(rng);
    const Eigen::VectorXd back = robot_->AnglesFromSites(robot_->SitesFromAngles(q));
    EXPECT_LT((back - q).cwiseAbs().maxCoeff(), 1e-12);
  }
}

// The site model has exactly the joints' freedom: with the base fixed, the constraint
// Jacobian has full row rank (independent constraints, as the matrix method needs) and
// 3 * free sites - constraints = number of joints.
TEST_P(RobotTest, ConstraintsAreIndependentAndLeaveTheJointFreedom) {
  const constraints::ConstraintModel& model = robot_->model(TargetMode::kPosition);
  Eigen::VectorXd w = model.inverse_masses();
  for (int i : robot_->tool_sites()) w[i] = 1.0;  // only the base fixed
  std::vector<int> column(robot_->num_sites(), -1);
  int free = 0;
  for (int i = 0; i < robot_->num_sites(); ++i) {
    if (w[i] > 0.0) column[i] = free++;
  }
  std::vector<constraints::DistanceConstraint> active;
  for (const auto& c : robot_->constraints()) {
    if (column[c.i] >= 0 || column[c.j] >= 0) active.push_back(c);
  }
  EXPECT_EQ(3 * free - static_cast<int>(active.size()), robot_->num_joints());
  std::mt19937_64 rng(10);
  const Eigen::Matrix3Xd sites = robot_->SitesFromAngles(RandomAngles(rng));
  Eigen::MatrixXd B = Eigen::MatrixXd::Zero(active.size(), 3 * free);
  for (size_t a = 0; a < active.size(); ++a) {
    const Eigen::Vector3d d = sites.col(active[a].i) - sites.col(active[a].j);
    if (column[active[a].i] >= 0) B.block<1, 3>(a, 3 * column[active[a].i]) = d.transpose();
    if (column[active[a].j] >= 0) B.block<1, 3>(a, 3 * column[active[a].j]) = -d.transpose();
  }
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(B).singularValues();
  EXPECT_GT(sv.minCoeff(), 1e-6 * sv.maxCoeff());  // dependent rows give ~1e-16
}

INSTANTIATE_TEST_SUITE_P(Presets, RobotTest, ::testing::ValuesIn(kRobots),
                         [](const auto& info) { return std::string(info.param.name); });

// Joint ranges beyond +-pi (UR5: +-2 pi) are read back next to the previous configuration.
TEST(RobotAngles, WideRangesFollowTheNearConfiguration) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  Eigen::VectorXd q(6);
  q << 5.9, -5.0, 4.0, -3.5, 6.2, -6.2;
  const Eigen::VectorXd near = q + Eigen::VectorXd::Constant(6, 0.4);
  const Eigen::VectorXd back = robot->AnglesFromSites(robot->SitesFromAngles(q), &near);
  EXPECT_LT((back - q).cwiseAbs().maxCoeff(), 1e-12);
}

// Coincident joint origins (a spherical wrist: three axes through one point) still give
// separate, well-shaped clusters.
TEST(RobotLayout, SphericalWristKeepsSitesApart) {
  std::vector<DhRow> rows = {{0.0, -kPi / 2, 0.3, 0.0, {}}, {0.4, 0.0, 0.0, 0.0, {}},
                             {0.0, kPi / 2, 0.0, 0.0, {}},  {0.0, -kPi / 2, 0.0, 0.0, {}},
                             {0.0, kPi / 2, 0.0, 0.0, {}},  {0.0, 0.0, 0.0, 0.0, {}}};
  auto chain = ChainFromDh(rows, DhConvention::kStandard);
  ASSERT_TRUE(chain.ok());
  auto robot = Robot::Create(*chain);
  ASSERT_TRUE(robot.ok()) << robot.status();
  for (const auto& c : robot->constraints()) EXPECT_GT(c.length, 0.29 * robot->spacing());
  const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(6, -1.0, 1.2);
  EXPECT_LT((robot->AnglesFromSites(robot->SitesFromAngles(q)) - q).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(RobotCreate, RejectsPrismaticJointsAndBadSpacing) {
  ChainSpec spec = presets::Ur5();
  spec.joints[3].type = JointType::kPrismatic;
  EXPECT_THAT(Robot::Create(spec).status().message(), HasSubstr("joints[3]"));
  EXPECT_THAT(Robot::Create(spec).status().message(), HasSubstr("prismatic"));
  EXPECT_THAT(Robot::Create(presets::Ur5(), -1.0).status().message(), HasSubstr("spacing"));
  EXPECT_THAT(Robot::Create(presets::Ur5(), 1e300).status().message(),
              HasSubstr("spacing must be in [0, 1e6] m"));
  spec = presets::Ur5();
  spec.joints[0].axis = Eigen::Vector3d::Zero();
  EXPECT_THAT(Robot::Create(spec).status().message(), HasSubstr("joints[0].axis"));
}

}  // namespace
}  // namespace ikd::robot
