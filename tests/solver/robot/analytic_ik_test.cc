// Closed-form IK (ikd/robot/analytic_ik.h) checked from outside: random joint vectors within the
// limits go through the tests' own forward kinematics (robot_cases.h's URDF composition); every
// branch returned must reproduce that pose within 1e-10 m and 1e-10 rad, the source vector must
// be among the branches, and a generic UR5 pose must have its 8.
#include "ikd/robot/analytic_ik.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/robot/presets.h"
#include "ikd/robot/robot_branches.h"
#include "solver/robot/robot_cases.h"

namespace ikd::robot {
namespace {

constexpr double kPi = std::numbers::pi;

Eigen::VectorXd Draw(const ChainSpec& spec, std::mt19937_64& rng) {
  Eigen::VectorXd q(spec.joints.size());
  for (int j = 0; j < q.size(); ++j) {
    const JointLimits& l = *spec.joints[j].limits;
    // Within one turn: the copy nearest the source is the one Solve returns.
    q[j] = std::uniform_real_distribution<double>(std::max(l.lower, -kPi),
                                                  std::min(l.upper, kPi))(rng);
  }
  return q;
}

// Position and rotation errors of q's tool frame against X, by the tests' forward kinematics.
std::pair<double, double> Miss(const ChainSpec& spec, const Eigen::VectorXd& q,
                               const Eigen::Isometry3d& X) {
  const Eigen::Isometry3d Y = ToolFrame(spec, q);
  return {(Y.translation() - X.translation()).norm(),
          Eigen::AngleAxisd(Y.linear().transpose() * X.linear()).angle()};
}

bool WithinLimits(const ChainSpec& spec, const Eigen::VectorXd& q) {
  for (int j = 0; j < q.size(); ++j) {
    const JointLimits& l = *spec.joints[j].limits;
    if (q[j] < l.lower - 1e-12 || q[j] > l.upper + 1e-12) return false;
  }
  return true;
}

// Draws `poses` configurations, solves their tool poses (the locked joint at the source's
// value) and checks every branch from outside; returns how many branches each pose had.
std::vector<int> CheckBranches(const ChainSpec& spec, const AnalyticIk& ik, int poses) {
  std::mt19937_64 rng(7);
  std::vector<int> counts;
  for (int i = 0; i < poses; ++i) {
    const Eigen::VectorXd source = Draw(spec, rng);
    const Eigen::Isometry3d X = ToolFrame(spec, source);
    const double locked = ik.locked_joint() >= 0 ? source[ik.locked_joint()] : 0.0;
    const std::vector<AnalyticSolution> all = ik.Solve(X, locked, &source);
    bool found_source = false;
    for (const AnalyticSolution& s : all) {
      const auto [position, rotation] = Miss(spec, s.q, X);
      EXPECT_LT(position, 1e-10) << spec.name << " pose " << i << " branch " << s.branch;
      EXPECT_LT(rotation, 1e-10) << spec.name << " pose " << i << " branch " << s.branch;
      EXPECT_TRUE(WithinLimits(spec, s.q)) << spec.name << " pose " << i;
      found_source = found_source || (s.q - source).cwiseAbs().maxCoeff() < 1e-7;
    }
    EXPECT_TRUE(found_source) << spec.name << " pose " << i << ": " << source.transpose();
    counts.push_back(static_cast<int>(all.size()));
  }
  return counts;
}

TEST(AnalyticIk, Ur5HasEveryBranchOfEveryPose) {
  const ChainSpec spec = presets::Ur5();
  auto ik = AnalyticIk::Create(spec);
  ASSERT_TRUE(ik.ok()) << ik.status();
  EXPECT_EQ(ik->family(), AnalyticFamily::kThreeParallel);
  EXPECT_LT(ik->geometry_error(), 1e-12);
  int eight = 0;
  for (int count : CheckBranches(spec, *ik, 300)) {
    EXPECT_GE(count, 2);  // the source and its wrist flip
    EXPECT_LE(count, 8);
    eight += count == 8;
  }
  EXPECT_GT(eight, 100);  // most random poses have all 8 (the rest lose a shoulder's elbows)
}

// Every solution the numeric branch search finds (an independent method: continuation from 128
// starts, each answer checked by forward kinematics) is among the closed form's branches.
TEST(AnalyticIk, NoBranchTheNumericSearchFindsIsMissing) {
  const ChainSpec spec = presets::Ur5();
  auto ik = AnalyticIk::Create(spec);
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(ik.ok() && robot.ok());
  std::mt19937_64 rng(11);
  for (int i = 0; i < 12; ++i) {
    const Eigen::VectorXd source = Draw(spec, rng);
    const Eigen::Isometry3d X = ToolFrame(spec, source);
    auto target = ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()));
    ASSERT_TRUE(target.ok());
    auto numeric = SolveBranches(*robot, *target, source, {}, {.max_solutions = 16});
    ASSERT_TRUE(numeric.ok());
    const std::vector<AnalyticSolution> closed = ik->Solve(X);
    for (const RobotIkResult& found : *numeric) {
      if (Miss(spec, found.q, X).first > 1e-6) continue;
      const bool listed = std::any_of(closed.begin(), closed.end(), [&](const AnalyticSolution& s) {
        return BranchDistance(s.q, found.q) < 1e-4;
      });
      EXPECT_TRUE(listed) << "pose " << i << ": numeric branch " << found.q.transpose();
    }
    EXPECT_GE(closed.size(), numeric->size()) << "pose " << i;
  }
}

