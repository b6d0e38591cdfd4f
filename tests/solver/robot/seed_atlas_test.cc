// The seed atlas of single-pose IK: a deterministic sample inside the inset joint limits whose
// stored tool poses are the robot's forward kinematics, a nearest-entry search that agrees with
// brute force over the exact distance, and one shared, lazily built atlas per robot.
#include "ikd/robot/seed_atlas.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <Eigen/SVD>

#include <gtest/gtest.h>

#include "ikd/robot/presets.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {
namespace {

Robot MakeRobot(ChainSpec (*make)()) { return *Robot::Create(make()); }

Eigen::Quaterniond RandomRotation(std::mt19937_64& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  return Eigen::Quaterniond(g(rng), g(rng), g(rng), g(rng)).normalized();
}

// q lies kLimitInset of each joint's range inside the robot's limits (read from its spec).
void ExpectInsideInsetLimits(const Robot& robot, const Eigen::VectorXd& q) {
  for (int j = 0; j < q.size(); ++j) {
    const auto& l = *robot.spec().joints[j].limits;
    const double inset = SeedAtlas::kLimitInset * (l.upper - l.lower);
    EXPECT_GE(q[j], l.lower + inset) << j;
    EXPECT_LE(q[j], l.upper - inset) << j;
  }
}

// Same robot and seed: the same bytes; every configuration kLimitInset of its range inside
// the limits.
TEST(SeedAtlasTest, BuildIsDeterministicAndInsideTheInsetLimits) {
  const Robot robot = MakeRobot(presets::Panda);
  const SeedAtlas a = SeedAtlas::Build(robot, 512), b = SeedAtlas::Build(robot, 512);
  ASSERT_EQ(a.size(), 512);
  for (int k = 0; k < a.size(); ++k) {
    const Eigen::VectorXd q = a.configuration(k);
    ASSERT_EQ(q, b.configuration(k)) << k;
    ExpectInsideInsetLimits(robot, q);
  }
  const SeedAtlas other = SeedAtlas::Build(robot, 512, SeedAtlas::kDefaultSeed + 1);
  EXPECT_NE(other.configuration(0), a.configuration(0));
}

// Smallest singular value of the tool Jacobian with its angular rows scaled by L (by SVD, not
// the atlas's eigenvalues).
double ScaledSigmaMin(const Robot& robot, const Eigen::VectorXd& q, double L) {
  Eigen::MatrixXd J = ToolJacobian(robot.spec(), q);
  J.bottomRows<3>() *= L;
  return Eigen::JacobiSVD<Eigen::MatrixXd>(J).singularValues().minCoeff();
}

// The atlas's bound on ScaledSigmaMin: kMinSingularValueFraction of the reach, which is
// L / kRotationReachFraction.
double SingularValueBound(double L) {
  return SeedAtlas::kMinSingularValueFraction * L / SeedAtlas::kRotationReachFraction;
}

// A configuration drawn uniformly from the atlas's sampling ranges, without any redraw.
Eigen::VectorXd PlainDraw(const Robot& robot, std::mt19937_64& rng) {
  Eigen::VectorXd q(robot.num_joints());
  for (int j = 0; j < q.size(); ++j) {
    const auto [lo, hi] = SeedAtlas::SamplingRange(robot, j, SeedAtlas::kLimitInset);
    q[j] = std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  return q;
}

// The atlas keeps away from singularities: its entries' smallest singular value reaches
// kMinSingularValueFraction of the reach (but for the rare entry whose redraws all failed),
// where a plain uniform draw falls below it a sizeable share of the time.
TEST(SeedAtlasTest, EntriesAreAwayFromSingularities) {
  for (auto make : {presets::Ur5, presets::Panda}) {
    const Robot robot = MakeRobot(make);
    const SeedAtlas atlas = SeedAtlas::Build(robot, 1024);
    const double L = atlas.rotation_length();
    const double bound = SingularValueBound(L);
    int below = 0, plain_below = 0;
    std::mt19937_64 rng(3);
    for (int k = 0; k < atlas.size(); ++k) {
      below += ScaledSigmaMin(robot, atlas.configuration(k), L) < bound * (1 - 1e-9);
      plain_below += ScaledSigmaMin(robot, PlainDraw(robot, rng), L) < bound;
    }
    EXPECT_LE(below, 2) << robot.spec().name;
    EXPECT_GE(plain_below, 50) << robot.spec().name;
  }
}

// The presets' atlases never reach the redraw budget, so the budget leaves them as they were
// drawn without it (SeedAtlasOf builds the default size).
TEST(SeedAtlasTest, PresetsStayWithinTheRedrawBudget) {
  for (auto make : {presets::Ur5, presets::Panda, presets::Iiwa14, presets::Irb120}) {
    const SeedAtlas atlas = SeedAtlas::Build(MakeRobot(make));
    EXPECT_LT(atlas.redraws(), SeedAtlas::kRedrawsPerEntry * atlas.size()) << make().name;
  }
}

// A UR5 holding its tool 5 m out is ill conditioned by the atlas's measure almost everywhere
// (most plain draws fall below the bound): its redraws stop at the budget instead of
// kMaxRedraws per entry, and every entry is still a configuration inside the inset limits.
TEST(SeedAtlasTest, RedrawsStopAtTheBudget) {
  ChainSpec spec = presets::Ur5();
  spec.X_FT.translation() = Eigen::Vector3d(0.0, 0.0, 5.0);
  const Robot robot = *Robot::Create(spec);
  const int size = 512;
  const SeedAtlas atlas = SeedAtlas::Build(robot, size);
  EXPECT_EQ(atlas.redraws(), SeedAtlas::kRedrawsPerEntry * size);
  const double L = atlas.rotation_length();
  int plain_below = 0;
  std::mt19937_64 rng(5);
  for (int k = 0; k < size; ++k) {
    plain_below += ScaledSigmaMin(robot, PlainDraw(robot, rng), L) < SingularValueBound(L);
  }
  // Unbudgeted, each such entry alone would draw up to kMaxRedraws more.
  EXPECT_GT(plain_below, size / 2);
  for (int k = 0; k < atlas.size(); ++k) ExpectInsideInsetLimits(robot, atlas.configuration(k));
}

// Reference: ToolPose (forward kinematics) of each configuration. The target at entry k's own
// tool pose finds entry k first at distance 0 (to rounding), for pose and position targets.
TEST(SeedAtlasTest, StoredToolPosesAreTheForwardKinematics) {
  const Robot robot = MakeRobot(presets::Ur5);
  const SeedAtlas atlas = SeedAtlas::Build(robot, 256);
  for (int k : {0, 17, 128, 255}) {
    const Eigen::Isometry3d X = ToolPose(robot.spec(), atlas.configuration(k));
    const auto pose = atlas.Nearest(X.translation(), Eigen::Quaterniond(X.linear()), 1);
    ASSERT_EQ(pose.size(), 1u);
    EXPECT_EQ(pose[0].index, k);
    EXPECT_LT(pose[0].squared_distance, 1e-14);  // 1 - cos^2 rounds at 1e-16
    const auto position = atlas.Nearest(X.translation(), std::nullopt, 1);
    EXPECT_EQ(position[0].index, k);
  }
}

// The test's own pose distance, in a formulation of its own: |p - p_T|^2 plus L^2 times
// ||R - R_T||_F^2 / 2 (the chordal distance of the rotation matrices: ||R - R_T||_F^2 =
// 4 - 4 cos theta = 8 sin^2(theta / 2), so this is the documented 4 L^2 sin^2(theta / 2)
// without quaternions, sign choices or the atlas's code); position targets count the
// position alone.
double OwnSquaredDistance(const Eigen::Isometry3d& X, const Eigen::Vector3d& p,
                          const std::optional<Eigen::Quaterniond>& q, double L) {
  const double position = (X.translation() - p).squaredNorm();
  if (!q) return position;
  const Eigen::Matrix3d R_target = q->normalized().toRotationMatrix();
  return position + L * L * (X.linear() - R_target).squaredNorm() / 2.0;
}

// Independent check of the search: every entry's distance from its configuration's forward
// kinematics by the test's own OwnSquaredDistance, sorted; Nearest returns the same first
// entries, its reported distances equal to the own ones (1e-12 relative: the formulations and
// the vectorized pass round differently).
TEST(SeedAtlasTest, NearestAgreesWithBruteForce) {
  const Robot robot = MakeRobot(presets::Iiwa14);
  const SeedAtlas atlas = SeedAtlas::Build(robot, 2000);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-0.8, 0.8);
  std::normal_distribution<double> noise(0.0, 0.05);
  for (int trial = 0; trial < 40; ++trial) {
    // Half in the box around the arm (some off the atlas's grid: the full scan), half next to
    // reachable tool positions (inside the grid: the shell search).
    Eigen::Vector3d p(u(rng), u(rng), 0.5 + u(rng));
    if (trial >= 20) {
      Eigen::VectorXd q(robot.num_joints());
      for (int j = 0; j < q.size(); ++j) q[j] = u(rng) * 2.0;
      p = ToolPose(robot.spec(), q).translation() +
          Eigen::Vector3d(noise(rng), noise(rng), noise(rng));
    }
    const std::optional<Eigen::Quaterniond> q =
        trial % 2 == 0 ? std::optional<Eigen::Quaterniond>(RandomRotation(rng)) : std::nullopt;
    std::vector<std::pair<double, int>> all;
    for (int k = 0; k < atlas.size(); ++k) {
      all.push_back({OwnSquaredDistance(ToolPose(robot.spec(), atlas.configuration(k)), p, q,
                                        atlas.rotation_length()),
                     k});
    }
    std::sort(all.begin(), all.end());
    const auto nearest = atlas.Nearest(p, q, 5);
    ASSERT_EQ(nearest.size(), 5u);
    for (int m = 0; m < 5; ++m) {
      EXPECT_NEAR(nearest[m].squared_distance, all[m].first, 1e-12 * (1.0 + all[m].first)) << m;
      if (m > 0) {
        EXPECT_LE(nearest[m - 1].squared_distance, nearest[m].squared_distance);
      }
    }
    for (int m = 0; m < 5; ++m) EXPECT_EQ(nearest[m].index, all[m].second) << trial << " " << m;
  }
}

// A rotation and its negated quaternion are the same orientation; a quarter turn about any
// axis counts 4 sin^2(pi/4) rotation_length^2 = 2 rotation_length^2.
TEST(SeedAtlasTest, RotationTermIsSignFreeAndMonotone) {
  const Robot robot = MakeRobot(presets::Ur5);
  const SeedAtlas atlas = SeedAtlas::Build(robot, 64);
  EXPECT_GT(atlas.rotation_length(), 0.0);
  const Eigen::Isometry3d X = ToolPose(robot.spec(), atlas.configuration(3));
  const Eigen::Quaterniond q(X.linear());
  const Eigen::Quaterniond minus(-q.w(), -q.x(), -q.y(), -q.z());
  EXPECT_NEAR(atlas.SquaredDistance(X, X.translation(), minus), 0.0, 1e-14);
  const Eigen::Quaterniond quarter =
      q * Eigen::Quaterniond(Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitY()));
  const double L = atlas.rotation_length();
  EXPECT_NEAR(atlas.SquaredDistance(X, X.translation(), quarter), 2.0 * L * L, 1e-12);
  const Eigen::Quaterniond half =
      q * Eigen::Quaterniond(Eigen::AngleAxisd(M_PI, Eigen::Vector3d::UnitY()));
  EXPECT_NEAR(atlas.SquaredDistance(X, X.translation(), half), 4.0 * L * L, 1e-12);
}

