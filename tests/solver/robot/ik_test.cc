// Industrial-arm IK by Cartesian continuation: random reachable targets (forward kinematics of
// random configurations inside the limits) reached and verified by independent forward
// kinematics; continuous tool paths without joint jumps; determinism; input errors by field.
#include "ikd/robot/robot_ik.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/robot/presets.h"
#include "solver/robot/robot_cases.h"

namespace ikd::robot {
namespace {

using ::testing::HasSubstr;

Eigen::VectorXd RandomInsideLimits(const Robot& robot, std::mt19937_64& rng) {
  Eigen::VectorXd q(robot.num_joints());
  for (int k = 0; k < q.size(); ++k) {
    const auto& l = *robot.spec().joints[k].limits;
    q[k] = std::uniform_real_distribution<double>(l.lower, l.upper)(rng);
  }
  return q;
}

ToolTarget PoseTarget(const Robot& robot, const Eigen::VectorXd& q) {
  const Eigen::Isometry3d X = ToolPose(robot.spec(), q);
  return *ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()));
}

class RobotIkTest : public ::testing::TestWithParam<RobotCase> {
 protected:
  void SetUp() override {
    auto robot = Robot::Create(GetParam().make());
    ASSERT_TRUE(robot.ok()) << robot.status();
    robot_.emplace(*std::move(robot));
  }
  std::optional<Robot> robot_;
};

// Full-pose targets from forward kinematics of random configurations, seed midway between the
// limits: at least 98% solved here (the benchmark reports the rate on 10,000), and every
// reported success within 1e-5 m / 1e-5 rad by forward kinematics and inside every limit.
TEST_P(RobotIkTest, ReachesRandomPoseTargets) {
  std::mt19937_64 rng(21);
  RobotIkOptions options;
  int solved = 0;
  const int n = 100;
  for (int trial = 0; trial < n; ++trial) {
    const ToolTarget target = PoseTarget(*robot_, RandomInsideLimits(*robot_, rng));
    auto result = SolveRobotIk(*robot_, target, robot_->MidRange(), options);
    ASSERT_TRUE(result.ok()) << result.status();
    if (result->status != planning::StepStatus::kReached) continue;
    ++solved;
    const Eigen::Isometry3d X = ToolPose(robot_->spec(), result->q);
    EXPECT_LE((X.translation() - target.position).norm(), 1e-5);
    EXPECT_LE(
        Eigen::AngleAxisd(X.linear().transpose() * target.orientation->toRotationMatrix()).angle(),
        1e-5);
    EXPECT_LE(robot_->LimitViolation(result->q), 0.0);
  }
  EXPECT_GE(solved, 98) << GetParam().name;
}

TEST_P(RobotIkTest, ReachesRandomPositionTargets) {
  std::mt19937_64 rng(22);
  int solved = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::Vector3d p =
        ToolPose(robot_->spec(), RandomInsideLimits(*robot_, rng)).translation();
    auto result =
        SolveRobotIk(*robot_, *ToolTarget::Position(p), robot_->MidRange(), RobotIkOptions{});
    ASSERT_TRUE(result.ok());
    if (result->status != planning::StepStatus::kReached) continue;
    ++solved;
    EXPECT_LE((ToolPose(robot_->spec(), result->q).translation() - p).norm(), 1e-5);
  }
  EXPECT_GE(solved, 98) << GetParam().name;
}