TEST(AnalyticIk, Irb120SolvesAsASphericalWrist) {
  const ChainSpec spec = presets::Irb120();
  auto ik = AnalyticIk::Create(spec);
  ASSERT_TRUE(ik.ok()) << ik.status();
  EXPECT_EQ(ik->family(), AnalyticFamily::kSphericalWristElbow);
  EXPECT_FALSE(ik->reversed());
  for (int count : CheckBranches(spec, *ik, 300)) {
    EXPECT_GE(count, 1);
    EXPECT_LE(count, 16);  // 8 branches; joint 6 (+-400 degrees) may hold two turns' copies
  }
}

TEST(AnalyticIk, SevenJointArmsSolveWithOneJointLocked) {
  auto iiwa = AnalyticIk::Create(presets::Iiwa14());
  ASSERT_TRUE(iiwa.ok()) << iiwa.status();
  EXPECT_EQ(iiwa->locked_joint(), 2);  // joint 3: spherical shoulder and wrist remain
  EXPECT_EQ(iiwa->family(), AnalyticFamily::kSphericalWristShoulder);
  CheckBranches(presets::Iiwa14(), *iiwa, 200);

  auto panda = AnalyticIk::Create(presets::Panda());
  ASSERT_TRUE(panda.ok()) << panda.status();
  EXPECT_EQ(panda->locked_joint(), 6);  // joint 7, the arm read from the tool back
  EXPECT_TRUE(panda->reversed());
  CheckBranches(presets::Panda(), *panda, 200);
}