// Limits of +-1e308 rad are valid input (finite, ordered) but their width overflows: the draw
// keeps to 8 pi around their middle, so every configuration and tool pose stays finite, and a
// solve from the atlas reaches a reachable target.
TEST(SeedAtlasTest, HugeLimitsAreDrawnFromAFiniteRange) {
  ChainSpec spec = presets::Ur5();
  spec.joints[0].limits = JointLimits{-1e308, 1e308};
  const Robot robot = *Robot::Create(spec);
  const auto [lo, hi] = SeedAtlas::SamplingRange(robot, 0, SeedAtlas::kLimitInset);
  EXPECT_NEAR(hi - lo, 0.9 * 8.0 * M_PI, 1e-9);
  const SeedAtlas& atlas = SeedAtlasOf(robot);
  for (int k = 0; k < atlas.size(); ++k) ASSERT_TRUE(atlas.configuration(k).allFinite()) << k;
  const Eigen::Isometry3d X = ToolPose(robot.spec(), atlas.configuration(5));
  const auto nearest = atlas.Nearest(X.translation(), Eigen::Quaterniond(X.linear()), 3);
  ASSERT_EQ(nearest.size(), 3u);
  EXPECT_TRUE(std::isfinite(nearest[2].squared_distance));
  auto target = ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()));
  auto result = SolveRobotIk(robot, *target, robot.MidRange(), RobotIkOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, planning::StepStatus::kReached);
  EXPECT_TRUE(result->q.allFinite());
}

