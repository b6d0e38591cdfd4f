// Joint paths of industrial arms (robot_path.h): tool circles and lines reached at every sample,
// checked by the test's own forward kinematics; least joint motion checked by its optimality
// condition with the test's own Jacobian; closed tool paths give closed joint paths; the rate
// check's scaling makes a too-fast path feasible; determinism and input errors.
#include "ikd/robot/robot_path.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/planning/scene.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/presets.h"
#include "solver/robot/own_capsule_distances.h"
#include "solver/robot/robot_cases.h"
#include "solver/robot/robot_witness.h"

namespace ikd::robot {
namespace {

using ::testing::HasSubstr;

// The test's own forward kinematics: base, then per joint its origin and a turn about its axis,
// then the tool offset (URDF's composition; every preset joint is revolute).
Eigen::Isometry3d Fk(const ChainSpec& spec, const Eigen::VectorXd& q) {
  Eigen::Isometry3d X = spec.X_WB;
  for (size_t k = 0; k < spec.joints.size(); ++k) {
    X = X * spec.joints[k].X_PJ * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
  }
  return X * spec.X_FT;
}

// Central differences of Fk: translation rows, then the rotation vector of the turn.
Eigen::MatrixXd FdJacobian(const ChainSpec& spec, const Eigen::VectorXd& q, bool pose) {
  const double h = 1e-6;
  Eigen::MatrixXd J(pose ? 6 : 3, q.size());
  for (int k = 0; k < q.size(); ++k) {
    Eigen::VectorXd a = q, b = q;
    a[k] += h, b[k] -= h;
    const Eigen::Isometry3d Xa = Fk(spec, a), Xb = Fk(spec, b);
    J.col(k).head<3>() = (Xa.translation() - Xb.translation()) / (2 * h);
    if (pose) {
      const Eigen::AngleAxisd turn(Xa.linear() * Xb.linear().transpose());
      J.col(k).tail<3>() = turn.angle() * turn.axis() / (2 * h);
    }
  }
  return J;
}

struct Path {
  std::vector<ToolTarget> targets;
  std::vector<double> times;
};

// A horizontal circle of `radius` about the ready pose's tool, or a straight line of that length
// through it towards the base (inside the workspace, as the ready pose is), at `speed`, sampled
// at 100 Hz; the tool orientation held at the ready pose's (pose) or free. The first sample is
// where the arm must be when the path starts (the move there is not part of the path).
Path ToolPath(const Eigen::Isometry3d& X0, bool circle, double radius, double speed, bool pose) {
  const Eigen::Vector3d p0 = X0.translation();
  const Eigen::Vector3d inward = Eigen::Vector3d(-p0.x(), -p0.y(), 0.0).normalized();
  const Eigen::Vector3d side = Eigen::Vector3d::UnitZ().cross(inward);
  const double length = circle ? 2 * std::numbers::pi * radius : radius;
  const int n = static_cast<int>(std::ceil(length / speed / 0.01));
  Path path;
  for (int k = 0; k <= n; ++k) {
    const double s = double(k) / n;
    const double angle = 2 * std::numbers::pi * s;
    ToolTarget target;
    target.position =
        circle ? Eigen::Vector3d(p0 + radius * (std::cos(angle) * inward + std::sin(angle) * side))
               : Eigen::Vector3d(p0 + (s - 0.5) * radius * inward);
    if (pose) target.orientation = Eigen::Quaterniond(X0.linear());
    path.targets.push_back(target);
    path.times.push_back(s * length / speed);
  }
  return path;
}

class RobotPathTest : public ::testing::TestWithParam<RobotCase> {
 protected:
  void SetUp() override {
    auto robot = Robot::Create(GetParam().make());
    ASSERT_TRUE(robot.ok()) << robot.status();
    robot_.emplace(*std::move(robot));
    q0_ = Eigen::Map<const Eigen::VectorXd>(GetParam().ready.data(), robot_->num_joints());
  }
  RobotPathResult Plan(const Path& path) {
    auto plan = PlanRobotPath(*robot_, nullptr, path.targets, path.times, RobotIkOptions{}, q0_);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *std::move(plan) : RobotPathResult{};
  }
  std::optional<Robot> robot_;
  Eigen::VectorXd q0_;
};

// Circles and lines of 5-15 cm at 0.1-0.2 m/s, position-only and full pose: every sample
// REACHED (reached and within the declared velocity and acceleration limits), by the test's own
// forward kinematics within 1e-5 m / 1e-5 rad. (At 0.3 m/s the iiwa14 holding its ready pose's
// orientation needs up to 1.26 x its joint speed limits on the 15 cm paths: flagged, with the
// feasible scaling, as TooFastPathsGiveTheFeasibleTimeScaling checks.)
TEST_P(RobotPathTest, CirclesAndLinesAreReachedAtEverySampleWithinTheLimits) {
  const Eigen::Isometry3d X0 = Fk(robot_->spec(), q0_);
  for (bool pose : {false, true}) {
    for (bool circle : {true, false}) {
      for (double size : {0.05, 0.15}) {
        for (double speed : {0.1, 0.2}) {
          const Path path = ToolPath(X0, circle, size, speed, pose);
          const RobotPathResult plan = Plan(path);
          SCOPED_TRACE(::testing::Message()
                       << (pose ? "pose " : "position ") << (circle ? "circle " : "line ") << size
                       << " m at " << speed << " m/s");
          ASSERT_EQ(plan.samples.size(), path.targets.size());
          EXPECT_TRUE(plan.summary.IsSolutionUsable()) << plan.summary.BriefReport();
          for (size_t k = 0; k < plan.samples.size(); ++k) {
            const Eigen::Isometry3d X = Fk(robot_->spec(), plan.samples[k].q);
            EXPECT_LE((X.translation() - path.targets[k].position).norm(), 1e-5) << k;
            if (pose) {
              const Eigen::AngleAxisd off(X.linear().transpose() *
                                          path.targets[k].orientation->toRotationMatrix());
              EXPECT_LE(off.angle(), 1e-5) << k;
            }
          }
        }
      }
    }
  }
}

// A declared jerk limit is kept by the optimizer (least jerk and a hinge above kRateAim of it, as
// for accelerations): the Panda's tool round a 15 cm circle at 0.2 m/s peaks at 5.6 rad/s^3
// without one (the test's own third differences of the returned joint values); with 2 rad/s^3
// declared on every joint every sample is REACHED within it.
double LargestJerk(const std::vector<RobotIkResult>& samples, const std::vector<double>& times) {
  double largest = 0.0;
  for (size_t k = 3; k < samples.size(); ++k) {
    const double dt = times[k] - times[k - 1];
    const Eigen::VectorXd third =
        samples[k].q - 3 * samples[k - 1].q + 3 * samples[k - 2].q - samples[k - 3].q;
    largest = std::max(largest, third.cwiseAbs().maxCoeff() / (dt * dt * dt));
  }
  return largest;
}

TEST(RobotPathOptimizer, ADeclaredJerkLimitIsKept) {
  const Eigen::VectorXd q0 =
      (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished();
  auto plan = [&](double max_jerk) {
    ChainSpec spec = presets::Panda();
    for (JointSpec& joint : spec.joints) joint.limits->max_jerk = max_jerk;
    auto robot = Robot::Create(spec);
    EXPECT_TRUE(robot.ok()) << robot.status();
    const Path path = ToolPath(Fk(spec, q0), true, 0.15, 0.2, false);
    auto result = PlanRobotPath(*robot, nullptr, path.targets, path.times, RobotIkOptions{}, q0);
    EXPECT_TRUE(result.ok()) << result.status();
    return std::make_pair(*std::move(result), path.times);
  };
  const auto [free, free_times] = plan(std::numeric_limits<double>::infinity());
  EXPECT_GT(LargestJerk(free.samples, free_times), 4.0);
  const auto [limited, times] = plan(2.0);
  EXPECT_TRUE(limited.summary.IsSolutionUsable()) << limited.summary.BriefReport();
  EXPECT_LE(LargestJerk(limited.samples, times), 2.0 * (1 + 1e-6));
}

// Least joint motion: away from the joint limits and with the posture reached, a path step of
// the tracker (RobotTracker::StepTo, the path's start before its optimization, and Track's
// step) moves W dq in the row space of the tool Jacobian (the first-order condition of
// min dq^T W dq s.t. J dq = dx): its part in J's null space is small against itself.
TEST_P(RobotPathTest, PositionStepsTakeTheLeastWeightedJointMotion) {
  const Eigen::Isometry3d X0 = Fk(robot_->spec(), q0_);
  const Path path = ToolPath(X0, false, 0.15, 0.1, /*pose=*/false);
  RobotIkOptions options;
  options.starts = SolveStarts::kGivenFirst;  // as PlanRobotPath's first sample
  auto tracker = RobotTracker::Create(*robot_, options, q0_);
  ASSERT_TRUE(tracker.ok()) << tracker.status();
  std::vector<Eigen::VectorXd> q{tracker->Solve(path.targets[0]).q};
  for (size_t k = 1; k < 4; ++k) {
    const RobotIkResult step = tracker->StepTo(path.targets[k], path.times[k] - path.times[k - 1]);
    ASSERT_EQ(step.status, planning::StepStatus::kReached) << k;
    q.push_back(step.q);
  }
  double v_ref = std::numeric_limits<double>::infinity();
  for (const JointSpec& j : robot_->spec().joints) v_ref = std::min(v_ref, j.limits->max_velocity);
  Eigen::VectorXd w(robot_->num_joints());
  for (int k = 0; k < w.size(); ++k) {
    w[k] = std::pow(v_ref / robot_->spec().joints[k].limits->max_velocity, 2);
  }
  // Early steps: the posture pull only acts once the path has moved the arm off it.
  for (size_t k = 1; k < 4; ++k) {
    const Eigen::VectorXd dq = q[k] - q[k - 1];
    const Eigen::MatrixXd J = FdJacobian(robot_->spec(), q[k - 1], false);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(J, Eigen::ComputeFullV);
    const Eigen::MatrixXd null_space = svd.matrixV().rightCols(w.size() - 3);
    const Eigen::VectorXd weighted = w.asDiagonal() * dq;
    EXPECT_LE((null_space.transpose() * weighted).norm(), 0.02 * weighted.norm()) << k;
  }
}

// A closed tool path (three turns of a 15 cm circle) brings a redundant arm's joints back: the
// arm ends where it started, and the turns pass the tool's start with the same joint values
// (resolved rates alone drift 0.1 rad a turn on the Panda). The path's optimization may move
// the turns' middle off the start, as the first turn's transient asks, but not from turn to turn.
TEST_P(RobotPathTest, ClosedToolPathsGiveClosedJointPaths) {
  const Eigen::Isometry3d X0 = Fk(robot_->spec(), q0_);
  Path path = ToolPath(X0, true, 0.15, 0.2, /*pose=*/false);
  const size_t turn = path.targets.size() - 1;
  for (int again = 1; again <= 2; ++again) {
    for (size_t k = 1; k <= turn; ++k) {
      path.targets.push_back(path.targets[k]);
      path.times.push_back(path.times[again * turn] + path.times[k]);
    }
  }
  const RobotPathResult plan = Plan(path);
  ASSERT_TRUE(plan.summary.IsSolutionUsable()) << plan.summary.BriefReport();
  auto apart = [&](size_t a, size_t b) {
    return (plan.samples[a].q - plan.samples[b].q).cwiseAbs().maxCoeff();
  };
  EXPECT_LE(apart(3 * turn, 0), 0.01);
  EXPECT_LE(apart(2 * turn, turn), 1e-4);  // measured: under 7e-6
}

// Too fast a circle is flagged, not refused: its samples say VELOCITY_ or
// ACCELERATION_LIMITED, the summary's ratios match the test's own finite differences,
// and the path stretched by the feasible scaling is within every limit.
TEST_P(RobotPathTest, TooFastPathsGiveTheFeasibleTimeScaling) {
  const Eigen::Isometry3d X0 = Fk(robot_->spec(), q0_);
  Path path = ToolPath(X0, true, 0.1, 2.0, /*pose=*/true);
  const RobotPathResult fast = Plan(path);
  const RobotPathSummary& s = fast.summary;
  EXPECT_EQ(s.reached + s.velocity_limited + s.acceleration_limited, s.samples);
  EXPECT_GT(s.velocity_limited + s.acceleration_limited, 0);
  double max_ratio = 0.0;
  for (size_t k = 1; k < fast.samples.size(); ++k) {
    const double dt = path.times[k] - path.times[k - 1];
    for (int j = 0; j < robot_->num_joints(); ++j) {
      const double v = (fast.samples[k].q[j] - fast.samples[k - 1].q[j]) / dt;
      max_ratio = std::max(max_ratio, std::abs(v) / robot_->spec().joints[j].limits->max_velocity);
    }
  }
  EXPECT_NEAR(s.max_velocity_ratio, max_ratio, 1e-9 * max_ratio);
  ASSERT_GT(s.feasible_time_scaling, 1.0);
  for (double& t : path.times) t *= 1.02 * s.feasible_time_scaling;
  const RobotPathResult slow = Plan(path);
  EXPECT_TRUE(slow.summary.IsSolutionUsable()) << slow.summary.BriefReport();
  EXPECT_LE(slow.summary.feasible_time_scaling, 1.0);
}

TEST_P(RobotPathTest, SameSeedSameBytes) {
  const Path path = ToolPath(Fk(robot_->spec(), q0_), true, 0.1, 0.2, false);
  const RobotPathResult a = Plan(path), b = Plan(path);
  ASSERT_EQ(a.samples.size(), b.samples.size());
  for (size_t k = 0; k < a.samples.size(); ++k) {
    ASSERT_EQ(0, std::memcmp(a.samples[k].q.data(), b.samples[k].q.data(),
                             sizeof(double) * a.samples[k].q.size()));
  }
}

// The tool from p0 3 cm along y in 1 s, position targets every 10 ms.
std::pair<std::vector<ToolTarget>, std::vector<double>> SlowLineAlongY(const Eigen::Vector3d& p0) {
  std::vector<ToolTarget> targets;
  std::vector<double> times;
  for (int k = 0; k <= 100; ++k) {
    targets.push_back(*ToolTarget::Position(p0 + Eigen::Vector3d(0.0, 0.0003 * k, 0.0)));
    times.push_back(0.01 * k);
  }
  return {targets, times};
}

// A Panda's tool moves 3 cm along a line with a ball 5 mm from its third link (inside the 10 mm
// margin), random trials off: the path steps' pull away from obstacles alone turns the links
// out of the margin (measured with the test's own distance), where the least joint motion
// without the scene leaves the link where it was.
TEST(RobotPathAvoidance, PathStepsTurnTheLinksAwayFromObstacles) {
  ChainSpec spec = presets::Panda();
  spec.link_radii.assign(7, 0.05);
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(robot.ok()) << robot.status();
  const Eigen::VectorXd q0 =
      (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished();
  const auto segments = LinkSegments(robot->spec(), q0);
  const Eigen::Vector3d a = segments[2].first, b = segments[2].second;
  const Eigen::Vector3d side = (b - a).cross(Eigen::Vector3d::UnitZ()).normalized();
  const Eigen::Vector3d centre = 0.5 * (a + b) + (0.05 + 0.005 + 0.05) * side;
  auto scene = planning::Scene::Create({{"ball", planning::Sphere{centre, 0.05}}});
  ASSERT_TRUE(scene.ok());
  ASSERT_NEAR(BallClearance(robot->spec(), q0, 2, centre, 0.05, 0.05), 0.005, 1e-9);
  const Eigen::Vector3d p0 = Fk(robot->spec(), q0).translation();
  const auto [targets, times] = SlowLineAlongY(p0);
  RobotIkOptions options;
  options.trials_per_step = 0;
  auto with = PlanRobotPath(*robot, &*scene, targets, times, options, q0);
  auto without = PlanRobotPath(*robot, nullptr, targets, times, options, q0);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_TRUE(with->summary.IsSolutionUsable()) << with->summary.BriefReport();
  auto clearance = [&](const RobotPathResult& plan) {
    double least = std::numeric_limits<double>::infinity();
    for (int link = 0; link < 7; ++link) {
      least = std::min(
          least, BallClearance(robot->spec(), plan.samples.back().q, link, centre, 0.05, 0.05));
    }
    return least;
  };
  EXPECT_GE(clearance(*with), options.safety_margin);
  EXPECT_LT(clearance(*without), options.safety_margin);
}

// Link k's frame at q by this test's own walk down the chain (no fixed joints in the presets).
Eigen::Isometry3d OwnLinkFrame(const ChainSpec& spec, const Eigen::VectorXd& q, int link) {
  Eigen::Isometry3d X = spec.X_WB;
  for (int k = 0; k <= link; ++k) {
    X = X * spec.joints[k].X_PJ * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
  }
  return X;
}

// Collision geometry off the joint axes (link_shapes, as a URDF's <collision> gives it): the
// Panda's joint-origin capsules plus a 4 cm "camera" ball 15 cm out along its fourth joint's axis,
// and a ball obstacle 5 mm from the camera (inside the 10 mm margin) and clear of every link
// capsule. The path's pull turns the camera out of the margin (the test's own forward kinematics
// and distance); the same arm without the camera among its shapes leaves it there.
TEST(RobotPathAvoidance, LinkShapesOffTheAxesAreKeptClear) {
  ChainSpec plain = presets::Panda();
  plain.link_radii.assign(7, 0.05);
  ChainSpec shaped = presets::Panda();
  shaped.link_shapes = LinkShapesOf(plain);
  shaped.check_self_collision = false;                  // the obstacle is the point here
  const Eigen::Vector3d camera_offset(0.0, 0.0, 0.15);  // in link 3's frame: on its axis
  constexpr double kCamera = 0.04, kBall = 0.05;
  shaped.link_shapes[3].push_back({camera_offset, camera_offset, kCamera});
  ChainSpec bare = shaped;
  bare.link_shapes[3].pop_back();
  const Eigen::VectorXd q0 =
      (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished();
  auto camera_at = [&](const Eigen::VectorXd& q) {
    return Eigen::Vector3d(OwnLinkFrame(shaped, q, 3) * camera_offset);
  };
  // The ball sits beyond the camera, away from link 3's joint origin.
  const Eigen::Vector3d c0 = camera_at(q0);
  const Eigen::Vector3d out = (c0 - OwnLinkFrame(shaped, q0, 3).translation()).normalized();
  const Eigen::Vector3d centre = c0 + (kCamera + 0.005 + kBall) * out;
  for (int link = 0; link < 7; ++link) {
    const Eigen::Vector3d a = OwnLinkFrame(plain, q0, link).translation();
    const Eigen::Vector3d b =
        link < 6 ? OwnLinkFrame(plain, q0, link + 1).translation() : Fk(plain, q0).translation();
    const double length2 = (b - a).squaredNorm();
    const double t = length2 > 0 ? std::clamp((centre - a).dot(b - a) / length2, 0.0, 1.0) : 0.0;
    ASSERT_GT((a + t * (b - a) - centre).norm() - kBall - 0.05, 0.02) << link;
  }
  auto scene = planning::Scene::Create({{"ball", planning::Sphere{centre, kBall}}});
  ASSERT_TRUE(scene.ok());
  const Eigen::Vector3d p0 = Fk(shaped, q0).translation();
  const auto [targets, times] = SlowLineAlongY(p0);
  RobotIkOptions options;
  options.trials_per_step = 0;
  auto camera_clearance = [&](const RobotPathResult& plan) {
    double least = std::numeric_limits<double>::infinity();
    for (const auto& sample : plan.samples) {
      least = std::min(least, (camera_at(sample.q) - centre).norm() - kCamera - kBall);
    }
    return least;
  };
  auto with = PlanRobotPath(*Robot::Create(shaped), &*scene, targets, times, options, q0);
  auto without = PlanRobotPath(*Robot::Create(bare), &*scene, targets, times, options, q0);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_TRUE(with->summary.IsSolutionUsable()) << with->summary.BriefReport();
  EXPECT_GE(camera_clearance(*with), 0.0);
  EXPECT_GE((camera_at(with->samples.back().q) - centre).norm() - kCamera - kBall,
            options.safety_margin);
  EXPECT_LT((camera_at(without->samples.back().q) - centre).norm() - kCamera - kBall,
            options.safety_margin);
}

// A scenario of bench/paths (robot_witness.h; a UR5's unless the case says otherwise): the
// plan must be clear at every sample (the test's own distances), its tool on the witness's
// within 1e-9 m, and within the datasheet's joint, velocity and acceleration limits (the test's
// own differences), from the first sample where the witness starts.
// `starts`: the RobotPathSummary::start range the plan must come from (robot_path.h).
// `plan_out`, where given, gets the plan.
void ExpectPlanClearWhereTheWitnessIs(const WitnessCase& c, std::pair<int, int> starts = {0, 7},
                                      RobotPathResult* plan_out = nullptr) {
  const WitnessScenario s = MakeWitnessScenario(c);
  ASSERT_TRUE(s.robot && s.scene);
  double witness_clearance = std::numeric_limits<double>::infinity();
  for (const Eigen::VectorXd& q : s.witness) {
    witness_clearance = std::min(witness_clearance, s.Clearance(q));
  }
  EXPECT_GE(witness_clearance, 0.03);
  auto plan =
      PlanRobotPath(*s.robot, &*s.scene, s.targets, s.times, RobotIkOptions{}, s.witness.front());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->summary.IsSolutionUsable()) << plan->summary.BriefReport();
  EXPECT_GE(plan->summary.start, starts.first);
  EXPECT_LE(plan->summary.start, starts.second);
  // The first sample is where the arm stands (q0 is on the first target): no hidden jump.
  EXPECT_LT((plan->samples[0].q - s.witness.front()).cwiseAbs().maxCoeff(), 1e-6);
  ExpectOnTheWitnessToolPath(s, plan->samples, /*rates=*/true);
  if (plan_out != nullptr) *plan_out = *std::move(plan);
}

// ur5-position-obstacles #41 (seed 1): the tracker alone squeezes its links past the balls (6
// samples in collision, the speed 1.25x the UR5's limits); the widened margins get round them.
TEST(RobotPathAvoidance, PlanIsClearWhereTheWitnessIs) {
  ExpectPlanClearWhereTheWitnessIs(
      {{{-2.6099281238890901, 0.14943040770431046, 0.022190390878248277, 0.010400356335447733,
         4.9983326788556237, 3.0431729684309068, 4.0929782994664343},
        {-0.2007763423792559, 0.0096685489842068002, 0.0099519119574337702, 0.0030809415719905081,
         1.2298048137508362, 4.8239631661744005, 5.0401687134393898},
        {5.0047465961155737, 0.40668636000817221, 0.024897564243856092, 0.035370895360160401,
         2.3772669093948302, 2.9027038599291388, 5.6048015983766222},
        {-0.75727422769851671, 0.34305078051986604, 0.090386944136003192, 0.021399998585205301,
         1.4192676570969827, 1.0799848669742065, 2.6251529109256424},
        {-1.2124945680524002, 0.21954621488281645, 0.010193543684542491, 0.0091447355310580094,
         4.038048969899533, 3.953277696940837, 2.3098759159030551},
        {0.087899586483588088, 0.26984633602691899, 0.021325044351464373, 0.029865365516244628,
         2.4521989910706332, 3.1262513808930859, 1.1387054804284147}},
       {{0.21991420193750311, 0.10648618301274713, 0.66779197604797991, 0.059692426632416015},
        {0.083068983197012974, 0.36680635268907913, 0.58315519959379303, 0.042224370287030757},
        {0.042766201377553548, 0.25215674770143792, 0.60216544806197714, 0.051853936693858224},
        {0.29828385792286682, 0.094401432263533411, 0.29559465653320205, 0.038291809227914989},
        {0.31729537550374071, 0.15261499905360859, 0.68415050396166543, 0.050357949437335917},
        {0.12235027477049819, 0.1503601997826195, 0.66160602547297165, 0.070344159302298814}}});
}

// ur5-position-obstacles #21 (seed 3): forward, the links meet a ball (13 samples in
// collision). Until the optimizer solved its steps again with refused samples held, only the
// backward join (step 5, start 7) passed it; now the optimized start 1 does too, so any start
// may give the plan (path_backward_test.cc checks the join itself on this scenario).
TEST(RobotPathAvoidance, PlanPassesTheBallForwardMeets) {
  ExpectPlanClearWhereTheWitnessIs(kForwardMeetsABall);
}

// ur5-position-obstacles #37 (seed 8): every start collides or, with a widened margin, solved
// its first sample 0.47 rad from q0 (a jump no rate check saw) and ended 2.3x over the velocity
// limits; the widened tracker taking up the path from the first sample passes within them.
TEST(RobotPathAvoidance, WidenedMarginStartsFromTheFirstSample) {
  ExpectPlanClearWhereTheWitnessIs(
      {{{-0.97357406602782337, 0.10326227742200887, 0.055149784793772541, 0.0090544997243163939,
         0.6939284489242189, 5.7034256752543753, 0.93436632341477888},
        {-1.9119030851763235, 0.34057995468024049, 0.015481863424174095, 0.038384315740776304,
         2.4346394314452025, 4.2815085362239973, 3.2700892233581365},
        {-4.140675453372463, 0.033192840586746465, 0.016295545337818913, 0.014201686815271857,
         6.1295892170742272, 3.2258783480638678, 5.4304973749583638},
        {1.5976515684357384, 0.41188647742960643, 0.064938498537061837, 0.0128078351841241,
         4.4630413945420271, 6.2104248990374007, 4.5707275173794235},
        {-5.4242180194050373, 0.03770523675758683, 0.017073337670991482, 0.026910024130740062,
         2.0664219137437843, 1.2290791930721601, 3.1744849495331513},
        {3.7776579240522796, 0.19699150817217193, 0.056543210674939837, 0.009644176452984262,
         5.1012426105430366, 4.3807677913468792, 2.1584268442277139}},
       {{-0.29685434904218205, 0.18170872940872662, 0.51312439567262835, 0.043644005996681293},
        {-0.19103876117908158, 0.26222002795441335, 0.54660713063182009, 0.069245568468286417},
        {-0.16571143369180169, -0.054955610909557639, 0.60903468663422622, 0.064333032096169418},
        {-0.20098815437765177, 0.14308013508265741, 0.58894369918232947, 0.047200659882820108},
        {-0.35725074322098727, -0.015159553339870679, 0.46031801891402663, 0.075740377157816591},
        {-0.10064766542828918, 0.16086358508942553, 0.56701231902579174, 0.048277405726978861}}},
      {1, 3});
}

// ur5-position-obstacles #8 (seed 3): from the first sample every start collides; the widened
// tracker's own first solve gets round the balls, and the optimizer eases the arm from q0 into
// its posture and, with the end free, out of it (before: the end held, 1.38x the velocity
// limit over the last 9 samples, after a hidden 0.47 rad jump at the first).
TEST(RobotPathAvoidance, WidenedMarginEasedInFromTheFirstSample) {
  ExpectPlanClearWhereTheWitnessIs(
      {{{1.0797565660775534, 0.016279619181347547, 0.017241850144588934, 0.016332174910998642,
         2.873055341861491, 6.1259793712988104, 4.9100222114292702},
        {-2.0836177822937123, 0.41932374162708835, 0.063462107438866988, 0.00065445124790960833,
         3.2260990960857119, 4.6523649494952917, 3.4870176897974714},
        {-5.3087600308402818, 0.090733843778198556, 0.035548045420278555, 0.0077785911521785784,
         4.8846106088565335, 2.9733588353598228, 3.7098438820766488},
        {-2.0411852982076941, 0.11234097785977587, 0.003191589020101551, 0.01491043448268319,
         3.482856920019207, 4.5371006769514919, 2.8987864357324855},
        {-1.11328337487888, 0.37376305684417749, 0.0085994253339458093, 0.023060182772166964,
         5.0262949159877097, 3.2429708653269458, 5.1919146965591727},
        {3.1277628698712112, 0.034910667379737984, 0.001205140050018092, 8.3074391482326616e-05,
         2.2994859701763555, 0.23440737082626362, 5.043658358761486}},
       {{0.099888986110369296, -0.25179542906574631, 0.27965808283574978, 0.053228337119304719},
        {0.10739786901418708, -0.34771690587129861, 0.38410115071859247, 0.061845743693298767},
        {0.11264641981075078, -0.32599353022084532, 0.70548552016134591, 0.039619704373025408},
        {0.12219721521865479, -0.33773488503128174, 0.42811355404266255, 0.062195068589869743},
        {0.12155288149838958, -0.33016533596820946, 0.33949969113316159, 0.049900690614901613}}},
      {4, 6});
}

// panda-position-obstacles #17 (seed 17): start 0 passes the balls clear but 22x the
// witness's acceleration on a stretch of 24 samples (its time scaling beyond 3); the other
// starts, now tried where at most 2/3 of the samples are over, meet every limit.
TEST(RobotPathAvoidance, StretchOverTheLimitsTriesTheOtherStarts) {
  WitnessCase c{
      {{-1.8401968062901748, 0.022264389136120808, 0.01336183477784318, 0.024185223195152813,
        2.3613199452936766, 5.1906912499782152, 2.2017178543530385},
       {-0.97722812590362695, 0.031107429204414613, 0.047924318546346913, 0.020648636648956369,
        3.6821256442700263, 1.7393744053277091, 5.4847202982025882},
       {0.40200274943359826, 0.28289823837609235, 0.0066089042058630545, 0.020172615696084945,
        5.5552133401321093, 3.7000174977362299, 4.4579109733615212},
       {-0.48769366802085434, 0.14130631299506832, 0.050927682861822345, 0.036740442840969813,
        1.6950860265814609, 2.6570591369777867, 4.2388895867335492},
       {-1.0759538889542433, 0.20926981713659232, 0.02794357325361102, 0.032901898174240496,
        5.8975015437050624, 2.2624024331011161, 1.7500608275329024},
       {1.4188538212508579, 0.05537185987316167, 0.070490656267948842, 0.029671159539483776,
        5.6854487954355042, 2.9557821395607999, 5.7940789413319447},
       {-1.2539653293962019, 0.2553751957587036, 0.089006018634641193, 0.017391300998999423,
        5.8727400689315292, 3.7846902908949054, 3.7735532603784891}},
      {{0.32777734490479893, 0.36471527045335778, 0.65486492025424181, 0.059226362132529554},
       {0.36861374276575776, 0.293213702928739, 0.75537370129263326, 0.066716250963623186},
       {0.10206181468083818, 0.074431310901801648, 0.5434922186541904, 0.030660144459372679},
       {0.0026281447559959592, 0.33151455957411158, 0.36294294554201495, 0.072455871452665827}},
      presets::Panda()};
  ExpectPlanClearWhereTheWitnessIs(c, {1, 6});
}

// ur5-position #45 (seed 12, no balls): the tool passes close to the base axis, where the
// tracker's least joint motion winds the wrist round until the base has to spin (2.6x its
// speed limit); no start nor the optimizer gets out of that posture (1.17x). The ladder (step
// 6) keeps other postures alive until the path shows which one it needs.
TEST(RobotPathLadder, ShoulderSingularityTakesTheLadder) {
  ExpectPlanClearWhereTheWitnessIs(kNearTheBaseAxis, {8, 8});
}

// ur5-position-obstacles #3 (seed 17): every start passes the balls but 1.34x over the speed
// limits on 20 samples; the ladder's postures, each clear by the margin, get round within them.
TEST(RobotPathLadder, LadderPassesTheBallsWithinTheLimits) {
  ExpectPlanClearWhereTheWitnessIs(kAmongBalls, {8, 8});
}

// ur5-position-obstacles #13 (seed 14): every start is within the limits but runs a joint at
// 0.98x its speed limit (2.1x the witness's), above the optimizer's aim of 0.9; the ladder
// finds a way with room to spare.
TEST(RobotPathLadder, AboveTheAimTakesTheLadder) {
  const WitnessCase c{
      {{3.9074519455565655, 0.016813143488814616, 0.043980748123181257, 0.030254007108566974,
        4.294691824188976, 5.3351229962602407, 5.0617938582027424},
       {-1.6973542595937001, 0.005615271459363024, 0.048141852883171292, 0.0031376686016620554,
        3.8027596946218254, 4.2671008909136257, 6.2344682703782652},
       {0.45424535180155701, 0.21707521876524977, 0.081207200289481668, 0.034817383472782841,
        2.7061525490616929, 4.5704696815963368, 1.4603337697086771},
       {-3.1523241158589048, 0.13072671645894574, 0.051005373113311971, 0.017781075976839433,
        0.076836508082114369, 1.4233088045775701, 0.86879352223782347},
       {-5.3936143172533484, 0.13405121447450785, 0.0727824061487964, 0.011492546303109025,
        2.1201108615438278, 2.1615580032591537, 1.3898213283478393},
       {3.2007742402785944, 0.085196122262963456, 0.030173951481782313, 0.034574022178706046,
        3.0087577467011677, 4.6054695245039108, 4.5707820179532881}},
      {{-0.14588139478055762, 0.031677994859367578, 0.4130911194561257, 0.04035661125021487},
       {-0.10370988516399625, -0.17899310569327007, 0.65549101291915512, 0.070108984003568298},
       {-0.25652349315804179, -0.12951336056386314, 0.93234142004359688, 0.062998306134700643}}};
  RobotPathResult plan;
  ExpectPlanClearWhereTheWitnessIs(c, {8, 8}, &plan);
  const WitnessScenario s = MakeWitnessScenario(c);
  EXPECT_LT(TopSpeedRatio(s.spec, JointValues(plan.samples), s.times), 0.9);
}

// The test's own link frames (each moving joint's link after its turn, as link_shapes are
// given in) and the least gap of the links' capsules from a ball (own_capsule_distances.h).
double ShapedBallClearance(const ChainSpec& spec, const Eigen::VectorXd& q,
                           const Eigen::Vector4d& ball) {
  double least = std::numeric_limits<double>::infinity();
  Eigen::Isometry3d X = spec.X_WB;
  for (size_t k = 0; k < spec.joints.size(); ++k) {
    X = X * spec.joints[k].X_PJ * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
    for (const LinkShape& c : spec.link_shapes[k]) {
      least = std::min(
          least, test::DistanceToSegment(ball.head<3>(), X * c.a, X * c.b) - c.radius - ball[3]);
    }
  }
  return least;
}

// A scenario of bench/paths on an arm with its collision model (a UR5's unless the case says
// otherwise): the witness (joint j = c_j + sum_m a_jm sin(pi m t + phi_jm) + r_j smoothstep(t /
// 0.8 s), the -blocking kinds' change of posture over the first 0.8 s; per joint c, a_1..a_3,
// phi_1..phi_3, r) passes the balls (x, y, z, radius) 3 cm clear; its tool positions, or with
// `pose` its tool poses, are the targets.
struct RampedCase {
  std::vector<std::array<double, 8>> witness;
  std::vector<Eigen::Vector4d> balls;
  ChainSpec spec = presets::Ur5WithBody();
  bool pose = false;
};

struct RampedPlan {
  std::vector<Eigen::VectorXd> witness;
  std::vector<double> times;
  RobotPathResult plan;
};

// The case planned from the witness's start: usable, every tool on the witness's within 1e-9 m
// (and 1e-9 rad), clear of the balls at every sample and at 8 points of every motion between two
// (the test's own frames and distances).
void PlanRampedCase(const RampedCase& c, RampedPlan& out) {
  const ChainSpec& spec = c.spec;
  auto robot = Robot::Create(spec);
  ASSERT_TRUE(robot.ok()) << robot.status();
  auto scene = BallScene(c.balls);
  ASSERT_TRUE(scene.ok()) << scene.status();
  std::vector<ToolTarget> targets;
  const int n = static_cast<int>(c.witness.size());
  for (int k = 0; k <= 200; ++k) {
    const double t = 0.01 * k, x = std::min(1.0, t / 0.8);
    Eigen::VectorXd q(n);
    for (int j = 0; j < n; ++j) {
      const std::array<double, 8>& w = c.witness[j];
      q[j] = w[0] + w[7] * x * x * (3.0 - 2.0 * x);
      for (int m = 0; m < 3; ++m)
        q[j] += w[1 + m] * std::sin(std::numbers::pi * (m + 1) * t + w[4 + m]);
    }
    out.witness.push_back(q);
    const Eigen::Isometry3d X = Fk(spec, q);
    targets.push_back(c.pose ? *ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()))
                             : *ToolTarget::Position(X.translation()));
    out.times.push_back(t);
  }
  auto clearance = [&](const Eigen::VectorXd& q) {
    double least = std::numeric_limits<double>::infinity();
    for (const Eigen::Vector4d& b : c.balls)
      least = std::min(least, ShapedBallClearance(spec, q, b));
    return least;
  };
  for (const Eigen::VectorXd& q : out.witness) ASSERT_GE(clearance(q), 0.03);
  auto plan = PlanRobotPath(*robot, &*scene, targets, out.times, RobotIkOptions{}, out.witness[0]);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->summary.IsSolutionUsable()) << plan->summary.BriefReport();
  double least = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < plan->samples.size(); ++k) {
    const Eigen::Isometry3d X = Fk(spec, plan->samples[k].q), W = Fk(spec, out.witness[k]);
    EXPECT_LT((X.translation() - W.translation()).norm(), 1e-9) << "sample " << k;
    if (c.pose) {
      EXPECT_LT(Eigen::AngleAxisd(X.linear().transpose() * W.linear()).angle(), 1e-9)
          << "sample " << k;
    }
    for (int sub = 0; sub < 8 && k > 0; ++sub) {
      const Eigen::VectorXd& a = plan->samples[k - 1].q;
      least = std::min(least, clearance(a + (sub / 8.0) * (plan->samples[k].q - a)));
    }
    least = std::min(least, clearance(plan->samples[k].q));
  }
  EXPECT_GE(least, 0.0);
  out.plan = *std::move(plan);
}