// A straight tool line at fixed orientation, tracked target by target: every target reached
// (checked by forward kinematics, not only the reported status) and no joint jump: a joint
// turns by at most 0.33 x the tool's step over the arm's spacing per target. Measured maximum
// 0.163 step/spacing (panda; ur5 0.119, iiwa14 0.111): the bound is 2x the largest, so a jump
// to another IK branch or a doubled step shows.
TEST_P(RobotIkTest, FollowsALineWithoutJointJumps) {
  std::mt19937_64 rng(23);
  const Eigen::VectorXd q0 =
      Eigen::Map<const Eigen::VectorXd>(GetParam().ready.data(), robot_->num_joints());
  const Eigen::Isometry3d X0 = ToolPose(robot_->spec(), q0);
  auto tracker = RobotTracker::Create(*robot_, RobotIkOptions{}, q0);
  ASSERT_TRUE(tracker.ok());
  const Eigen::Vector3d direction(0.0, 0.0, -1.0);
  const double step = 0.002;  // m per target, 100 targets
  Eigen::VectorXd previous = q0;
  double worst = 0.0;
  for (int k = 1; k <= 100; ++k) {
    const Eigen::Vector3d p = X0.translation() + k * step * direction;
    const RobotIkResult r = tracker->StepTo(*ToolTarget::Pose(p, Eigen::Quaterniond(X0.linear())));
    ASSERT_EQ(r.status, planning::StepStatus::kReached) << "target " << k;
    const Eigen::Isometry3d X = ToolPose(robot_->spec(), r.q);
    EXPECT_LE((X.translation() - p).norm(), 1e-5) << k;
    EXPECT_LE(Eigen::AngleAxisd(X.linear().transpose() * X0.linear()).angle(), 1e-5) << k;
    const double jump = (r.q - previous).cwiseAbs().maxCoeff();
    worst = std::max(worst, jump);
    EXPECT_LE(jump, 0.33 * step / robot_->spacing()) << k;
    previous = r.q;
  }
  std::printf("%s: max joint jump %.6g rad = %.6g step/spacing\n", GetParam().name, worst,
              worst / (step / robot_->spacing()));
}

// Velocity limits per move: the same 2 cm tool move is within every joint's limit over 1 s and
// beyond it over 1 ms (data-sheet limits of 1.3-3.1 rad/s); the ratio scales as 1 / duration.
TEST_P(RobotIkTest, FlagsMovesFasterThanTheJointVelocityLimits) {
  const Eigen::VectorXd q0 =
      Eigen::Map<const Eigen::VectorXd>(GetParam().ready.data(), robot_->num_joints());
  const Eigen::Isometry3d X0 = ToolPose(robot_->spec(), q0);
  const ToolTarget target = *ToolTarget::Pose(X0.translation() + Eigen::Vector3d(0.02, 0, 0),
                                              Eigen::Quaterniond(X0.linear()));
  auto slow = RobotTracker::Create(*robot_, RobotIkOptions{}, q0);
  auto fast = RobotTracker::Create(*robot_, RobotIkOptions{}, q0);
  ASSERT_TRUE(slow.ok() && fast.ok());
  const RobotIkResult a = slow->StepTo(target, 1.0);
  const RobotIkResult b = fast->StepTo(target, 1e-3);
  EXPECT_EQ(a.status, planning::StepStatus::kReached);
  EXPECT_EQ(b.status, planning::StepStatus::kVelocityLimited);
  EXPECT_GT(a.max_joint_change, 0.0);
  EXPECT_NEAR(b.velocity_ratio, 1000.0 * a.velocity_ratio, 1e-6 * b.velocity_ratio);
  EXPECT_LT((b.q - a.q).cwiseAbs().maxCoeff(), 1e-12);  // the same configuration, only flagged
}

TEST_P(RobotIkTest, SameSeedSameBytes) {
  std::mt19937_64 rng(24);
  const ToolTarget target = PoseTarget(*robot_, RandomInsideLimits(*robot_, rng));
  RobotIkOptions options;
  options.seed = 99;
  auto a = SolveRobotIk(*robot_, target, robot_->MidRange(), options);
  auto b = SolveRobotIk(*robot_, target, robot_->MidRange(), options);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->q.size(), b->q.size());
  EXPECT_EQ(std::memcmp(a->q.data(), b->q.data(), sizeof(double) * a->q.size()), 0);
  EXPECT_EQ(a->restarts, b->restarts);
  // A reused tracker, after another solve, answers the same bytes from the same seed.
  auto tracker = RobotTracker::Create(*robot_, options, robot_->MidRange());
  ASSERT_TRUE(tracker.ok());
  tracker->Solve(PoseTarget(*robot_, RandomInsideLimits(*robot_, rng)));
  tracker->Reset(robot_->MidRange());
  const RobotIkResult c = tracker->Solve(target);
  ASSERT_EQ(c.q.size(), a->q.size());
  EXPECT_EQ(std::memcmp(a->q.data(), c.q.data(), sizeof(double) * a->q.size()), 0);
}