// FirstByDistance checks only the branches it hands over, in the order of their unchecked
// values: what it takes must still be on the pose (the tests' forward kinematics), within the
// limits, taken by the predicate, and no farther from the seed (the tests' own distance) than
// any solution of the whole sweep that the predicate takes.
TEST(AnalyticIk, FirstByDistanceIsTheNearestSolutionTaken) {
  for (const ChainSpec& spec : {presets::Ur5(), presets::Panda(), presets::Iiwa14()}) {
    auto ik = AnalyticIk::Create(spec);
    ASSERT_TRUE(ik.ok()) << ik.status();
    std::mt19937_64 rng(11);
    int taken = 0;
    for (int i = 0; i < 40; ++i) {
      const Eigen::VectorXd source = Draw(spec, rng), seed = Draw(spec, rng);
      const Eigen::Isometry3d X = ToolFrame(spec, source);
      // Any rule will do; this one refuses about half of the solutions.
      const auto takes = [&](const Eigen::VectorXd& q) { return q[0] >= seed[0]; };
      int handed = 0;
      const std::optional<AnalyticSolution> first = ik->FirstByDistance(
          X, seed, 16, [&](const AnalyticSolution& s) { return ++handed, takes(s.q); });
      double least = std::numeric_limits<double>::infinity();
      for (const AnalyticSolution& s : ik->SolveByDistance(X, seed, 16)) {
        if (takes(s.q)) least = std::min(least, (s.q - seed).squaredNorm());
      }
      if (!first) {
        EXPECT_EQ(least, std::numeric_limits<double>::infinity()) << spec.name << " pose " << i;
        continue;
      }
      ++taken;
      const auto [position, rotation] = Miss(spec, first->q, X);
      EXPECT_LT(position, 1e-10) << spec.name << " pose " << i;
      EXPECT_LT(rotation, 1e-10) << spec.name << " pose " << i;
      EXPECT_TRUE(WithinLimits(spec, first->q)) << spec.name << " pose " << i;
      EXPECT_TRUE(takes(first->q)) << spec.name << " pose " << i;
      EXPECT_LE((first->q - seed).squaredNorm(), least + 1e-9) << spec.name << " pose " << i;
      EXPECT_GE(handed, 1);
      // Its branch number is the one Solve gives the same solution (a 7R arm's wrists are made
      // lazily by FirstByDistance, at once by Solve).
      const double locked = ik->locked_joint() >= 0 ? first->q[ik->locked_joint()] : 0.0;
      bool numbered_alike = false;
      for (const AnalyticSolution& s : ik->Solve(X, locked, &seed)) {
        numbered_alike = numbered_alike || ((s.q - first->q).cwiseAbs().maxCoeff() < 1e-9 &&
                                            s.branch == first->branch);
      }
      EXPECT_TRUE(numbered_alike) << spec.name << " pose " << i;
    }
    EXPECT_GT(taken, 10) << spec.name;  // the rule does not refuse everything
  }
}

// FirstByDistanceAt solves at the values it is given and no other: what it takes has the locked
// joint at one of them and is no farther from the seed than any branch Solve gives there; a
// value outside the joint's limits gives nothing.
TEST(AnalyticIk, FirstByDistanceAtSolvesAtTheGivenValuesOnly) {
  for (const ChainSpec& spec : {presets::Panda(), presets::Iiwa14()}) {
    auto ik = AnalyticIk::Create(spec);
    ASSERT_TRUE(ik.ok()) << ik.status();
    const int locked = ik->locked_joint();
    const JointLimits& range = *spec.joints[locked].limits;
    std::mt19937_64 rng(13);
    const auto take_any = [](const AnalyticSolution&) { return true; };
    for (int i = 0; i < 20; ++i) {
      const Eigen::VectorXd source = Draw(spec, rng), seed = Draw(spec, rng);
      const Eigen::Isometry3d X = ToolFrame(spec, source);
      const double values[] = {source[locked], 0.5 * (range.lower + range.upper)};
      const std::optional<AnalyticSolution> first =
          ik->FirstByDistanceAt(X, seed, values, take_any);
      ASSERT_TRUE(first.has_value()) << spec.name << " pose " << i;  // the source is one
      EXPECT_TRUE(first->q[locked] == values[0] || first->q[locked] == values[1]);
      const auto [position, rotation] = Miss(spec, first->q, X);
      EXPECT_LT(position, 1e-10) << spec.name << " pose " << i;
      EXPECT_LT(rotation, 1e-10) << spec.name << " pose " << i;
      for (const double value : values) {
        for (const AnalyticSolution& s : ik->Solve(X, value, &seed)) {
          EXPECT_LE((first->q - seed).squaredNorm(), (s.q - seed).squaredNorm() + 1e-9)
              << spec.name << " pose " << i;
        }
      }
      const double outside = range.upper + 0.1;
      EXPECT_FALSE(ik->FirstByDistanceAt(X, seed, {&outside, 1}, take_any).has_value());
    }
  }
}