TEST(SeedAtlasTest, CountIsClampedToTheAtlas) {
  const SeedAtlas atlas = SeedAtlas::Build(MakeRobot(presets::Ur5), 10);
  EXPECT_EQ(atlas.Nearest(Eigen::Vector3d::Zero(), std::nullopt, 50).size(), 10u);
  EXPECT_TRUE(atlas.Nearest(Eigen::Vector3d::Zero(), std::nullopt, 0).empty());
  EXPECT_TRUE(atlas.Nearest(Eigen::Vector3d::Zero(), std::nullopt, -3).empty());
}

// The robot's own atlas: built once, on first use, the same object for copies of the robot
// and for threads that ask at the same time.
TEST(SeedAtlasTest, RobotBuildsItsAtlasOnceAndSharesIt) {
  const Robot robot = MakeRobot(presets::Panda);
  const Robot copy = robot;
  std::vector<const SeedAtlas*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] { seen[t] = &SeedAtlasOf(t % 2 == 0 ? robot : copy); });
  }
  for (auto& thread : threads) thread.join();
  for (const SeedAtlas* atlas : seen) EXPECT_EQ(atlas, seen[0]);
  EXPECT_EQ(seen[0]->size(), SeedAtlas::kDefaultSize);
  EXPECT_EQ(seen[0]->configuration(7), SeedAtlas::Build(robot).configuration(7));
}

}  // namespace
}  // namespace ikd::robot