// The largest joint acceleration of a path (second differences at 100 Hz) over the joint's
// velocity limit per second, as bench/paths measures arms that declare no acceleration limit.
double TopAccelerationPerSpeedLimit(const ChainSpec& spec, const std::vector<Eigen::VectorXd>& q) {
  double top = 0.0;
  for (size_t k = 1; k + 1 < q.size(); ++k) {
    const Eigen::VectorXd a = (q[k + 1] - 2.0 * q[k] + q[k - 1]) / 1e-4;
    for (int j = 0; j < a.size(); ++j) {
      top = std::max(top, std::abs(a[j]) / spec.joints[j].limits->max_velocity);
    }
  }
  return top;
}

// ur5-position-blocking #39 (seed 1): every start and the backward join meet a ball (18
// samples in collision), the ladder's first beam dies out; climbed again with other seeds, it
// gets round within the limits.
TEST(RobotPathLadder, ABeamThatDiesOutIsClimbedAgain) {
  RampedCase c{
      {{{-1.6199799366841221, 0.1799219439696822, 0.059537592244761212, 0.012037674153452083,
         5.5841470940575002, 2.0059278400451954, 6.0252160257786045, -0.83616314304143746},
        {-2.809185788366841, 0.12097281147647856, 0.041497230304020742, 0.012510078298178896,
         3.478909887875608, 3.6226701873219298, 1.7469789697612741, 0.61182005991832711},
        {0.72618084423900275, 0.14669967033149023, 0.0022638999396525192, 0.015886060759734706,
         1.0540305692732985, 2.0799736757224609, 0.41561313258640292, -0.63057278745430823},
        {5.1228467530170381, 0.14177688735518856, 0.01054705069850893, 0.0098381552565247263,
         2.6320420573724421, 1.9097331023538386, 6.2625178428092925, -0.57739464533973572},
        {-4.3454454466517021, 0.036854633568290378, 0.055525273096338992, 0.024770661621361236,
         4.5024698303089208, 5.4047753407482757, 5.4559642038935525, -0.7167086572456749},
        {5.3485281762561918, 0.22086831108451019, 0.018289801916080053, 0.0079956228238827424,
         2.8209973626067804, 1.3445639623244485, 4.5326320943175675, -0.52409147666581757}}},
      {{-0.028521580109093364, -0.26750077998952287, 0.16376607476083727, 0.051556142158289464},
       {-0.35678058329759604, -0.25854570151431089, 0.50301841869723385, 0.041079829327283088}}};
  RampedPlan out;
  ASSERT_NO_FATAL_FAILURE(PlanRampedCase(c, out));
  EXPECT_EQ(out.plan.summary.start, 8);
  EXPECT_LE(TopSpeedRatio(c.spec, JointValues(out.plan.samples), out.times), 1.0);
}

