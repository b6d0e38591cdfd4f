// The ladder start of PlanRobotPath (solver/robot/path_ladder.h), before the optimizer: on
// bench/paths scenarios where the tracker winds a UR5 into a posture whose base must spin, the
// raw ladder path follows the tool path within the speed limits, clear of the balls; checked
// with the tests' own forward kinematics and distances (robot_witness.h).
#include "../solver/robot/path_ladder.h"

#include <cstring>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/robot/robot_ik.h"
#include "solver/robot/robot_witness.h"

namespace ikd::robot {
namespace {

// The ladder from the witness's start over `targets` (the scenario's times, as many as targets).
std::optional<std::vector<RobotIkResult>> Ladder(
    const WitnessScenario& s, const std::vector<ToolTarget>& targets,
    const RobotIkOptions& options = {},
    planning::StepStatus first_status = planning::StepStatus::kReached) {
  RobotIkResult first;
  first.q = s.witness.front();
  first.status = first_status;
  const std::vector<double> times(s.times.begin(), s.times.begin() + targets.size());
  auto ladder = internal::LadderRobotPath(*s.robot, &*s.scene, targets, times, options, first, {});
  EXPECT_TRUE(ladder.ok()) << ladder.status();
  return ladder.ok() ? *ladder : std::nullopt;
}

void ExpectAllReached(const std::vector<RobotIkResult>& samples) {
  for (size_t k = 0; k < samples.size(); ++k) {
    EXPECT_EQ(samples[k].status, planning::StepStatus::kReached) << "sample " << k;
  }
}

// The tracker's path from the witness's start: each sample a step of the least joint motion.
std::vector<Eigen::VectorXd> TrackedPath(const WitnessScenario& s) {
  auto tracker = RobotTracker::Create(*s.robot, RobotIkOptions{}, s.witness.front(), &*s.scene);
  EXPECT_TRUE(tracker.ok()) << tracker.status();
  std::vector<Eigen::VectorXd> q{s.witness.front()};
  for (size_t k = 1; k < s.targets.size(); ++k) {
    q.push_back(tracker->StepTo(s.targets[k], s.times[k] - s.times[k - 1]).q);
  }
  return q;
}

TEST(RobotPathLadder, FollowsTheToolPathWhereTheTrackerWindsTheBaseRound) {
  const WitnessScenario s = MakeWitnessScenario(kNearTheBaseAxis);
  ASSERT_TRUE(s.robot && s.scene);
  const auto ladder = Ladder(s, s.targets);
  ASSERT_TRUE(ladder.has_value());
  ExpectOnTheWitnessToolPath(s, *ladder, /*rates=*/false);
  ExpectAllReached(*ladder);
  // The witness needs at most half the limits; the tracker more than twice them.
  EXPECT_LE(TopSpeedRatio(s.spec, s.witness, s.times), 0.5 + 1e-9);
  EXPECT_GT(TopSpeedRatio(s.spec, TrackedPath(s), s.times), 2.0);
  EXPECT_LT(TopSpeedRatio(s.spec, JointValues(*ladder), s.times), 1.0);
}

TEST(RobotPathLadder, EveryRungIsClearByTheMargin) {
  const WitnessScenario s = MakeWitnessScenario(kAmongBalls);
  ASSERT_TRUE(s.robot && s.scene);
  const RobotIkOptions options;
  const auto ladder = Ladder(s, s.targets, options);
  ASSERT_TRUE(ladder.has_value());
  ExpectOnTheWitnessToolPath(s, *ladder, /*rates=*/false);
  ExpectAllReached(*ladder);
  for (size_t k = 0; k < ladder->size(); k += 5) {
    EXPECT_GE(s.Clearance((*ladder)[k].q), options.safety_margin - 1e-12) << "rung at " << k;
  }
  EXPECT_GE(s.Clearance(ladder->back().q), options.safety_margin - 1e-12);
}

bool SameBytes(const std::vector<RobotIkResult>& a, const std::vector<RobotIkResult>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].status != b[k].status ||
        std::memcmp(a[k].q.data(), b[k].q.data(), sizeof(double) * a[k].q.size()) != 0) {
      return false;
    }
  }
  return true;
}

// The moves in the null space come from the options' seed alone.
TEST(RobotPathLadder, SameSeedSameBytes) {
  const WitnessScenario s = MakeWitnessScenario(kAmongBalls);
  ASSERT_TRUE(s.robot && s.scene);
  RobotIkOptions other;
  other.seed = 2;
  const auto a = Ladder(s, s.targets), b = Ladder(s, s.targets), c = Ladder(s, s.targets, other);
  ASSERT_TRUE(a.has_value() && b.has_value() && c.has_value());
  EXPECT_TRUE(SameBytes(*a, *b));
  EXPECT_FALSE(SameBytes(*a, *c));
}

// Paths of 3, 6, 7 and 11 samples: rungs at 0 and 2; 0 and 5; 0, 5 and 6; 0, 5 and 10. Every
// sample on its target.
TEST(RobotPathLadder, ShortPathsHaveARungAtTheirEnd) {
  const WitnessScenario s = MakeWitnessScenario(kNearTheBaseAxis);
  ASSERT_TRUE(s.robot && s.scene);
  for (size_t count : {3, 6, 7, 11}) {
    SCOPED_TRACE(count);
    const std::vector<ToolTarget> targets(s.targets.begin(), s.targets.begin() + count);
    const auto ladder = Ladder(s, targets);
    ASSERT_TRUE(ladder.has_value());
    ASSERT_EQ(ladder->size(), count);
    ExpectAllReached(*ladder);
    for (size_t k = 0; k < count; ++k) {
      EXPECT_LT((ToolFrame(s.spec, (*ladder)[k].q).translation() - targets[k].position).norm(),
                1e-9)
          << k;
    }
  }
}

// A first sample off its target or past a joint limit is no start for a path.
TEST(RobotPathLadder, NoLadderFromAFailedFirstSample) {
  const WitnessScenario s = MakeWitnessScenario(kNearTheBaseAxis);
  ASSERT_TRUE(s.robot && s.scene);
  EXPECT_FALSE(Ladder(s, s.targets, {}, planning::StepStatus::kNotConverged).has_value());
  EXPECT_FALSE(Ladder(s, s.targets, {}, planning::StepStatus::kJointLimitBlocked).has_value());
}

// A UR5 holding full poses has no redundancy to search: the ladder leaves the path alone (a
// Panda's would have one direction).
TEST(RobotPathLadder, NoRedundancyNoLadder) {
  const WitnessScenario s = MakeWitnessScenario(kNearTheBaseAxis);
  ASSERT_TRUE(s.robot && s.scene);
  std::vector<ToolTarget> poses;
  for (const Eigen::VectorXd& q : s.witness) {
    const Eigen::Isometry3d X = ToolFrame(s.spec, q);
    poses.push_back(*ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear())));
  }
  EXPECT_FALSE(Ladder(s, poses).has_value());
}

TEST(RobotPathLadder, StopCancels) {
  const WitnessScenario s = MakeWitnessScenario(kNearTheBaseAxis);
  ASSERT_TRUE(s.robot && s.scene);
  RobotIkResult first;
  first.q = s.witness.front();
  first.status = planning::StepStatus::kReached;
  int asked = 0;
  auto ladder = internal::LadderRobotPath(*s.robot, &*s.scene, s.targets, s.times, RobotIkOptions{},
                                          first, [&] { return ++asked > 3; });
  EXPECT_EQ(ladder.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(asked, 4);
}

}  // namespace
}  // namespace ikd::robot
