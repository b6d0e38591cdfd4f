// Kastenmeier & Vesely step (c) on industrial arms (robot/robot_avoidance.cc): the trials move a
// redundant arm's links out of the margin with the tool on target, never take a mirror image of
// the arm, keep the velocity limits, and keep the arm's own links at half the distance.
#include <cstring>
#include <utility>

#include <gtest/gtest.h>

#include "ikd/planning/scene.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/robot_ik.h"
#include "solver/robot/own_capsule_distances.h"
#include "solver/robot/robot_cases.h"

namespace ikd::robot {
namespace {

// The Panda at its ready pose with 50 mm capsules on its joint origins, a ball 5 mm from the
// capsule of its upper arm (joint 3 to joint 4), and a position target holding its tool there.
struct PandaBesideABall {
  Robot robot;
  Eigen::VectorXd q0;
  planning::Scene scene;
  ToolTarget hold;
};

PandaBesideABall MakePandaBesideABall() {
  ChainSpec spec = presets::Panda();
  spec.link_radii.assign(7, 0.05);
  Robot robot = *Robot::Create(spec);
  const Eigen::VectorXd q0 = Eigen::Map<const Eigen::VectorXd>(kRobotCases[1].ready.data(), 7);
  const auto segments = LinkSegments(robot.spec(), q0);
  const Eigen::Vector3d a = segments[2].first, b = segments[2].second;
  const Eigen::Vector3d side = (b - a).cross(Eigen::Vector3d::UnitZ()).normalized();
  planning::Scene scene = *planning::Scene::Create(
      {{"ball", planning::Sphere{0.5 * (a + b) + (0.05 + 0.005 + 0.05) * side, 0.05}}});
  const ToolTarget hold = *ToolTarget::Position(ToolPose(robot.spec(), q0).translation());
  return {std::move(robot), q0, std::move(scene), hold};
}

// Kastenmeier & Vesely step (c) on an industrial arm: a Panda holding its tool still (a position
// target, four redundant joints) with a ball 5 mm from its upper arm's 50 mm capsule. With the
// stochastic optimizer the arm moves its links out beyond the 10 mm margin while the tool stays
// on target; with no trials the clearance stays at 5 mm. Both runs are inside every limit.
TEST(RobotIkAvoidance, RedundantArmMovesItsLinksOutOfTheMargin) {
  const PandaBesideABall c = MakePandaBesideABall();
  for (int trials : {24, 0}) {
    RobotIkOptions options;
    options.trials_per_step = trials;
    auto tracker = RobotTracker::Create(c.robot, options, c.q0, &c.scene);
    ASSERT_TRUE(tracker.ok());
    RobotIkResult r;
    for (int k = 0; k < 20; ++k) r = tracker->StepTo(c.hold);
    EXPECT_EQ(r.status, planning::StepStatus::kReached) << trials;
    EXPECT_LT(r.position_error, 1e-9) << trials;
    EXPECT_LE(c.robot.LimitViolation(r.q), 0.0);
    if (trials > 0) {
      EXPECT_GE(r.min_clearance, options.safety_margin);
    } else {
      EXPECT_NEAR(r.min_clearance, 0.005, 1e-6);
    }
  }
}

// The Panda preset with its collision model in a posture from bench/paths' Track circle (the
// tool 10 cm from the ready pose's along x), with a 30 mm margin: links 4 and 6, 10 mm apart,
// are within the 18.75 mm the trials keep between the arm's own links (0.625 margins), so step
// (c) runs its trials on every hold. A trial moves the free sites by up
// to the site spacing, enough to flip a site through the face of the tetrahedron it is tied to:
// a mirror image that keeps every distance but is not the arm. Such a trial may never be taken:
// every hold stays on its target by the test's own forward kinematics. (Before, the fifth hold
// took one and ended NOT_CONVERGED, the tool 6.7 cm off.)
TEST(RobotIkAvoidance, ATrialNeverTakesAMirrorImageOfTheArm) {
  auto robot = Robot::Create(presets::PandaWithBody());
  ASSERT_TRUE(robot.ok()) << robot.status();
  const ChainSpec& spec = robot->spec();
  auto own_fk = [&](const Eigen::VectorXd& q) {
    Eigen::Isometry3d X = spec.X_WB;
    for (size_t k = 0; k < spec.joints.size(); ++k) {
      X = X * spec.joints[k].X_PJ * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
    }
    return Eigen::Vector3d((X * spec.X_FT).translation());
  };
  const Eigen::VectorXd q0 =
      (Eigen::VectorXd(7) << 1.65034, 1.28124, -1.90284, -2.47194, -1.9924, 1.40469, 2.38356)
          .finished();
  const Eigen::Vector3d p0 = own_fk(q0);
  RobotIkOptions options;
  options.safety_margin = 0.03;
  auto tracker = RobotTracker::Create(*robot, options, q0);
  ASSERT_TRUE(tracker.ok());
  int trials_accepted = 0;
  for (int k = 0; k < 20; ++k) {
    const RobotIkResult r = tracker->StepTo(*ToolTarget::Position(p0));
    EXPECT_EQ(r.status, planning::StepStatus::kReached) << "hold " << k;
    EXPECT_LT((own_fk(r.q) - p0).norm(), 1e-9) << "hold " << k;
    trials_accepted += r.trials_accepted;
  }
  EXPECT_GT(trials_accepted, 0) << "the premise: trials ran and were taken";
}

// The arm's own links are kept at half the distance obstacles are (motion.h's kSelfBufferShare):
// the same Panda posture, whose links 4 and 6 stand 6.25-12 mm apart by the test's own capsule
// distances, held still. With the default 10 mm margin the trials' buffer is 12.5 mm from an
// obstacle and 6.25 mm between the arm's own links: no trial runs, so the holds take exactly the
// projections and joint values of holds without trials. With a 20 mm margin (12.5 mm between
// the arm's own links) they run.
TEST(RobotIkAvoidance, TheArmsOwnLinksAreKeptAtHalfTheDistance) {
  auto robot = Robot::Create(presets::PandaWithBody());
  ASSERT_TRUE(robot.ok()) << robot.status();
  const Eigen::VectorXd q0 =
      (Eigen::VectorXd(7) << 1.65034, 1.28124, -1.90284, -2.47194, -1.9924, 1.40469, 2.38356)
          .finished();
  const double gap = test::LinkGapLowerBound(robot->spec(), LinkPoses(robot->spec(), q0), 4, 6);
  ASSERT_GT(gap, 0.00625);
  ASSERT_LT(gap, 0.012);
  const ToolTarget hold = *ToolTarget::Position(ToolPose(robot->spec(), q0).translation());
  auto holds = [&](double margin, int trials) {
    RobotIkOptions options;
    options.safety_margin = margin;
    options.trials_per_step = trials;
    auto tracker = RobotTracker::Create(*robot, options, q0);
    EXPECT_TRUE(tracker.ok());
    RobotIkResult r;
    int projections = 0;
    for (int k = 0; k < 10; ++k) {
      r = tracker->StepTo(hold);
      EXPECT_EQ(r.status, planning::StepStatus::kReached);
      projections += r.projections;
    }
    return std::make_pair(projections, r.q);
  };
  const auto [with_trials, q_with] = holds(0.01, 24);
  const auto [without, q_without] = holds(0.01, 0);
  EXPECT_EQ(with_trials, without);
  EXPECT_EQ(std::memcmp(q_with.data(), q_without.data(), sizeof(double) * 7), 0);
  EXPECT_GT(holds(0.02, 24).first, holds(0.02, 0).first);
}

// The same Panda and ball, each hold now a move of 1 ms: the trials may not buy clearance with
// joint motion beyond a joint's velocity limit over the move (2 mrad for the slowest joint at
// 2.18 rad/s). Every move ends within the limits, none VELOCITY_LIMITED, and the arm
// still creeps out of the margin over the holds.
TEST(RobotIkAvoidance, TrialsKeepWithinTheVelocityLimits) {
  const PandaBesideABall c = MakePandaBesideABall();
  auto tracker = RobotTracker::Create(c.robot, RobotIkOptions{}, c.q0, &c.scene);
  ASSERT_TRUE(tracker.ok());
  RobotIkResult r;
  int trials_accepted = 0;
  for (int k = 0; k < 200; ++k) {
    r = tracker->StepTo(c.hold, 1e-3);
    ASSERT_EQ(r.status, planning::StepStatus::kReached)
        << "hold " << k << ": " << planning::StepStatusName(r.status);
    EXPECT_LE(r.velocity_ratio, 1.0) << "hold " << k;
    trials_accepted += r.trials_accepted;
  }
  EXPECT_GT(trials_accepted, 0);
  EXPECT_GT(r.min_clearance, 0.005 + 1e-3);
}

}  // namespace
}  // namespace ikd::robot