// ur5-position-blocking #35 (seed 3): the witness straightens its elbow well before two balls
// that every start, the backward join and, ranked by speed alone, every beam of the ladder met
// (each died at sample 150, in front of them). Postures carried 8 rungs ahead before they are
// ranked keep the beam on postures that get past: the ladder's path is usable and clear.
TEST(RobotPathLadder, ABeamLooksAheadPastTheBallsThatBlockTheTracker) {
  RampedCase c{
      {{{-0.061386057048302085, 0.47869732713553104, 0.018819024633448814, 0.010023811131587644,
         -1.3563681736222981, 0.5149338697972081, -1.3930583104703633, -0.6648538027238754},
        {4.392002387812579, 0.09957498071500781, 0.05603494845718993, 0.008193929116015094,
         2.0729601674013476, 2.9209475915740244, 0.8395000966922976, 0.8196940733991412},
        {1.055201914953972, 0.015422938596398211, 0.022110205274505, 0.0024983839099418943,
         -0.8760680977143811, -2.8625367135397335, 1.5883151138980565, -0.9359244909509563},
        {4.419175544815384, 0.0743489591775478, 0.05220666625035358, 0.005416874143286779,
         -0.025971856067317084, 0.06087416195297325, -2.5397967009757196, -0.6911889990520442},
        {1.733514126729386, 0.16817339487628388, 0.06101008993521369, 0.002500064287474079,
         -1.9443219783567338, 2.8206510301362706, 0.8303580351982645, 0.39388921502904967},
        {-3.8313921939323743, 0.11493050426857457, 0.03392035778929679, 0.008485799377272256,
         2.186961242746521, 1.545234882761378, -0.5570637556343327, 1.0644765150048627}}},
      {{-0.092397480950650979, 0.19848619059589079, 0.59951800189781979, 0.052184911751473148},
       {-0.11874446108249881, 0.25302441994332281, 0.79263097171410013, 0.059410383003789896}}};
  RampedPlan out;
  ASSERT_NO_FATAL_FAILURE(PlanRampedCase(c, out));
  EXPECT_EQ(out.plan.summary.start, 8);
  EXPECT_LE(TopSpeedRatio(c.spec, JointValues(out.plan.samples), out.times), 1.0);
}

