// The backward start of PlanRobotPath (solver/robot/path_backward.h), before the optimizer: a
// forward tracked path that meets a ball is joined to the path tracked back from its end, and
// the join passes where forward collides; checked with the tests' own forward kinematics and
// distances (robot_witness.h).
#include "../solver/robot/path_backward.h"

#include <numbers>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/robot/robot_ik.h"
#include "solver/robot/robot_witness.h"

namespace ikd::robot {
namespace {

// The tracker from the witness's start through every target, as PlanRobotPath's first start.
std::vector<RobotIkResult> TrackedForward(const WitnessScenario& s) {
  auto tracker = RobotTracker::Create(*s.robot, RobotIkOptions{}, s.witness.front(), &*s.scene);
  EXPECT_TRUE(tracker.ok()) << tracker.status();
  std::vector<RobotIkResult> samples{tracker->Solve(s.targets.front())};
  for (size_t k = 1; k < s.targets.size(); ++k) {
    samples.push_back(tracker->StepTo(s.targets[k], s.times[k] - s.times[k - 1]));
  }
  return samples;
}

// kForwardMeetsABall without its balls.
WitnessScenario FreeSpaceScenario() {
  WitnessCase free_space = kForwardMeetsABall;
  free_space.balls.clear();
  return MakeWitnessScenario(free_space);
}

int CollidingSamples(const WitnessScenario& s, const std::vector<RobotIkResult>& samples) {
  int colliding = 0;
  for (const RobotIkResult& sample : samples) colliding += s.Clearance(sample.q) < 0.0;
  return colliding;
}

// Motions between consecutive samples (each joint linearly, as the servo moves) that touch a
// ball at any of 20 configurations along them: the test's own subdivision.
int CollidingMotions(const WitnessScenario& s, const std::vector<RobotIkResult>& samples) {
  int colliding = 0;
  for (size_t k = 1; k < samples.size(); ++k) {
    bool touches = false;
    for (int i = 1; i < 20 && !touches; ++i) {
      touches =
          s.Clearance(samples[k - 1].q + (i / 20.0) * (samples[k].q - samples[k - 1].q)) < 0.0;
    }
    colliding += touches;
  }
  return colliding;
}

// The join of `forward`, which must exist (else a failure and an empty path).
std::vector<RobotIkResult> JoinOf(const WitnessScenario& s,
                                  const std::vector<RobotIkResult>& forward) {
  auto joined = internal::JoinBackwardRobotPath(*s.robot, &*s.scene, s.targets, s.times,
                                                RobotIkOptions{}, forward, {});
  EXPECT_TRUE(joined.ok()) << joined.status();
  if (!joined.ok() || !joined->has_value()) {
    ADD_FAILURE() << "no join";
    return {};
  }
  return **std::move(joined);
}

// Every sample on the witness's tool path, and no joint moves more than 0.1 rad between two
// samples (the seam is blended, not a jump).
void ExpectOnTheToolPathWithoutJumps(const WitnessScenario& s,
                                     const std::vector<RobotIkResult>& path) {
  ExpectOnTheWitnessToolPath(s, path, /*rates=*/false);
  for (size_t k = 1; k < path.size(); ++k) {
    const double largest = (path[k].q - path[k - 1].q).cwiseAbs().maxCoeff();
    EXPECT_LT(largest, 0.1) << "sample " << k;  // rad in 10 ms
  }
}

// Forward collides; the join starts as forward does, every sample on the witness's tool path
// and clear of the balls, as is the motion between them, and no joint moves more than 0.1 rad
// between two samples (the seam is blended, not a jump).
TEST(RobotPathBackward, TheJoinPassesWhereForwardCollides) {
  const WitnessScenario s = MakeWitnessScenario(kForwardMeetsABall);
  ASSERT_TRUE(s.robot && s.scene);
  const std::vector<RobotIkResult> forward = TrackedForward(s);
  ASSERT_GT(CollidingSamples(s, forward), 0);
  ASSERT_GT(CollidingMotions(s, forward), 0);  // the test's subdivision sees forward's collisions
  const std::vector<RobotIkResult> path = JoinOf(s, forward);
  ASSERT_EQ(path.size(), forward.size());
  EXPECT_EQ(path.front().q, forward.front().q);
  EXPECT_EQ(CollidingSamples(s, path), 0);
  EXPECT_EQ(CollidingMotions(s, path), 0);
  ExpectOnTheToolPathWithoutJumps(s, path);
}

// A backward pass that starts on another whole turn of a joint (forward's last sample failed,
// its re-solve from a seed a turn away): the same motion of the arm, so the join blends to the
// copy a whole number of turns nearest forward's and no joint turns round at the seam (before,
// the blend swung the joint by 2 pi across ten samples: bench/paths seed 7,
// ur5-position-blocking #8, through its obstacles).
TEST(RobotPathBackward, TheJoinTurnsNoJointRound) {
  const WitnessScenario s = FreeSpaceScenario();
  ASSERT_TRUE(s.robot && s.scene);
  std::vector<RobotIkResult> forward = TrackedForward(s);
  // The base joint's other copy lies within its limits of +-2 pi.
  const double turn = forward.back().q[0] < 0.0 ? 2.0 * std::numbers::pi : -2.0 * std::numbers::pi;
  forward.back().q[0] += turn;
  forward.back().status = planning::StepStatus::kInCollision;
  const std::vector<RobotIkResult> path = JoinOf(s, forward);
  ASSERT_EQ(path.size(), forward.size());
  ExpectOnTheToolPathWithoutJumps(s, path);
}

// Without failures there is nothing to join.
TEST(RobotPathBackward, NoJoinForAPathThatDoesNotFail) {
  const WitnessScenario s = FreeSpaceScenario();
  ASSERT_TRUE(s.robot && s.scene);
  const std::vector<RobotIkResult> forward = TrackedForward(s);
  auto joined = internal::JoinBackwardRobotPath(*s.robot, &*s.scene, s.targets, s.times,
                                                RobotIkOptions{}, forward, {});
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_FALSE(joined->has_value());
}

// A stop asked between samples cancels the backward pass.
TEST(RobotPathBackward, StopCancels) {
  const WitnessScenario s = MakeWitnessScenario(kForwardMeetsABall);
  ASSERT_TRUE(s.robot && s.scene);
  auto joined =
      internal::JoinBackwardRobotPath(*s.robot, &*s.scene, s.targets, s.times, RobotIkOptions{},
                                      TrackedForward(s), [] { return true; });
  EXPECT_EQ(joined.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace ikd::robot