// The seed atlas shortens the way to a target: on the same 30 random pose targets from the
// mid-range seed, the solves with the atlas take fewer projections in all than those that
// continue from the seed first (every success verified by forward kinematics), and solve at
// least as many.
TEST_P(RobotIkTest, SeedAtlasTakesFewerProjectionsThanTheMidRangeSeed) {
  std::mt19937_64 rng(25);
  // The numeric solve's starts (the closed form needs none).
  const RobotIkOptions with_atlas{.solver = IkSolver::kNumeric};
  RobotIkOptions from_seed = with_atlas;
  from_seed.starts = SolveStarts::kGivenThenRandom;
  int projections[2] = {0, 0}, solved[2] = {0, 0};
  for (int trial = 0; trial < 30; ++trial) {
    const ToolTarget target = PoseTarget(*robot_, RandomInsideLimits(*robot_, rng));
    for (int atlas = 0; atlas < 2; ++atlas) {
      auto result =
          SolveRobotIk(*robot_, target, robot_->MidRange(), atlas ? with_atlas : from_seed);
      ASSERT_TRUE(result.ok());
      projections[atlas] += result->projections;
      if (result->status != planning::StepStatus::kReached) continue;
      ++solved[atlas];
      const Eigen::Isometry3d X = ToolPose(robot_->spec(), result->q);
      EXPECT_LE((X.translation() - target.position).norm(), 1e-5);
    }
  }
  EXPECT_LT(projections[1], projections[0]) << GetParam().name;
  EXPECT_GE(solved[1], solved[0]) << GetParam().name;
}

// A target 1 cm from the tool of the tracker's configuration is nearer it than any atlas
// entry: the solve continues from that configuration (no restart, joints turn little), as
// without the atlas, to the same bytes.
TEST_P(RobotIkTest, NearTargetContinuesFromTheGivenConfiguration) {
  const Eigen::VectorXd q0 =
      Eigen::Map<const Eigen::VectorXd>(GetParam().ready.data(), robot_->num_joints());
  const Eigen::Isometry3d X0 = ToolPose(robot_->spec(), q0);
  const ToolTarget target = *ToolTarget::Pose(X0.translation() + Eigen::Vector3d(0.0, 0.01, 0.0),
                                              Eigen::Quaterniond(X0.linear()));
  const RobotIkOptions with_atlas{.solver = IkSolver::kNumeric};
  RobotIkOptions from_seed = with_atlas;
  from_seed.starts = SolveStarts::kGivenThenRandom;
  auto with = SolveRobotIk(*robot_, target, q0, with_atlas);
  auto without = SolveRobotIk(*robot_, target, q0, from_seed);
  ASSERT_TRUE(with.ok() && without.ok());
  ASSERT_EQ(with->status, planning::StepStatus::kReached);
  EXPECT_EQ(with->restarts, 0);
  EXPECT_LT(with->max_joint_change, 0.2);
  EXPECT_EQ(std::memcmp(with->q.data(), without->q.data(), sizeof(double) * with->q.size()), 0);
}

// kGivenFirst (a path's first target): where continuation from the given configuration gets
// there on its first attempt, the same bytes as without the atlas (the seed's branch); where
// it does not, the restarts from the nearest atlas entries take fewer projections in all than
// those from random seeds (the UR5's and iiwa14's mid-range seed is singular: every solve).
TEST_P(RobotIkTest, GivenFirstKeepsTheSeedsBranchAndRestartsFromTheAtlas) {
  std::mt19937_64 rng(26);
  RobotIkOptions given_first, random_restarts;
  given_first.solver = random_restarts.solver = IkSolver::kNumeric;
  given_first.starts = SolveStarts::kGivenFirst;
  random_restarts.starts = SolveStarts::kGivenThenRandom;
  int projections_atlas = 0, projections_random = 0, same = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const ToolTarget target = PoseTarget(*robot_, RandomInsideLimits(*robot_, rng));
    auto a = SolveRobotIk(*robot_, target, robot_->MidRange(), given_first);
    auto r = SolveRobotIk(*robot_, target, robot_->MidRange(), random_restarts);
    ASSERT_TRUE(a.ok() && r.ok());
    if (r->status == planning::StepStatus::kReached && r->restarts == 0) {
      ++same;
      EXPECT_EQ(a->restarts, 0) << trial;
      EXPECT_EQ(std::memcmp(a->q.data(), r->q.data(), sizeof(double) * a->q.size()), 0) << trial;
      continue;
    }
    projections_atlas += a->projections;
    projections_random += r->projections;
  }
  EXPECT_LT(projections_atlas, projections_random)
      << GetParam().name << ", " << same << " first-attempt solves";
}

