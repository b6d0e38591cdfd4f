// Rate-limited Track of industrial arms (robot_rate_limit.h): a target that jumps is followed
// within every joint's velocity and acceleration limit (recomputed here from the returned joint
// values), with LIMITED statuses and the tool lagging until it catches up without swinging past
// (checked by the test's own forward kinematics); a stream within the limits is the plain
// tracker's, bit for bit.
#include "ikd/robot/robot_rate_limit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/robot/presets.h"
#include "solver/robot/own_capsule_distances.h"
#include "solver/robot/robot_cases.h"

namespace ikd::robot {
namespace {

Eigen::Vector3d ToolPosition(const ChainSpec& spec, const Eigen::VectorXd& q) {
  return ToolFrame(spec, q).translation();
}

// Sample k's joint velocities from the previous answer's values (the test's own finite
// differences) within every joint's declared velocity limit, and their change within its
// acceleration limit from sample 2 on (the first answer starts from rest); returns them.
Eigen::VectorXd ExpectWithinRateLimits(const Robot& robot, const Eigen::VectorXd& q,
                                       const Eigen::VectorXd& q_prev, const Eigen::VectorXd& v_prev,
                                       int k, double dt) {
  const Eigen::VectorXd v = (q - q_prev) / dt;
  for (int j = 0; j < v.size(); ++j) {
    const JointLimits& l = *robot.spec().joints[j].limits;
    EXPECT_LE(std::abs(v[j]), l.max_velocity * (1 + 1e-9)) << "sample " << k << " joint " << j;
    if (k > 1) {
      EXPECT_LE(std::abs(v[j] - v_prev[j]) / dt, l.max_acceleration * (1 + 1e-6))
          << "sample " << k << " joint " << j;
    }
  }
  return v;
}

// The least gap between a ball and the arm's links taken as segments from each link pose to
// the next and the tool (the tests' own distances).
double BallGap(const ChainSpec& spec, const Eigen::VectorXd& q, const Eigen::Vector3d& ball,
               double radius) {
  std::vector<Eigen::Vector3d> points;
  for (const Eigen::Isometry3d& X : LinkPoses(spec, q)) points.push_back(X.translation());
  points.push_back(ToolPosition(spec, q));
  double least = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k + 1 < points.size(); ++k) {
    least = std::min(least, test::DistanceToSegment(ball, points[k], points[k + 1]) - radius);
  }
  return least;
}

const Eigen::VectorXd kPandaReady =
    (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished();

// The Panda (datasheet velocities and accelerations): its tool target jumps 15 cm at t = 0.1 s.
TEST(RobotRateLimit, JumpingTargetIsFollowedWithinTheLimitsAndCaughtUp) {
  auto robot = Robot::Create(presets::Panda());
  ASSERT_TRUE(robot.ok());
  auto limited = RateLimitedRobotTracker::Create(*robot, RobotIkOptions{}, kPandaReady);
  ASSERT_TRUE(limited.ok()) << limited.status();
  const Eigen::Vector3d p0 = ToolPosition(robot->spec(), kPandaReady);
  const double dt = 0.01;
  Eigen::VectorXd q_prev, v_prev;
  int limited_answers = 0;
  double overshoot = 0.0;  // m past the target along the jump
  bool caught_up = false;
  RobotIkResult last;
  for (int k = 0; k <= 150; ++k) {
    const Eigen::Vector3d target =
        p0 + (k >= 10 ? Eigen::Vector3d(0.0, 0.15, 0.0) : Eigen::Vector3d::Zero());
    last = limited->StepTo(*ToolTarget::Position(target), k * dt);
    ASSERT_EQ(last.q.size(), 7);
    if (k > 0) {
      const Eigen::VectorXd v = ExpectWithinRateLimits(*robot, last.q, q_prev, v_prev, k, dt);
      for (int j = 0; j < 7; ++j) {
        const JointLimits& l = *robot->spec().joints[j].limits;
        EXPECT_GE(last.q[j], l.lower);
        EXPECT_LE(last.q[j], l.upper);
      }
      v_prev = v;
    } else {
      v_prev = Eigen::VectorXd::Zero(7);
    }
    const double lag = (ToolPosition(robot->spec(), last.q) - target).norm();
    if (k >= 10) {
      overshoot = std::max(overshoot, ToolPosition(robot->spec(), last.q).y() - target.y());
      if (last.status == planning::StepStatus::kReached) caught_up = true;
      if (caught_up) {
        EXPECT_EQ(last.status, planning::StepStatus::kReached) << "sample " << k;
      }
    }
    if (last.status == planning::StepStatus::kVelocityLimited ||
        last.status == planning::StepStatus::kAccelerationLimited) {
      ++limited_answers;
      EXPECT_NEAR(last.position_error, lag, 1e-9);
    } else {
      EXPECT_EQ(last.status, planning::StepStatus::kReached) << "sample " << k;
      EXPECT_LE(lag, 1e-5) << "sample " << k;
    }
    q_prev = last.q;
  }
  EXPECT_GT(limited_answers, 3);  // a 15 cm jump takes the Panda several periods
  EXPECT_EQ(last.status, planning::StepStatus::kReached);
  // The joints brake for the target as for a position limit: the tool arrives without swinging
  // past it (1.9 cm past and back without the braking) and stays once it is there.
  EXPECT_LE(overshoot, 0.003);
}

// The same 15 cm jump with every Panda joint also jerk-limited (300 rad/s^3: its acceleration
// may change by 3 rad/s^2 an answer): measured with the test's own differences of the returned
// joint values (j = (a_k - a_{k-1}) / dt), every answer keeps the datasheet's velocities and
// accelerations, the jerk limit and the ranges, and the tool still arrives; without the jerk
// limit the same stream changes an acceleration by over 1000 rad/s^3 (the check can fail).
struct PandaJerkRun {
  double jerk = 0.0, overshoot = 0.0;
  bool reached = false;
};

PandaJerkRun PandaJump(double max_jerk) {
  ChainSpec spec = presets::Panda();
  for (JointSpec& joint : spec.joints) {
    if (joint.limits) joint.limits->max_jerk = max_jerk;
  }
  auto robot = Robot::Create(spec);
  EXPECT_TRUE(robot.ok());
  auto limited = RateLimitedRobotTracker::Create(*robot, RobotIkOptions{}, kPandaReady);
  EXPECT_TRUE(limited.ok()) << limited.status();
  const Eigen::Vector3d p0 = ToolPosition(spec, kPandaReady);
  const double dt = 0.01;
  Eigen::VectorXd q_prev = kPandaReady, v_prev = Eigen::VectorXd::Zero(7);
  Eigen::VectorXd a_prev = Eigen::VectorXd::Zero(7);
  PandaJerkRun run;
  for (int k = 0; k <= 300 && !run.reached; ++k) {
    const Eigen::Vector3d target =
        p0 + (k >= 10 ? Eigen::Vector3d(0.0, 0.15, 0.0) : Eigen::Vector3d::Zero());
    const RobotIkResult answer = limited->StepTo(*ToolTarget::Position(target), k * dt);
    const Eigen::VectorXd v = (answer.q - q_prev) / dt;
    const Eigen::VectorXd a = (v - v_prev) / dt;
    for (int j = 0; j < 7; ++j) {
      const JointLimits& l = *spec.joints[j].limits;
      EXPECT_LE(std::abs(v[j]), l.max_velocity * (1 + 1e-9)) << "sample " << k << " joint " << j;
      EXPECT_LE(std::abs(a[j]), l.max_acceleration * (1 + 1e-6)) << "sample " << k;
      EXPECT_GE(answer.q[j], l.lower);
      EXPECT_LE(answer.q[j], l.upper);
    }
    run.jerk = std::max(run.jerk, ((a - a_prev) / dt).cwiseAbs().maxCoeff());
    if (k >= 10) {
      run.overshoot = std::max(run.overshoot, ToolPosition(spec, answer.q).y() - target.y());
      run.reached = answer.status == planning::StepStatus::kReached;
    }
    q_prev = answer.q;
    v_prev = v;
    a_prev = a;
  }
  return run;
}

TEST(RobotRateLimit, JerkLimitedAnswersKeepEveryLimitAndArrive) {
  const PandaJerkRun limited = PandaJump(300.0);
  EXPECT_TRUE(limited.reached);
  EXPECT_LE(limited.jerk, 300.0 * (1 + 1e-6));
  EXPECT_LE(limited.overshoot, 0.003);
  EXPECT_GT(PandaJump(std::numeric_limits<double>::infinity()).jerk, 1000.0);
}

// The Panda's tool once round a horizontal circle of radius 0.1 m about its ready pose at
// 0.4 m/s, position only and holding the ready orientation, a target every 10 ms: where the
// tracker's way is too fast for one joint, the others make up the rest (the closest state
// within the limits), so the tool stays within 1 cm of the target (position) and 1.5 cm and
// 0.01 rad (pose; the cut way alone lagged 2.4 and 6.8 cm, and 0.08 rad), every answer within
// the datasheet's velocity and acceleration limits (recomputed here from the joint values) and
// the tool measured by the test's own forward kinematics.
class PandaCircleTest : public ::testing::TestWithParam<bool> {};

TEST_P(PandaCircleTest, OtherJointsMakeUpForTheOneAtItsLimit) {
  const bool pose = GetParam();
  auto robot = Robot::Create(presets::Panda());
  ASSERT_TRUE(robot.ok());
  auto limited = RateLimitedRobotTracker::Create(*robot, RobotIkOptions{}, kPandaReady);
  ASSERT_TRUE(limited.ok()) << limited.status();
  const Eigen::Isometry3d ready = ToolFrame(robot->spec(), kPandaReady);
  const double dt = 0.01, radius = 0.1, speed = 0.4;
  const int n = static_cast<int>(std::ceil(2 * M_PI * radius / speed / dt));
  Eigen::VectorXd q_prev, v_prev;
  double max_lag = 0.0, max_turn = 0.0;
  for (int k = 0; k <= n; ++k) {
    const double angle = speed * k * dt / radius;
    ToolTarget target;
    target.position =
        ready.translation() + radius * Eigen::Vector3d(std::cos(angle), std::sin(angle), 0);
    if (pose) target.orientation = Eigen::Quaterniond(ready.linear());
    const RobotIkResult answer = limited->StepTo(target, k * dt);
    ASSERT_EQ(answer.q.size(), 7);
    const Eigen::Isometry3d X = ToolFrame(robot->spec(), answer.q);
    max_lag = std::max(max_lag, (X.translation() - target.position).norm());
    if (pose) {
      max_turn =
          std::max(max_turn, Eigen::AngleAxisd(X.linear() * ready.linear().transpose()).angle());
    }
    if (k > 0) v_prev = ExpectWithinRateLimits(*robot, answer.q, q_prev, v_prev, k, dt);
    q_prev = answer.q;
  }
  EXPECT_LE(max_lag, pose ? 0.015 : 0.01);
  EXPECT_LE(max_turn, 0.01);
}

INSTANTIATE_TEST_SUITE_P(PositionAndPose, PandaCircleTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Pose" : "Position"; });

// A slow line within every limit (the UR5 declares velocities only, so starting from rest is
// within them): the answers are the plain tracker's (Solve, then StepTo).
// The Panda's tool driven at 1 m/s towards a ball whose target stops dead 2 cm short of it: its
// joints cannot stop the tool within 2 cm, so a tracker that follows the target until it stops
// carries the tool into the ball (without the braking check: 1.4 cm deep). Every answer
// must leave room to brake: neither an answer nor the motion between two (the joints
// interpolated linearly, 20 sub-steps, the links as segments from each link pose to the next
// and the tool, the tests' own distances) touches the ball, and the tool then settles on the
// target.
TEST(RobotRateLimit, EveryAnswerLeavesRoomToBrakeBeforeAnObstacle) {
  auto robot = Robot::Create(presets::Panda());
  ASSERT_TRUE(robot.ok());
  const Eigen::Vector3d p0 = ToolPosition(robot->spec(), kPandaReady);
  const Eigen::Vector3d stop = p0 + Eigen::Vector3d(0.0, 0.15, 0.0);
  const double ball_radius = 0.03;
  const Eigen::Vector3d ball = stop + Eigen::Vector3d(0.0, 0.02 + ball_radius, 0.0);
  const planning::Scene scene =
      *planning::Scene::Create({{"ball", planning::Sphere{ball, ball_radius}}});
  auto limited = RateLimitedRobotTracker::Create(*robot, RobotIkOptions{}, kPandaReady, &scene);
  ASSERT_TRUE(limited.ok()) << limited.status();
  auto ball_gap = [&](const Eigen::VectorXd& q) {
    return BallGap(robot->spec(), q, ball, ball_radius);
  };
  const double dt = 0.01;
  Eigen::VectorXd q_prev = kPandaReady;
  double least = std::numeric_limits<double>::infinity();
  RobotIkResult last;
  for (int k = 0; k <= 150; ++k) {
    ToolTarget target;
    target.position = p0 + Eigen::Vector3d(0.0, std::min(0.15, 1.0 * k * dt), 0.0);
    last = limited->StepTo(target, k * dt);
    for (int s = 0; s <= 20; ++s)
      least = std::min(least, ball_gap(q_prev + (last.q - q_prev) * s / 20.0));
    q_prev = last.q;
  }
  EXPECT_GT(least, 0.0);
  EXPECT_EQ(last.status, planning::StepStatus::kReached);
  EXPECT_LT((ToolPosition(robot->spec(), last.q) - stop).norm(), 1e-4);
}

// A start already on the first target is the first answer: the Panda with its collision model
// at a configuration 1.07 cm clear of itself (a bench/paths witness start), whose single-pose
// solve from there wanders off (self-clearance trials near the margin) and fails 1.8 rad away.
TEST(RobotRateLimit, AStartOnTheFirstTargetIsTheFirstAnswer) {
  auto robot = Robot::Create(presets::PandaWithBody());
  ASSERT_TRUE(robot.ok());
  const Eigen::VectorXd q0 =
      (Eigen::VectorXd(7) << 2.0035996129100178, -0.66314962068051331, -1.7285071503621161,
       -2.1804459371834328, 2.5041714631534315, 2.2955947391719134, 2.4513268294832744)
          .finished();
  const Eigen::Isometry3d X = ToolFrame(robot->spec(), q0);
  ToolTarget target;
  target.position = X.translation();
  target.orientation = Eigen::Quaterniond(X.linear());
  auto limited = RateLimitedRobotTracker::Create(*robot, RobotIkOptions{}, q0);
  ASSERT_TRUE(limited.ok()) << limited.status();
  const RobotIkResult first = limited->StepTo(target, 0.0);
  EXPECT_EQ(first.status, planning::StepStatus::kReached);
  EXPECT_EQ((first.q - q0).norm(), 0.0);
}

// Without declared limits (the Panda's rates removed) a tool target inside a ball cannot be
// reached clear: the tracker first stops short (NOT_CONVERGED), then puts the tool on it, 3 cm
// into the ball; Track holds the arm clear instead (the boldest clear blend of its last answer
// and that one, at worst the last answer), IN_COLLISION, and follows again once the target is
// out. Every answer and every motion between two (20 sub-steps, the links as segments, the
// tests' own distances) stays clear.
TEST(RobotRateLimit, WithoutLimitsATargetInsideAnObstacleIsHeldClear) {
  ChainSpec spec = presets::Panda();
  for (JointSpec& joint : spec.joints) {
    if (joint.limits) {
      joint.limits->max_velocity = std::numeric_limits<double>::infinity();
      joint.limits->max_acceleration = std::numeric_limits<double>::infinity();
    }
  }
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(robot.ok()) << robot.status();
  const Eigen::Vector3d p0 = ToolPosition(robot->spec(), kPandaReady);
  const Eigen::Vector3d ball = p0 + Eigen::Vector3d(0.0, 0.1, 0.0);
  const double ball_radius = 0.03;
  const planning::Scene scene =
      *planning::Scene::Create({{"ball", planning::Sphere{ball, ball_radius}}});
  auto limited = RateLimitedRobotTracker::Create(*robot, RobotIkOptions{}, kPandaReady, &scene);
  ASSERT_TRUE(limited.ok()) << limited.status();
  auto ball_gap = [&](const Eigen::VectorXd& q) {
    return BallGap(robot->spec(), q, ball, ball_radius);
  };
  Eigen::VectorXd q_prev = kPandaReady;
  double least = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 30; ++k) {
    ToolTarget target;
    target.position = k >= 10 && k < 15 ? ball : p0;
    const RobotIkResult step = limited->StepTo(target, 0.01 * k);
    for (int s = 0; s <= 20; ++s) {
      least = std::min(least, ball_gap(q_prev + (step.q - q_prev) * s / 20.0));
    }
    q_prev = step.q;
    if (k >= 10 && k < 15) {
      EXPECT_NE(step.status, planning::StepStatus::kReached) << "step " << k;
    }
    if (k >= 20) {
      EXPECT_EQ(step.status, planning::StepStatus::kReached) << "step " << k;
    }
  }
  EXPECT_GE(least, 0.0);
}

TEST(RobotRateLimit, SlowStreamIsThePlainTrackerBitForBit) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  const Eigen::VectorXd ready = (Eigen::VectorXd(6) << 0.0, -1.2, 1.5, -1.8, -1.57, 0.0).finished();
  auto limited = RateLimitedRobotTracker::Create(*robot, RobotIkOptions{}, ready);
  auto plain = RobotTracker::Create(*robot, RobotIkOptions{}, ready);
  ASSERT_TRUE(limited.ok() && plain.ok());
  const Eigen::Vector3d p0 = ToolPosition(robot->spec(), ready);
  // The first target is where the arm starts: the start itself is the first answer, no solve.
  const RobotIkResult first = limited->StepTo(*ToolTarget::Position(p0), 0.0);
  ASSERT_EQ(first.status, planning::StepStatus::kReached);
  ASSERT_EQ(0, std::memcmp(first.q.data(), ready.data(), sizeof(double) * 6));
  for (int k = 1; k <= 50; ++k) {
    const ToolTarget target = *ToolTarget::Position(p0 + Eigen::Vector3d(0.0, 0.001 * k, 0.0));
    const RobotIkResult a = limited->StepTo(target, 0.01 * k);
    const RobotIkResult b = plain->StepTo(target, 0.01);
    ASSERT_EQ(a.status, planning::StepStatus::kReached) << k;
    ASSERT_EQ(a.status, b.status) << k;
    ASSERT_EQ(0, std::memcmp(a.q.data(), b.q.data(), sizeof(double) * 6)) << k;
  }
}

// Track's LATE answer (Brake) on the Panda: chasing a 15 cm jump, the arm brakes for 30
// intervals of 10 ms: every answer LATE, within every joint's range, velocity and acceleration
// limit (the test's own finite differences), no joint speeding up, and at rest by the end; the
// stream then goes on from the braked arm within the limits and catches the target up.
TEST(RobotRateLimit, BrakeSlowsTheArmToRestWithinItsLimits) {
  auto robot = Robot::Create(presets::Panda());
  ASSERT_TRUE(robot.ok());
  auto limited = RateLimitedRobotTracker::Create(*robot, RobotIkOptions{}, kPandaReady);
  ASSERT_TRUE(limited.ok()) << limited.status();
  const Eigen::Vector3d p0 = ToolPosition(robot->spec(), kPandaReady);
  const ToolTarget jumped = *ToolTarget::Position(p0 + Eigen::Vector3d(0.0, 0.15, 0.0));
  const double dt = 0.01;
  Eigen::VectorXd q_prev = limited->StepTo(*ToolTarget::Position(p0), 0.0).q;
  Eigen::VectorXd v_prev = Eigen::VectorXd::Zero(7);
  int k = 1;
  for (; k <= 5; ++k) {
    const RobotIkResult moving = limited->StepTo(jumped, k * dt);
    v_prev = ExpectWithinRateLimits(*robot, moving.q, q_prev, v_prev, k, dt);
    q_prev = moving.q;
  }
  ASSERT_GT(v_prev.cwiseAbs().maxCoeff(), 0.1);  // moving: something to brake
  for (int brake = 1; brake <= 30; ++brake, ++k) {
    const RobotIkResult braked = limited->Brake(jumped, k * dt);
    EXPECT_EQ(braked.status, planning::StepStatus::kLate) << brake;
    ASSERT_EQ(braked.q.size(), 7);
    const Eigen::VectorXd v = ExpectWithinRateLimits(*robot, braked.q, q_prev, v_prev, k, dt);
    for (int j = 0; j < 7; ++j) {
      const JointLimits& l = *robot->spec().joints[j].limits;
      EXPECT_GE(braked.q[j], l.lower);
      EXPECT_LE(braked.q[j], l.upper);
      EXPECT_LE(std::abs(v[j]), std::abs(v_prev[j]) + 1e-9) << "joint " << j << " brake " << brake;
    }
    EXPECT_NEAR(braked.position_error,
                (ToolPosition(robot->spec(), braked.q) - jumped.position).norm(), 1e-9);
    v_prev = v;
    q_prev = braked.q;
  }
  EXPECT_LT(v_prev.cwiseAbs().maxCoeff(), 1e-9);
  RobotIkResult last;
  for (int resumed = 0; resumed < 150; ++resumed, ++k) {
    last = limited->StepTo(jumped, k * dt);
    v_prev = ExpectWithinRateLimits(*robot, last.q, q_prev, v_prev, k, dt);
    q_prev = last.q;
  }
  EXPECT_EQ(last.status, planning::StepStatus::kReached);
}

}  // namespace
}  // namespace ikd::robot
