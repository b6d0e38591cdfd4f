// The chain driver's backward join (path_backward.h) certifies the motion it keeps, not only
// its samples: checked with the test's own planar forward kinematics, subdivision and
// distances.
#include "../solver/ik/path_backward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/ik/path.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"
#include "ikd/planning/scene.h"

namespace ikd::ik {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kLimbLength = 0.5;
constexpr double kLimbRadius = 0.02;
const Eigen::Vector3d kBall(0.25, 0.0, 0.0);  // on the base-hand line, inside limb 0's reach
constexpr double kBallRadius = 0.03;

// The test's own planar kinematics: limb 0's heading, then each turn.
Eigen::Matrix3Xd Sites(const Eigen::VectorXd& q) {
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, q.size() + 1);
  double heading = 0.0;
  for (int k = 0; k < q.size(); ++k) {
    heading += q[k];
    sites.col(k + 1) =
        sites.col(k) + kLimbLength * Eigen::Vector3d(std::cos(heading), std::sin(heading), 0.0);
  }
  return sites;
}

// Least distance of the limbs' capsules to the ball.
double BallClearance(const Eigen::Matrix3Xd& sites) {
  double least = std::numeric_limits<double>::infinity();
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    const Eigen::Vector3d a = sites.col(k), d = sites.col(k + 1) - a;
    const double t = std::clamp((kBall - a).dot(d) / d.squaredNorm(), 0.0, 1.0);
    least = std::min(least, (a + t * d - kBall).norm() - kBallRadius - kLimbRadius);
  }
  return least;
}

// The least ball clearance over the servo's motion through the steps: each joint linearly
// between samples, the short way round, 200 sub-steps each.
double LeastClearanceOfTheMotion(const std::vector<IkResult>& steps) {
  double least = std::numeric_limits<double>::infinity();
  Eigen::VectorXd before = Eigen::Map<const Eigen::VectorXd>(steps[0].angles.data(), 3);
  for (size_t k = 1; k < steps.size(); ++k) {
    Eigen::VectorXd after = Eigen::Map<const Eigen::VectorXd>(steps[k].angles.data(), 3);
    for (int j = 0; j < 3; ++j) {
      after[j] = before[j] + std::remainder(after[j] - before[j], 2.0 * kPi);
    }
    for (int i = 0; i <= 200; ++i) {
      least = std::min(least, BallClearance(Sites(before + (after - before) * (i / 200.0))));
    }
    before = after;
  }
  return least;
}

// The arm's mirror image in the base-hand line (the x axis): the same hand, every angle
// negated.
IkResult Mirrored(IkResult step) {
  for (double& angle : step.angles) angle = -angle;
  step.sites.row(1) *= -1.0;
  return step;
}

// The setting of both tests: a planar three-limb arm whose hand moves in along the x axis
// from (1.26, 0) to (1, 0) over 1 s, sampled every 10 ms, beside a ball on that axis; forward is
// the greedy driver's path, clear at every sample and between them (the test's own check).
struct Setting {
  Arm arm;
  planning::Scene scene;
  Eigen::Matrix3Xd start;
  Trajectory path;
  std::vector<double> times;
  std::vector<IkResult> forward;
};

Setting MakeSetting() {
  ArmSpec spec;
  spec.planar = true;
  spec.limbs.assign(3, {kLimbLength, kLimbRadius});
  Arm arm = *Arm::Create(spec);
  planning::Scene scene =
      *planning::Scene::Create({{"ball", planning::Sphere{kBall, kBallRadius}}});
  Eigen::Matrix3Xd start = *arm.SitesFromAngles({0.7, -0.7, -0.7});
  Trajectory path = *Trajectory::Line(start.col(arm.hand()), {1.0, 0.0, 0.0}, 1.0);
  std::vector<double> times = *path.SampleTimes(0.01);
  Setting setting{std::move(arm), std::move(scene), start, std::move(path), std::move(times), {}};
  auto driver =
      PathDriver::Create(setting.arm, &setting.scene, setting.path, IkOptions{}, setting.start);
  for (double t : setting.times) setting.forward.push_back(*driver->StepTo(t));
  return setting;
}

absl::StatusOr<std::optional<std::vector<IkResult>>> Join(Setting& setting) {
  auto projector = ArmTracker::Create(setting.arm, &setting.scene, IkOptions{}, setting.start);
  if (!projector.ok()) return projector.status();
  return internal::JoinBackwardPath(setting.arm, &setting.scene, setting.path, setting.times,
                                    IkOptions{}, *projector, setting.forward, {});
}

void ExpectTheDriversPathClear(const Setting& setting) {
  ASSERT_EQ(setting.forward.size(), 101u);
  ASSERT_NEAR(setting.start(1, setting.arm.hand()), 0.0, 1e-12);
  for (const IkResult& s : setting.forward) {
    ASSERT_GT(BallClearance(s.sites), 0.0) << "t = " << s.time;
    ASSERT_NEAR(s.sites(1, setting.arm.hand()), 0.0, 1e-9);
  }
  ASSERT_GT(LeastClearanceOfTheMotion(setting.forward), 0.0);
}

// A failure to mend (sample 90 marked in collision) on the driver's path: the join (backward
// tracked from the clear end) is kept, on the path, and moves clear of the ball.
TEST(ChainPathBackward, AJoinIsKeptAndMovesClear) {
  Setting setting = MakeSetting();
  ExpectTheDriversPathClear(setting);
  setting.forward[90].status = planning::StepStatus::kInCollision;
  auto joined = Join(setting);
  ASSERT_TRUE(joined.ok()) << joined.status();
  ASSERT_TRUE(joined->has_value());
  const std::vector<IkResult>& steps = **joined;
  ASSERT_EQ(steps.size(), setting.forward.size());
  EXPECT_GT(LeastClearanceOfTheMotion(steps), 0.0);
  for (const IkResult& s : steps) {
    EXPECT_LT((s.sites.col(setting.arm.hand()) - setting.path.PositionAt(s.time)).norm(), 1e-9)
        << "t = " << s.time;
  }
}

// The same with forward's first 31 samples the mirror image of the driver's (each clear), so
// that the motion from sample 30 to 31 swings limb 0 through the ball. The backward path stays
// on the driver's side: closest to forward after the swing. A join there kept forward's samples
// up to it, the swing included (5 cm deep into the ball, before the join checked motions); the
// join must start before the swing or not at all.
TEST(ChainPathBackward, TheJoinKeepsNoMotionThroughAnObstacle) {
  Setting setting = MakeSetting();
  ExpectTheDriversPathClear(setting);
  for (int k = 0; k <= 30; ++k) setting.forward[k] = Mirrored(setting.forward[k]);
  ASSERT_GT(BallClearance(setting.forward[30].sites), 0.0);
  ASSERT_LT(LeastClearanceOfTheMotion(setting.forward), 0.0);  // the swing from 30 to 31
  setting.forward[90].status = planning::StepStatus::kInCollision;
  auto joined = Join(setting);
  ASSERT_TRUE(joined.ok()) << joined.status();
  // Every join must start before the swing, on the mirror side, and its blend turns limb 0's
  // heading the short way from about -0.7 to +0.7 rad, through the ball: there is none.
  EXPECT_FALSE(joined->has_value())
      << "a join moving " << LeastClearanceOfTheMotion(**joined) << " m from the ball";
}

}  // namespace
}  // namespace ikd::ik