// ContinuedLockedValue follows the joints' least-norm motion: for a small move of the tool it
// is the seed's value plus the locked joint's share of J^+ e, with J the tests' own Jacobian
// (central differences of their forward kinematics, rotations as world-frame rotation vectors)
// and e the pose error; no move leaves the value as it is; a 6R arm's is 0.
TEST(AnalyticIk, ContinuedLockedValueIsTheLeastNormMotionToFirstOrder) {
  for (const ChainSpec& spec : {presets::Panda(), presets::Iiwa14()}) {
    auto ik = AnalyticIk::Create(spec);
    ASSERT_TRUE(ik.ok()) << ik.status();
    const int locked = ik->locked_joint();
    const int n = static_cast<int>(spec.joints.size());
    // The rotation vector (world frame) taking frame A's orientation to B's.
    const auto turn = [](const Eigen::Isometry3d& A, const Eigen::Isometry3d& B) {
      const Eigen::AngleAxisd aa(B.linear() * A.linear().transpose());
      return Eigen::Vector3d(aa.angle() * aa.axis());
    };
    std::mt19937_64 rng(29);
    std::uniform_real_distribution<double> tiny(-1e-3, 1e-3);
    int informative = 0;
    for (int i = 0; i < 20; ++i) {
      Eigen::VectorXd seed = Draw(spec, rng);
      const Eigen::Isometry3d X0 = ToolFrame(spec, seed);
      EXPECT_NEAR(ik->ContinuedLockedValue(X0, seed), seed[locked], 1e-12) << spec.name;
      Eigen::VectorXd made = seed;
      for (int k = 0; k < n; ++k) made[k] += tiny(rng);
      const Eigen::Isometry3d X = ToolFrame(spec, made);
      Eigen::MatrixXd J(6, n);
      for (int k = 0; k < n; ++k) {
        constexpr double h = 1e-6;
        Eigen::VectorXd plus = seed, minus = seed;
        plus[k] += h, minus[k] -= h;
        const Eigen::Isometry3d P = ToolFrame(spec, plus), M = ToolFrame(spec, minus);
        J.block<3, 1>(0, k) = (P.translation() - M.translation()) / (2 * h);
        J.block<3, 1>(3, k) = turn(M, P) / (2 * h);
      }
      Eigen::Matrix<double, 6, 1> e;
      e << X.translation() - X0.translation(), turn(X0, X);
      const Eigen::VectorXd least = J.completeOrthogonalDecomposition().solve(e);
      const double expected = seed[locked] + least[locked];
      const double got = ik->ContinuedLockedValue(X, seed);
      if (std::abs(least[locked]) > 1e-5) ++informative;
      EXPECT_NEAR(got, expected, 0.05 * std::abs(least[locked]) + 1e-7)
          << spec.name << " pose " << i << ": moved " << least[locked];
    }
    EXPECT_GT(informative, 10) << spec.name;
  }
  auto ur5 = AnalyticIk::Create(presets::Ur5());
  ASSERT_TRUE(ur5.ok());
  EXPECT_EQ(ur5->ContinuedLockedValue(ToolFrame(presets::Ur5(), Eigen::VectorXd::Zero(6)),
                                      Eigen::VectorXd::Zero(6)),
            0.0);
}

TEST(AnalyticIk, EveryTurnEnumeratesTheFullTurnCopies) {
  const ChainSpec spec = presets::Ur5();
  auto ik = AnalyticIk::Create(spec, {.every_turn = true});
  ASSERT_TRUE(ik.ok());
  Eigen::VectorXd q(6);
  q << 0.3, -1.1, 1.4, -1.9, -1.4, 0.5;
  const std::vector<AnalyticSolution> all = ik->Solve(ToolFrame(spec, q));
  // Each joint value in (-2 pi, 2 pi) has exactly two copies there: 8 branches x 2^6.
  EXPECT_EQ(all.size(), 8u * 64u);
  for (const AnalyticSolution& s : all) {
    EXPECT_LT(Miss(spec, s.q, ToolFrame(spec, q)).first, 1e-10);
    EXPECT_TRUE(WithinLimits(spec, s.q));
  }
}