// ur5-position-blocking #12 (seed 1; the UR5 declares no acceleration limit): the ladder's path
// turns round a ball at sample 158, 7.9 mm from it. The optimizer may not move that sample
// closer, and its steps, which smoothed the corner mostly by moving it, were refused there, so
// the corner stayed: 369 rad/s^2 for one sample, 44x the witness's top acceleration. Re-solved
// with the refused sample held, its neighbours round the corner within 3x the witness's.
TEST(RobotPathOptimizer, ACornerHeldByItsClearanceIsRoundedByItsNeighbours) {
  RampedCase c{
      {{{-5.238244735534216, 0.19685402890450643, 0.027389065754838737, 0.008545243374371759,
         2.9492537688249136, 2.974780575159858, 0.6120077065364793, 0.8326103661644864},
        {4.13396795477566, 0.16312278223170149, 0.0020775836897340976, 0.021990877030962093,
         1.1292612626189114, -0.9701389036257494, 2.134651018655205, 0.7967440600521568},
        {0.9756634745593803, 0.12693288325680607, 0.028783687545950277, 0.002206700996141487,
         -0.9577051740358762, -0.07324915995406309, -0.7186468788207545, -0.9027302433938889},
        {-1.2775685170003366, 0.09222985527260064, 0.011185892818755783, 0.019303316116113654,
         -1.3932710021835077, 1.4969616387483926, 1.8567508537172515, 0.6118860372126073},
        {4.494013325114482, 0.19710425964188233, 0.04181826233878247, 0.004366353392782982,
         1.2408627351185018, -1.8026299334563514, -2.633261504412971, 0.9232349177667175},
        {0.47126592246324966, 0.1173934932230152, 0.048851744618931936, 0.01856354568094245,
         1.6486653626891, -1.111840631102692, 2.1514627428742075, 0.6001576739313271}}},
      {{-0.02149638323543554, 0.05126866069382665, 0.33820658882580523, 0.072377986751853474}}};
  RampedPlan out;
  ASSERT_NO_FATAL_FAILURE(PlanRampedCase(c, out));
  const double witness = TopAccelerationPerSpeedLimit(c.spec, out.witness);
  EXPECT_LE(TopAccelerationPerSpeedLimit(c.spec, JointValues(out.plan.samples)), 3.0 * witness);
  EXPECT_LE(TopSpeedRatio(c.spec, JointValues(out.plan.samples), out.times), 1.0);
}