INSTANTIATE_TEST_SUITE_P(Presets, RobotIkTest, ::testing::ValuesIn(kRobotCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RobotIkInput, ErrorsNameTheField) {
  auto robot = Robot::Create(presets::Panda());
  ASSERT_TRUE(robot.ok());
  EXPECT_THAT(ToolTarget::Pose({0.3, 0, 0.5}, Eigen::Quaterniond(1, 0, 0, 0.1)).status().message(),
              HasSubstr("target.orientation must be a unit quaternion"));
  EXPECT_THAT(ToolTarget::Position({0.3, NAN, 0.5}).status().message(),
              HasSubstr("target.position"));
  const ToolTarget target = *ToolTarget::Position({0.3, 0.0, 0.5});
  EXPECT_THAT(SolveRobotIk(*robot, target, Eigen::VectorXd::Zero(6), {}).status().message(),
              HasSubstr("seed must hold 7"));
  RobotIkOptions options;
  options.position_tolerance = 0.0;
  EXPECT_THAT(SolveRobotIk(*robot, target, robot->MidRange(), options).status().message(),
              HasSubstr("position_tolerance"));
  options = RobotIkOptions{};
  options.time_budget = -1e-3;
  EXPECT_THAT(SolveRobotIk(*robot, target, robot->MidRange(), options).status().message(),
              HasSubstr("time_budget must be finite and >= 0"));
  options.time_budget = INFINITY;
  EXPECT_FALSE(SolveRobotIk(*robot, target, robot->MidRange(), options).ok());
}

// A 6-joint arm has no redundancy for a pose: a joint that reaches its limit on the way cannot
// be locked there (one constraint more than the freedoms), so the move ends at once as
// JOINT_LIMIT_BLOCKED, inside the limits, while a position target (3 joints of redundancy)
// locks the joint and goes on.
TEST(RobotIkLimits, NonRedundantPoseMoveStopsAtALimit) {
  ChainSpec spec = presets::Ur5();
  spec.joints[0].limits->lower = -0.2;
  spec.joints[0].limits->upper = 0.2;
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(robot.ok());
  Eigen::VectorXd start(6), goal(6);
  start << 0.0, -1.2, 1.5, -1.8, -1.57, 0.0;
  goal = start;
  goal[0] = 0.5;  // beyond the upper limit of joint 0: on the way the joint passes 0.2
  const Eigen::Isometry3d X = ToolPose(robot->spec(), goal);
  auto tracker = RobotTracker::Create(*robot, RobotIkOptions{}, start);
  ASSERT_TRUE(tracker.ok());
  const RobotIkResult pose =
      tracker->StepTo(*ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear())));
  EXPECT_EQ(pose.status, planning::StepStatus::kJointLimitBlocked);
  EXPECT_LE(robot->LimitViolation(tracker->q()), 0.0);
  const RobotIkResult position = tracker->StepTo(*ToolTarget::Position(X.translation()));
  EXPECT_NE(position.status, planning::StepStatus::kJointLimitBlocked);
  EXPECT_LE(robot->LimitViolation(tracker->q()), 0.0);
}

// Beyond reach: no crash, a finite configuration, and a status that says not solved.
TEST(RobotIkInput, UnreachableTargetIsNotSolved) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  RobotIkOptions options;
  options.max_restarts = 2;
  auto result =
      SolveRobotIk(*robot, *ToolTarget::Position({3.0, 0.0, 0.0}), robot->MidRange(), options);
  ASSERT_TRUE(result.ok());
  EXPECT_NE(result->status, planning::StepStatus::kReached);
  EXPECT_TRUE(result->q.allFinite());
  EXPECT_GT(result->position_error, 1.0);
  // Fuzzer finding: a target 1e229 m away made the step count overflow an int.
  auto far =
      SolveRobotIk(*robot, *ToolTarget::Position({0.4, 0.3, -1e229}), robot->MidRange(), options);
  ASSERT_TRUE(far.ok());
  EXPECT_EQ(far->status, planning::StepStatus::kNotConverged);
  EXPECT_EQ(far->projections, 0) << "a path beyond the step budget is not started";
  EXPECT_TRUE(far->q.allFinite());
}

