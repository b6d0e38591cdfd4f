// The industrial path optimizer (robot/path_optimizer.h) on a Panda path whose samples were
// solved one by one from scattered seeds: on target, but jumping about the arm's four redundant
// directions. Checked with the test's own forward kinematics and finite differences.
#include "../solver/robot/path_optimizer.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <Eigen/Geometry>

#include "ikd/robot/presets.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {
namespace {

constexpr double kPeriod = 0.01;  // s between samples
constexpr int kSamples = 101;     // 1 s

// The test's own forward kinematics: the tool centre point of spec at q.
Eigen::Vector3d ToolAt(const ChainSpec& spec, const Eigen::VectorXd& q) {
  Eigen::Isometry3d X = spec.X_WB;
  for (size_t k = 0; k < spec.joints.size(); ++k) {
    X = X * spec.joints[k].X_PJ * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
  }
  return (X * spec.X_FT).translation();
}

// The witness: from the Panda's ready pose every joint swings gently (0.15 rad at most).
Eigen::VectorXd WitnessAt(double t) {
  Eigen::VectorXd q(7);
  q << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785;
  for (int j = 0; j < 7; ++j) q[j] += 0.15 * std::sin(2.0 * t + 0.7 * j);
  return q;
}

// The largest joint acceleration by second differences (rad/s^2) of the joint values q(k).
template <typename JointsAt>
double LargestAcceleration(const JointsAt& q) {
  double largest = 0.0;
  for (int k = 1; k + 1 < kSamples; ++k) {
    const Eigen::VectorXd a = (q(k + 1) - 2.0 * q(k) + q(k - 1)) / (kPeriod * kPeriod);
    largest = std::max(largest, a.cwiseAbs().maxCoeff());
  }
  return largest;
}

double LargestAcceleration(const std::vector<RobotIkResult>& samples) {
  return LargestAcceleration([&](int k) { return samples[k].q; });
}

struct JumpyPath {
  Robot robot;
  std::vector<ToolTarget> targets;
  std::vector<double> times;
  std::vector<RobotIkResult> samples;
};

// Position targets from the witness's tool, each sample solved on its own from the witness's
// joints moved by up to 0.05 rad at random.
JumpyPath MakeJumpyPath() {
  JumpyPath path{*Robot::Create(presets::Panda()), {}, {}, {}};
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> scatter(-0.05, 0.05);
  RobotIkOptions options;
  options.position_tolerance = 1e-9;
  options.starts = SolveStarts::kGivenFirst;  // the seed's own branch
  for (int k = 0; k < kSamples; ++k) {
    const double t = k * kPeriod;
    path.times.push_back(t);
    path.targets.push_back(*ToolTarget::Position(ToolAt(path.robot.spec(), WitnessAt(t))));
    Eigen::VectorXd seed = WitnessAt(t);
    if (k > 0 && k + 1 < kSamples) {
      for (int j = 0; j < 7; ++j) seed[j] += scatter(rng);
    }
    path.samples.push_back(*SolveRobotIk(path.robot, path.targets.back(), seed, options));
  }
  return path;
}

TEST(RobotPathOptimizer, SmoothsAJumpyPathWithEveryToolOnItsTarget) {
  JumpyPath path = MakeJumpyPath();
  for (const RobotIkResult& s : path.samples) {
    ASSERT_EQ(s.status, planning::StepStatus::kReached);
  }
  const std::vector<RobotIkResult> before = path.samples;
  const double jumpy = LargestAcceleration(before);
  ASSERT_GT(jumpy, 1000.0);  // the scattered seeds leave the samples on different postures
  RobotIkOptions options;
  ASSERT_TRUE(internal::OptimizeRobotPath(path.robot, nullptr, path.targets, path.times, options,
                                          path.samples)
                  .ok());
  ASSERT_EQ(path.samples.size(), before.size());
  // The ends stay where they were; every tool on its target; every joint within its limits.
  EXPECT_EQ(path.samples.front().q, before.front().q);
  EXPECT_EQ(path.samples.back().q, before.back().q);
  for (size_t k = 0; k < path.samples.size(); ++k) {
    const Eigen::VectorXd& q = path.samples[k].q;
    EXPECT_LT((ToolAt(path.robot.spec(), q) - path.targets[k].position).norm(), 1e-5) << k;
    for (int j = 0; j < 7; ++j) {
      const JointLimits& limits = *path.robot.spec().joints[j].limits;
      EXPECT_GE(q[j], limits.lower) << k << " joint " << j;
      EXPECT_LE(q[j], limits.upper) << k << " joint " << j;
    }
  }
  // The jumps between postures smoothed out, down to the witness's own accelerations (0.60
  // rad/s^2; the optimized path 0.64, from 1,895).
  const double witness = LargestAcceleration([](int k) { return WitnessAt(k * kPeriod); });
  EXPECT_LT(LargestAcceleration(path.samples), 2.0 * witness) << "before " << jumpy << " rad/s^2";
}

TEST(RobotPathOptimizer, AStopLeavesTheSamplesUntouched) {
  JumpyPath path = MakeJumpyPath();
  const std::vector<RobotIkResult> before = path.samples;
  const absl::Status status =
      internal::OptimizeRobotPath(path.robot, nullptr, path.targets, path.times, RobotIkOptions{},
                                  path.samples, [] { return true; });
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  for (size_t k = 0; k < before.size(); ++k) EXPECT_EQ(path.samples[k].q, before[k].q) << k;
}

}  // namespace
}  // namespace ikd::robot