TEST(AnalyticIk, RoundOffInTheAxesIsToleratedAndPolishedAway) {
  ChainSpec spec = presets::Ur5();
  // A URDF's printed angles: axis 3 tilted by 3e-8 rad.
  spec.joints[2].X_PJ.rotate(Eigen::AngleAxisd(3e-8, Eigen::Vector3d::UnitX()));
  auto ik = AnalyticIk::Create(spec);
  ASSERT_TRUE(ik.ok()) << ik.status();
  EXPECT_GT(ik->geometry_error(), 1e-8);
  EXPECT_LT(ik->geometry_error(), 1e-7);
  const std::vector<int> tilted = CheckBranches(spec, *ik, 50);
  auto exact = AnalyticIk::Create(presets::Ur5());
  ASSERT_TRUE(exact.ok());
  // The same poses' branch counts as the exact arm's: nothing lost to the tilt.
  EXPECT_EQ(tilted, CheckBranches(presets::Ur5(), *exact, 50));
}

TEST(AnalyticIk, AlignedWristAxesGiveAFlaggedRepresentative) {
  const ChainSpec spec = presets::Ur5();
  auto ik = AnalyticIk::Create(spec);
  ASSERT_TRUE(ik.ok());
  Eigen::VectorXd q(6);
  q << 0.4, -1.2, 1.3, -1.6, 0.0, 0.7;  // q5 = 0: axes 4 and 6 line up
  const Eigen::Isometry3d X = ToolFrame(spec, q);
  const std::vector<AnalyticSolution> all = ik->Solve(X);
  ASSERT_FALSE(all.empty());
  bool flagged = false;
  for (const AnalyticSolution& s : all) {
    EXPECT_LT(Miss(spec, s.q, X).first, 1e-10);
    EXPECT_LT(Miss(spec, s.q, X).second, 1e-10);
    flagged = flagged || s.singular;
  }
  EXPECT_TRUE(flagged);
}

TEST(AnalyticIk, AnUnreachablePoseHasNoBranch) {
  auto ik = AnalyticIk::Create(presets::Ur5());
  ASSERT_TRUE(ik.ok());
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.translation() = Eigen::Vector3d(2.0, 0.0, 0.0);  // the UR5 reaches 0.85 m
  EXPECT_TRUE(ik->Solve(X).empty());
  // A locked value outside its joint's limits: none either.
  auto panda = AnalyticIk::Create(presets::Panda());
  ASSERT_TRUE(panda.ok());
  EXPECT_TRUE(panda->Solve(ToolFrame(presets::Panda(), Eigen::VectorXd::Zero(7)), 3.0).empty());
}

TEST(AnalyticIk, AnArmInNoFamilyIsRefusedWithTheFailedConditions) {
  ChainSpec spec = presets::Ur5();
  spec.joints[2].X_PJ.rotate(Eigen::AngleAxisd(0.2, Eigen::Vector3d::UnitX()));
  const auto ik = AnalyticIk::Create(spec);
  ASSERT_FALSE(ik.ok());
  EXPECT_EQ(ik.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ik.status().message(),
              testing::HasSubstr("three parallel axes: axes 2 and 3 not parallel"));
  EXPECT_THAT(ik.status().message(), testing::HasSubstr("spherical wrist"));

  const auto locked = AnalyticIk::Create(presets::Ur5(), {.locked_joint = 2});
  ASSERT_FALSE(locked.ok());
  EXPECT_THAT(locked.status().message(), testing::HasSubstr("locked_joint"));
  const auto tolerance = AnalyticIk::Create(presets::Ur5(), {.geometry_tolerance = 0.0});
  EXPECT_THAT(tolerance.status().message(), testing::HasSubstr("geometry_tolerance"));
}

}  // namespace
}  // namespace ikd::robot