// A time budget stops the restarts of a solve that cannot succeed: 10,000 restarts would take
// seconds; the solve stops before starting an attempt once the budget is spent, and reports the
// attempts it made. The budget is 50 ms, many attempts long even on a loaded machine (5 ms
// failed once in a full ctest -j2 beside a benchmark run; its output was not kept).
TEST(RobotIkInput, TimeBudgetStopsTheRestarts) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  RobotIkOptions options;
  options.max_restarts = 10000;
  options.time_budget = 0.05;
  const auto t0 = std::chrono::steady_clock::now();
  auto result =
      SolveRobotIk(*robot, *ToolTarget::Position({3.0, 0.0, 0.0}), robot->MidRange(), options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(result.ok());
  EXPECT_NE(result->status, planning::StepStatus::kReached);
  EXPECT_GE(seconds, options.time_budget) << "no attempt is cut short of the budget";
  EXPECT_GE(result->restarts, 1);
  EXPECT_LT(result->restarts, options.max_restarts);
}

// RobotIkOptions::solver. A UR5 pose target is answered by the closed form: the branch nearest
// the given configuration (no other branch, all listed by the tests' own forward kinematics
// check below, is nearer), on the target by forward kinematics, no projection spent.
TEST(RobotIkSolver, AutoAnswersA6RPoseByTheNearestClosedFormBranch) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::VectorXd made = RandomInsideLimits(*robot, rng);
    const Eigen::VectorXd seed = RandomInsideLimits(*robot, rng);
    const ToolTarget target = PoseTarget(*robot, made);
    auto result = SolveRobotIk(*robot, target, seed, {});
    ASSERT_TRUE(result.ok());
    ASSERT_EQ(result->status, planning::StepStatus::kReached) << trial;
    EXPECT_EQ(result->solver, IkSolver::kAnalytic);
    EXPECT_EQ(result->projections, 0);
    const Eigen::Isometry3d X = ToolFrame(robot->spec(), result->q);
    EXPECT_LT((X.translation() - target.position).norm(), 1e-10);
    // The making configuration's pose has it as one branch: the answer is no farther.
    // (its copy nearest the seed within the UR5's +-2 pi ranges, joint by joint).
    Eigen::VectorXd made_near = made;
    for (int j = 0; j < 6; ++j) {
      for (int turns = -2; turns <= 2; ++turns) {
        const double copy = made[j] + 2 * std::numbers::pi * turns;
        if (std::abs(copy) <= 2 * std::numbers::pi &&
            std::abs(copy - seed[j]) < std::abs(made_near[j] - seed[j])) {
          made_near[j] = copy;
        }
      }
    }
    EXPECT_LE((result->q - seed).squaredNorm(), (made_near - seed).squaredNorm() + 1e-9) << trial;

    RobotIkOptions numeric;
    numeric.solver = IkSolver::kNumeric;
    auto by_numeric = SolveRobotIk(*robot, target, seed, numeric);
    ASSERT_TRUE(by_numeric.ok());
    EXPECT_EQ(by_numeric->solver, IkSolver::kNumeric);
  }
}