// panda-pose-obstacles #0 (seed 1; full tool poses, a closed tool path). The tracker's path
// used to drift in the Panda's redundant direction, its trials steered by the arm's own links
// inside the obstacles' 1.25-margin buffer, and did not come back to its start; held there,
// the optimized end swung joint 3 at 2.02x the witness's top speed, so an open end is freed
// (RobotPathLadder.ABeamThatDiesOutIsClimbedAgain needs that too). With the arm's own links kept
// at half the distance (motion.h's kSelfBufferShare) the tracked path closes, and the plan ends
// where it started and as slowly as the witness.
TEST(RobotPathOptimizer, APandaCircuitClosesAndEndsSlow) {
  RampedCase c{
      {{-0.5166212275290394, 0.1378589583843107, 0.004540334170312769, 0.04885758502440039,
        -2.5119269899957435, 0.03397613933949775, 0.32605596435023615, 0.0},
       {-0.6199742771949784, 0.025607996255876314, 0.0011643684299241174, 0.004067842507318787,
        -0.031933119955628905, -2.1164525321523144, 1.1555881226208644, 0.0},
       {2.381400584127317, 0.08539158089270875, 0.022973569002458897, 0.02441797139578319,
        2.9164586871323066, 0.49667226849170837, 0.33790441532967147, 0.0},
       {-2.3006115814545707, 0.010405097337637692, 0.0020056348611566157, 0.005475177237803352,
        -2.0227426198865235, 0.7420996751654073, -0.4419849767158271, 0.0},
       {-1.8728527563958932, 0.05933381601049827, 0.051220958203371206, 0.024648596665587753,
        -1.815413577266029, 2.484648001142375, -0.31937582516790103, 0.0},
       {2.168101676042447, 0.06517951661877154, 0.06073594960583225, 0.008851330498571413,
        1.3533911950437727, 2.853626013564926, -3.0127627689898304, 0.0},
       {2.1600094746412912, 0.0011067955567703556, 0.01799491534060003, 0.02456008129794306,
        2.893385752965137, 1.1233456649956024, 1.355247152610825, 0.0}},
      {{0.030834325944291193, 0.2038633064036762, 0.51876720644774221, 0.03947013064936454},
       {0.14269680616563063, 0.13083321786234067, 0.46005830694531569, 0.07486459591734218},
       {-0.024584802666801967, -0.026800369883495101, 0.58391666947911369, 0.040198804905415518}},
      presets::PandaWithBody(),
      /*pose=*/true};
  RampedPlan out;
  ASSERT_NO_FATAL_FAILURE(PlanRampedCase(c, out));
  const std::vector<Eigen::VectorXd> plan = JointValues(out.plan.samples);
  EXPECT_LT((plan.back() - plan.front()).cwiseAbs().maxCoeff(), 0.01);  // closed: no drift
  const std::vector<Eigen::VectorXd> last_tenth(plan.begin() + 179, plan.end());
  const std::vector<double> last_times(out.times.begin() + 179, out.times.end());
  EXPECT_LE(TopSpeedRatio(c.spec, last_tenth, last_times),
            1.5 * TopSpeedRatio(c.spec, out.witness, out.times));
  EXPECT_LE(TopSpeedRatio(c.spec, plan, out.times), 1.0);
}

