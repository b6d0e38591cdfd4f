// ik::SolvePoseWithPosture (posture.h) on chain arms: checked with the test's own planar
// forward kinematics and angle distances, against the analytic limit (a posture that reaches
// the target is the answer when its weight dominates) and the seed limit (a tiny weight keeps
// the plain answer).
#include "ikd/ik/posture.h"

#include <cmath>
#include <numbers>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::ik {
namespace {

using ::testing::HasSubstr;

Arm PlanarArm(int n, double total = 1.4) {
  ArmSpec spec;
  for (int k = 0; k < n; ++k) spec.limbs.push_back({total / n, 0.01});
  return *Arm::Create(spec);
}

// The test's own planar forward kinematics (arm frame = world here): angles[0] the first
// limb's direction, angles[k] the turn from limb k-1 to limb k.
Eigen::Vector3d PlanarHand(const std::vector<double>& angles, double limb) {
  Eigen::Vector3d hand = Eigen::Vector3d::Zero();
  double direction = 0.0;
  for (double a : angles) {
    direction += a;
    hand += limb * Eigen::Vector3d(std::cos(direction), std::sin(direction), 0.0);
  }
  return hand;
}

double AngleDistance(const std::vector<double>& a, const Eigen::VectorXd& b) {
  double worst = 0.0;
  for (size_t j = 0; j < a.size(); ++j) {
    worst = std::max(worst, std::abs(std::remainder(a[j] - b[j], 2.0 * std::numbers::pi)));
  }
  return worst;
}

// A 7-link planar arm (4 redundant angles for a hand position); the posture is a bent
// configuration whose hand is the target.
TEST(ChainPosture, PostureOnTheTargetIsTheAnswerWhenItsWeightDominates) {
  const Arm arm = PlanarArm(7);
  const double limb = 0.2;
  const std::vector<double> bent = {0.9, -0.5, 0.4, -0.6, 0.3, -0.2, 0.5};
  const Eigen::Vector3d target = PlanarHand(bent, limb);
  const Posture posture{.q = Eigen::Map<const Eigen::VectorXd>(bent.data(), 7), .weight = 1e4};

  auto plain = SolvePose(arm, nullptr, target, IkOptions{});
  auto with = SolvePoseWithPosture(arm, nullptr, target, IkOptions{}, std::nullopt, posture);
  ASSERT_TRUE(plain.ok() && with.ok());
  ASSERT_EQ(with->status, planning::StepStatus::kReached);
  EXPECT_LT((PlanarHand(with->angles, limb) - target).norm(), 1e-6);
  EXPECT_GT(AngleDistance(plain->angles, posture.q), 0.2) << "the plain answer is elsewhere";
  EXPECT_LT(AngleDistance(with->angles, posture.q), 1e-2);
  // The angles returned are the sites': the limbs keep their lengths (the test's own check).
  for (int k = 0; k < arm.num_limbs(); ++k) {
    EXPECT_NEAR((with->sites.col(k + 1) - with->sites.col(k)).norm(), limb, 1e-9);
  }
}

// A tiny weight leaves the seed's term alone: the answer is the least motion from the seed
// (home) that reaches the target, a local minimum of |q - seed|^2 on it. Checked by first-order
// optimality with the test's own Jacobian: the gradient has no part in its null space.
TEST(ChainPosture, TinyWeightGivesTheLeastMotionFromTheSeed) {
  const Arm arm = PlanarArm(7);
  const Eigen::Vector3d target(0.6, 0.7, 0.0);
  const Posture posture{.q = Eigen::VectorXd::Constant(7, 0.4), .weight = 1e-6};
  auto plain = SolvePose(arm, nullptr, target, IkOptions{});
  auto with = SolvePoseWithPosture(arm, nullptr, target, IkOptions{}, std::nullopt, posture);
  ASSERT_TRUE(plain.ok() && with.ok());
  ASSERT_EQ(with->status, planning::StepStatus::kReached);
  EXPECT_LT((PlanarHand(with->angles, 0.2) - target).norm(), 1e-6);
  const std::vector<double> home = arm.AnglesFromSites(arm.HomeSites());
  const Eigen::VectorXd seed = Eigen::Map<const Eigen::VectorXd>(home.data(), 7);
  const Eigen::VectorXd q = Eigen::Map<const Eigen::VectorXd>(with->angles.data(), 7);
  const Eigen::VectorXd q_plain = Eigen::Map<const Eigen::VectorXd>(plain->angles.data(), 7);
  EXPECT_LT((q - seed).norm(), (q_plain - seed).norm())
      << "closer to the seed than the plain answer";
  Eigen::MatrixXd J(2, 7);
  for (int j = 0; j < 7; ++j) {
    std::vector<double> plus = with->angles, minus = with->angles;
    plus[j] += 1e-6, minus[j] -= 1e-6;
    J.col(j) = (PlanarHand(plus, 0.2) - PlanarHand(minus, 0.2)).head<2>() / 2e-6;
  }
  const Eigen::VectorXd gradient = 2.0 * (q - seed);
  const Eigen::MatrixXd N =
      Eigen::MatrixXd::Identity(7, 7) - J.completeOrthogonalDecomposition().pseudoInverse() * J;
  EXPECT_LT((N * gradient).norm(), 1e-2 * gradient.norm());
}

TEST(ChainPosture, BadPostureNamesTheField) {
  const Arm arm = PlanarArm(7);
  Posture posture{.q = Eigen::VectorXd::Zero(3), .weight = 1.0};
  auto step =
      SolvePoseWithPosture(arm, nullptr, {0.5, 0.5, 0.0}, IkOptions{}, std::nullopt, posture);
  EXPECT_THAT(step.status().message(),
              HasSubstr("posture must hold the arm's 7 joint positions, got 3"));
}

}  // namespace
}  // namespace ikd::ik