// A 7R arm's unary solve under kAuto is the closed form at the locked value its continuation
// reaches: on the target (the tests' forward kinematics), within the limits, no projection
// spent. A path's first target (kGivenFirst) keeps the numeric continuation; kAnalytic sweeps.
TEST(RobotIkSolver, AutoAnswersA7RArmByTheClosedFormAtItsContinuedValue) {
  for (const RobotCase& c : {kRobotCases[1], kRobotCases[2]}) {
    auto robot = Robot::Create(c.make());
    ASSERT_TRUE(robot.ok());
    std::mt19937_64 rng(17);
    for (int trial = 0; trial < 20; ++trial) {
      const Eigen::VectorXd made = RandomInsideLimits(*robot, rng);
      const ToolTarget target = PoseTarget(*robot, made);
      auto automatic = SolveRobotIk(*robot, target, robot->MidRange(), {});
      ASSERT_TRUE(automatic.ok());
      ASSERT_EQ(automatic->status, planning::StepStatus::kReached) << c.name << " " << trial;
      EXPECT_EQ(automatic->solver, IkSolver::kAnalytic);
      EXPECT_EQ(automatic->projections, 0);
      const Eigen::Isometry3d X = ToolFrame(robot->spec(), automatic->q);
      EXPECT_LT((X.translation() - target.position).norm(), 1e-9) << c.name << " " << trial;
      EXPECT_LT(Eigen::AngleAxisd(X.linear().transpose() * target.orientation->toRotationMatrix())
                    .angle(),
                1e-9);
      for (int k = 0; k < robot->num_joints(); ++k) {
        const JointLimits& l = *robot->spec().joints[k].limits;
        EXPECT_GE(automatic->q[k], l.lower) << c.name << " " << trial;
        EXPECT_LE(automatic->q[k], l.upper) << c.name << " " << trial;
      }
    }
    const Eigen::VectorXd ready = Eigen::Map<const Eigen::VectorXd>(c.ready.data(), 7);
    Eigen::VectorXd made = ready;
    made[0] += 0.4, made[3] += 0.3;
    const ToolTarget target = PoseTarget(*robot, made);
    RobotIkOptions given_first;
    given_first.starts = SolveStarts::kGivenFirst;
    auto continued = SolveRobotIk(*robot, target, ready, given_first);
    ASSERT_TRUE(continued.ok());
    EXPECT_EQ(continued->solver, IkSolver::kNumeric);
    RobotIkOptions analytic;
    analytic.solver = IkSolver::kAnalytic;
    auto closed = SolveRobotIk(*robot, target, ready, analytic);
    ASSERT_TRUE(closed.ok());
    ASSERT_EQ(closed->status, planning::StepStatus::kReached);
    EXPECT_EQ(closed->solver, IkSolver::kAnalytic);
    EXPECT_LT((ToolFrame(robot->spec(), closed->q).translation() - target.position).norm(), 1e-10);
  }
}

// The continued value keeps a 7R arm where it is: a pose made by a small joint move from the
// seed (each joint up to 0.15 rad, or the last joint alone by 0.3 rad: a turn of the flange,
// which a solve holding the locked joint at the seed's value answers by folding the wrist) is
// answered no farther from the seed than the move that made it, with some slack (the
// least-norm motion is shorter than the making move to first order).
TEST(RobotIkSolver, A7RArmAnswersASmallMoveByASmallMove) {
  for (const RobotCase& c : {kRobotCases[1], kRobotCases[2]}) {
    auto robot = Robot::Create(c.make());
    ASSERT_TRUE(robot.ok());
    const Eigen::VectorXd ready = Eigen::Map<const Eigen::VectorXd>(c.ready.data(), 7);
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> small(-0.15, 0.15);
    for (int trial = 0; trial < 30; ++trial) {
      Eigen::VectorXd seed = ready, made = ready;
      for (int k = 0; k < 7; ++k) seed[k] += small(rng);
      made = seed;
      if (trial == 0) {
        made[6] += 0.3;
      } else {
        for (int k = 0; k < 7; ++k) made[k] += small(rng);
      }
      auto answer = SolveRobotIk(*robot, PoseTarget(*robot, made), seed, {});
      ASSERT_TRUE(answer.ok());
      ASSERT_EQ(answer->status, planning::StepStatus::kReached) << c.name << " " << trial;
      EXPECT_EQ(answer->solver, IkSolver::kAnalytic);
      EXPECT_LE((answer->q - seed).norm(), 1.1 * (made - seed).norm() + 1e-6)
          << c.name << " " << trial << ": made " << (made - seed).transpose() << ", answered "
          << (answer->q - seed).transpose();
    }
  }
}

// kAnalytic for an arm that fits no closed-form family is refused, naming the solver and the
// failed conditions.
TEST(RobotIkSolver, AnalyticIsRefusedForAnArmWithoutAClosedForm) {
  ChainSpec spec = presets::Ur5();
  spec.joints[2].X_PJ.rotate(Eigen::AngleAxisd(0.2, Eigen::Vector3d::UnitX()));
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(robot.ok());
  RobotIkOptions analytic;
  analytic.solver = IkSolver::kAnalytic;
  auto tracker = RobotTracker::Create(*robot, analytic, robot->MidRange());
  ASSERT_FALSE(tracker.ok());
  EXPECT_EQ(tracker.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tracker.status().message(), testing::HasSubstr("solver is ANALYTIC"));
  EXPECT_THAT(tracker.status().message(), testing::HasSubstr("not parallel"));
  // kAuto falls back to the numeric solve.
  auto fallback =
      SolveRobotIk(*robot, PoseTarget(*robot, robot->MidRange()), robot->MidRange(), {});
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->solver, IkSolver::kNumeric);
}

}  // namespace
}  // namespace ikd::robot