INSTANTIATE_TEST_SUITE_P(Presets, RobotPathTest, ::testing::ValuesIn(kRobotCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RobotPathInput, ErrorsNameTheTimes) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  const std::vector<ToolTarget> targets(2, *ToolTarget::Position(Eigen::Vector3d(0.4, 0.1, 0.4)));
  const Eigen::VectorXd q0 = robot->MidRange();
  auto mismatch = PlanRobotPath(*robot, nullptr, targets, {0.0}, RobotIkOptions{}, q0);
  EXPECT_THAT(mismatch.status().message(), HasSubstr("times: need one per target (2), got 1"));
  auto backwards = PlanRobotPath(*robot, nullptr, targets, {0.0, 0.0}, RobotIkOptions{}, q0);
  EXPECT_THAT(backwards.status().message(), HasSubstr("times[1] must be greater than times[0]"));
  auto nan = PlanRobotPath(*robot, nullptr, targets, {0.0, std::nan("")}, RobotIkOptions{}, q0);
  EXPECT_THAT(nan.status().message(), HasSubstr("times[1] must be finite"));
  auto stopped = PlanRobotPath(*robot, nullptr, targets, {0.0, 0.1}, RobotIkOptions{}, q0,
                               [] { return true; });
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kCancelled);
}

// A stop that comes after every sample is tracked still cancels: the whole-path optimizer asks
// too (a deadline can pass during it), and says so rather than returning a partial plan.
TEST(RobotPathInput, StopDuringTheOptimizationCancels) {
  auto robot = Robot::Create(presets::Ur5());
  ASSERT_TRUE(robot.ok());
  const Eigen::VectorXd q0 = robot->MidRange();
  const Eigen::Vector3d start = ToolPose(robot->spec(), q0).translation();
  std::vector<ToolTarget> targets;
  std::vector<double> times;
  for (int k = 0; k < 20; ++k) {
    targets.push_back(*ToolTarget::Position(start + Eigen::Vector3d(0.002 * k, 0.0, 0.0)));
    times.push_back(0.01 * k);
  }
  int asked = 0;
  auto plan = PlanRobotPath(*robot, nullptr, targets, times, RobotIkOptions{}, q0,
                            [&] { return ++asked > static_cast<int>(targets.size()); });
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kCancelled) << plan.status();
  EXPECT_EQ(asked, static_cast<int>(targets.size()) + 1);
}

}  // namespace
}  // namespace ikd::robot
