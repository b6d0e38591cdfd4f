// bench/paths' industrial-arm scenarios written out for the robot path tests: a smooth joint
// motion (the witness: joint j = c_j + sum_m a_jm sin(2 pi m t / 2 s + phi_jm), m = 1..3, at
// 100 Hz over 2 s; link capsules of radius 0.05 m) whose tool positions are the request, and
// balls (x, y, z, radius) the witness clears. The checks use the tests' own forward kinematics
// and distances, not the library's.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Geometry>
#include <gtest/gtest.h>

#include "ikd/ik/scene.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"
#include "solver/robot_cases.h"

namespace ikd::robot {

// The test's own clearance of a link capsule (joint k's origin to joint k+1's, the last to the
// tool) from a ball: point-to-segment distance less both radii.
inline double BallClearance(const ChainSpec& spec, const Eigen::VectorXd& q, int link,
                            const Eigen::Vector3d& centre, double ball_radius,
                            double link_radius) {
  std::vector<Eigen::Vector3d> origins;
  Eigen::Isometry3d X = spec.X_WB;
  for (size_t k = 0; k < spec.joints.size(); ++k) {
    X = X * spec.joints[k].X_PJ;
    origins.push_back(X.translation());
    X = X * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
  }
  origins.push_back((X * spec.X_FT).translation());
  const Eigen::Vector3d a = origins[link], b = origins[link + 1];
  const double t = std::clamp((centre - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
  return (a + t * (b - a) - centre).norm() - ball_radius - link_radius;
}

struct WitnessCase {
  std::vector<std::array<double, 7>> witness;  // per joint: c, a_1..a_3, phi_1..phi_3
  std::vector<Eigen::Vector4d> balls;
  ChainSpec spec = presets::Ur5();
};

// A WitnessCase made ready: the arm with its link radii, the scene, the witness sampled, its
// tool positions as position targets.
struct WitnessScenario {
  ChainSpec spec;
  std::optional<Robot> robot;
  std::optional<ik::Scene> scene;
  std::vector<Eigen::Vector4d> balls;
  std::vector<Eigen::VectorXd> witness;
  std::vector<ToolTarget> targets;
  std::vector<double> times;

  // The least clearance of q's link capsules from the balls (+inf without balls).
  double Clearance(const Eigen::VectorXd& q) const {
    double least = std::numeric_limits<double>::infinity();
    for (int link = 0; link < q.size(); ++link) {
      for (const Eigen::Vector4d& b : balls) {
        least = std::min(least, BallClearance(spec, q, link, b.head<3>(), b[3], 0.05));
      }
    }
    return least;
  }
};

inline WitnessScenario MakeWitnessScenario(const WitnessCase& c) {
  WitnessScenario s;
  s.spec = c.spec;
  s.balls = c.balls;
  const int n = static_cast<int>(c.witness.size());
  EXPECT_EQ(n, NumMovingJoints(s.spec));
  s.spec.link_radii.assign(n, 0.05);
  auto robot = Robot::Create(s.spec);
  EXPECT_TRUE(robot.ok()) << robot.status();
  if (robot.ok()) s.robot.emplace(*std::move(robot));
  std::vector<ik::Obstacle> obstacles;
  for (const Eigen::Vector4d& b : c.balls) {
    obstacles.push_back({"o" + std::to_string(obstacles.size()), ik::Sphere{b.head<3>(), b[3]}});
  }
  auto scene = ik::Scene::Create(obstacles);
  EXPECT_TRUE(scene.ok()) << scene.status();
  if (scene.ok()) s.scene.emplace(*std::move(scene));
  for (int k = 0; k <= 200; ++k) {
    const double t = 0.01 * k;
    Eigen::VectorXd q(n);
    for (int j = 0; j < n; ++j) {
      q[j] = c.witness[j][0];
      for (int m = 0; m < 3; ++m) {
        q[j] += c.witness[j][1 + m] *
                std::sin(std::numbers::pi * (m + 1) * t + c.witness[j][4 + m]);
      }
    }
    s.witness.push_back(q);
    s.targets.push_back(*ToolTarget::Position(ToolFrame(s.spec, q).translation()));
    s.times.push_back(t);
  }
  return s;
}

// The fastest joint of a path over its declared velocity limit (differences between samples).
inline double TopSpeedRatio(const ChainSpec& spec, const std::vector<Eigen::VectorXd>& q,
                            const std::vector<double>& times) {
  double top = 0.0;
  for (size_t k = 1; k < q.size(); ++k) {
    for (int j = 0; j < q[k].size(); ++j) {
      const double speed = std::abs(q[k][j] - q[k - 1][j]) / (times[k] - times[k - 1]);
      top = std::max(top, speed / spec.joints[j].limits->max_velocity);
    }
  }
  return top;
}

inline std::vector<Eigen::VectorXd> JointValues(const std::vector<RobotIkResult>& samples) {
  std::vector<Eigen::VectorXd> q;
  for (const RobotIkResult& sample : samples) q.push_back(sample.q);
  return q;
}

// Every sample of `samples` clear of the balls, its tool on the witness's within 1e-9 m and
// inside the joint limits; with `rates`, also within the velocity and acceleration limits.
inline void ExpectOnTheWitnessToolPath(const WitnessScenario& s,
                                       const std::vector<RobotIkResult>& samples, bool rates) {
  ASSERT_EQ(samples.size(), s.times.size());
  for (size_t k = 0; k < samples.size(); ++k) {
    const Eigen::VectorXd& q = samples[k].q;
    EXPECT_GE(s.Clearance(q), 0.0) << "sample " << k;
    EXPECT_LT((ToolFrame(s.spec, q).translation() - ToolFrame(s.spec, s.witness[k]).translation())
                  .norm(),
              1e-9)
        << "sample " << k;
    for (int j = 0; j < q.size(); ++j) {
      const JointLimits& limits = *s.spec.joints[j].limits;
      EXPECT_GE(q[j], limits.lower) << k << " " << j;
      EXPECT_LE(q[j], limits.upper) << k << " " << j;
      if (!rates || k == 0) continue;
      const double dt = s.times[k] - s.times[k - 1];
      const double speed = std::abs(q[j] - samples[k - 1].q[j]) / dt;
      EXPECT_LE(speed, limits.max_velocity * (1 + 1e-9)) << k << " " << j;
      if (k + 1 == s.times.size()) continue;
      const double acceleration =
          std::abs(samples[k + 1].q[j] - 2.0 * q[j] + samples[k - 1].q[j]) / (dt * dt);
      EXPECT_LE(acceleration, limits.max_acceleration * (1 + 1e-6)) << k << " " << j;
    }
  }
}

}  // namespace ikd::robot
