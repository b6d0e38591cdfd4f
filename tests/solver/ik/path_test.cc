#include "ikd/ik/path.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::ik {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = std::numbers::pi;

Arm PlanarArm(int n, JointRateLimit limits = {}, double total = 1.4) {
  ArmSpec spec;
  for (int k = 0; k < n; ++k) spec.limbs.push_back({total / n, 0.01});
  spec.default_rate_limit = limits;
  return *Arm::Create(spec);
}

// The test's own planar joint angles from the sites: limb 0's direction, then the signed
// turn from each limb to the next, continued across +-pi from one sample to the next.
std::vector<std::vector<double>> PlanarAngles(const std::vector<IkResult>& steps) {
  std::vector<std::vector<double>> out;
  for (const IkResult& s : steps) {
    std::vector<double> q;
    double heading = 0.0;
    for (int k = 0; k + 1 < s.sites.cols(); ++k) {
      const Eigen::Vector3d d = s.sites.col(k + 1) - s.sites.col(k);
      const double absolute = std::atan2(d.y(), d.x());
      q.push_back(k == 0 ? absolute : std::remainder(absolute - heading, 2 * kPi));
      heading = absolute;
    }
    if (!out.empty()) {
      for (size_t j = 0; j < q.size(); ++j) {
        q[j] = out.back()[j] + std::remainder(q[j] - out.back()[j], 2 * kPi);
      }
    }
    out.push_back(q);
  }
  return out;
}

struct Rates {
  double max_speed = 0.0;         // rad/s
  double max_acceleration = 0.0;  // rad/s^2
};

// Finite differences of the test's own angles, per joint: v_k = dq / dt, a_k = dv / (mean dt).
std::vector<Rates> MeasureJointRates(const std::vector<IkResult>& steps) {
  const auto q = PlanarAngles(steps);
  std::vector<Rates> rates(q.front().size());
  std::vector<double> previous_velocity;
  for (size_t k = 1; k < steps.size(); ++k) {
    const double dt = steps[k].time - steps[k - 1].time;
    std::vector<double> velocity;
    for (size_t j = 0; j < q[k].size(); ++j) velocity.push_back((q[k][j] - q[k - 1][j]) / dt);
    for (size_t j = 0; j < velocity.size(); ++j) {
      rates[j].max_speed = std::max(rates[j].max_speed, std::abs(velocity[j]));
      if (k >= 2) {
        const double mean_dt = 0.5 * (steps[k].time - steps[k - 2].time);
        rates[j].max_acceleration = std::max(
            rates[j].max_acceleration, std::abs(velocity[j] - previous_velocity[j]) / mean_dt);
      }
    }
    previous_velocity = velocity;
  }
  return rates;
}

// The largest over all joints.
Rates MeasureRates(const std::vector<IkResult>& steps) {
  Rates rates;
  for (const Rates& joint : MeasureJointRates(steps)) {
    rates.max_speed = std::max(rates.max_speed, joint.max_speed);
    rates.max_acceleration = std::max(rates.max_acceleration, joint.max_acceleration);
  }
  return rates;
}

double WorstLimbError(const Arm& arm, const std::vector<IkResult>& steps) {
  double worst = 0.0;
  for (const IkResult& s : steps) {
    for (int k = 0; k < arm.num_limbs(); ++k) {
      const double length = arm.spec().limbs[k].length;
      worst =
          std::max(worst, std::abs((s.sites.col(k + 1) - s.sites.col(k)).norm() - length) / length);
    }
  }
  return worst;
}

Trajectory Circle(double duration) {
  return *Trajectory::Arc({0.8, 0.2, 0.0}, {0, 0, 1}, {1.05, 0.2, 0.0}, 2 * kPi, duration);
}

IkOptions Greedy() {
  IkOptions options;
  options.optimize_path = false;
  return options;
}

// The hand is on the requested circle at every sample (the test's own circle: centre (0.8,
// 0.2), radius 0.25, angle 2 pi t / T) within 1e-9 m, limbs within 1e-10, and the whole-path
// optimization lowers the largest joint speed and acceleration of the step-by-step path
// (measured here from the sites: 7 limbs, 301 samples; greedy 2.2 rad/s and 29 rad/s^2, optimized
// 1.3 rad/s and 3.6 rad/s^2).
TEST(PlanPathTest, OptimizedCircleStaysOnThePathWithSlowerJoints) {
  const Arm arm = PlanarArm(7);
  const Trajectory path = Circle(3.0);
  const auto times = *path.SampleTimes(0.01);
  auto greedy = PlanPath(arm, nullptr, path, times, Greedy());
  auto optimized = PlanPath(arm, nullptr, path, times, IkOptions{});
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  ASSERT_EQ(optimized->steps.size(), times.size());
  EXPECT_GT(optimized->summary.optimizer_iterations, 0);
  for (const IkResult& s : optimized->steps) {
    const double angle = 2 * kPi * s.time / 3.0;
    const Eigen::Vector3d on_circle(0.8 + 0.25 * std::cos(angle), 0.2 + 0.25 * std::sin(angle), 0);
    EXPECT_LT((s.sites.col(arm.hand()) - on_circle).norm(), 1e-9) << "t = " << s.time;
    EXPECT_EQ(s.status, planning::StepStatus::kReached);
  }
  EXPECT_LT(WorstLimbError(arm, optimized->steps), 1e-10);
  const Rates before = MeasureRates(greedy->steps);
  const Rates after = MeasureRates(optimized->steps);
  EXPECT_LT(after.max_speed, before.max_speed);
  EXPECT_LT(after.max_acceleration, 0.5 * before.max_acceleration);
}

// A hand path made by a known smooth joint motion (the witness: each of 5 joints a sum of two
// sines over 2 s) is followed with joint speeds and accelerations of the witness's order: the
// issue's bounds, 2x the witness's largest speed and 3x its largest acceleration.
// The witness of the tests below: each of 5 joints a sum of two sines over 2 s, sampled at
// 100 Hz, and its hand path through those samples.
struct Witness {
  std::vector<IkResult> steps;
  Trajectory path;
};

Witness FiveJointWitness(const Arm& arm, const std::vector<double>& amplitudes = {1, 1, 1, 1, 1}) {
  auto angles = [&](double t) {
    std::vector<double> q;
    for (int j = 0; j < 5; ++j) {
      q.push_back((j == 0 ? 0.3 : 0.4) + amplitudes[j] * (0.3 * std::sin(kPi * t + j) +
                                                          0.1 * std::sin(2 * kPi * t + 2 * j)));
    }
    return q;
  };
  std::vector<Waypoint> waypoints;
  std::vector<IkResult> witness;
  for (int k = 0; k <= 200; ++k) {
    IkResult step;
    step.time = 0.01 * k;
    step.sites = *arm.SitesFromAngles(angles(step.time));
    waypoints.push_back({step.time, step.sites.col(arm.hand())});
    witness.push_back(step);
  }
  return {witness, *Trajectory::FromWaypoints(waypoints, Interpolation::kLinear)};
}

TEST(PlanPathTest, WitnessMotionIsMatchedWithinTheIssueBounds) {
  const Arm arm = PlanarArm(5, {}, 1.0);
  const auto [witness, path] = FiveJointWitness(arm);
  const auto times = *path.SampleTimes(0.01);
  auto plan = PlanPath(arm, nullptr, path, times, IkOptions{}, witness.front().sites);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Rates reference = MeasureRates(witness);
  const Rates answer = MeasureRates(plan->steps);
  EXPECT_LE(answer.max_speed, 2.0 * reference.max_speed);
  EXPECT_LE(answer.max_acceleration, 3.0 * reference.max_acceleration);
  for (size_t k = 0; k < times.size(); ++k) {
    EXPECT_LT((plan->steps[k].sites.col(arm.hand()) - witness[k].sites.col(arm.hand())).norm(),
              1e-9);
  }
}

// Per-joint limits just above the witness's own rates (1.05x each joint's largest speed and
// acceleration; the witness moves the two base joints ten times as far as the rest) are met at
// every sample: the witness shows they can be, and least squared acceleration alone took the
// base joint to 1.06x the witness's speed. Rates measured here from the sites, the hand on the
// witness's path.
TEST(PlanPathTest, TightJointLimitsAreMetWhereTheWitnessMeetsThem) {
  const Witness witness = FiveJointWitness(PlanarArm(5, {}, 1.0), {2.0, 2.0, 0.2, 0.2, 0.2});
  const std::vector<Rates> reference = MeasureJointRates(witness.steps);
  ArmSpec spec = PlanarArm(5, {}, 1.0).spec();
  for (const Rates& r : reference) {
    spec.rate_limits.push_back(JointRateLimit{1.05 * r.max_speed, 1.05 * r.max_acceleration});
  }
  const Arm arm = *Arm::Create(spec);
  const auto times = *witness.path.SampleTimes(0.01);
  auto plan = PlanPath(arm, nullptr, witness.path, times, IkOptions{}, witness.steps.front().sites);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<Rates> answer = MeasureJointRates(plan->steps);
  for (size_t j = 0; j < answer.size(); ++j) {
    EXPECT_LE(answer[j].max_speed, spec.rate_limits[j]->max_velocity) << "joint " << j;
    EXPECT_LE(answer[j].max_acceleration, spec.rate_limits[j]->max_acceleration) << "joint " << j;
  }
  EXPECT_TRUE(plan->summary.IsSolutionUsable()) << plan->summary.BriefReport();
  for (size_t k = 0; k < times.size(); ++k) {
    const Eigen::Vector3d hand = plan->steps[k].sites.col(arm.hand());
    EXPECT_LT((hand - witness.steps[k].sites.col(arm.hand())).norm(), 1e-9);
  }
}

// Time scaling (as a time parameterization): stretching the timing by s divides speeds by s
// and accelerations by s^2, so the returned path with its times stretched by the reported
// scaling meets both limits (measured here from the sites), one of them exactly.
TEST(PlanPathTest, ReportedTimeScalingMakesTheTimingFeasible) {
  const Arm arm = PlanarArm(7, {0.5, 2.0});
  auto fast = PlanPath(arm, nullptr, Circle(1.0), *Circle(1.0).SampleTimes(0.01), IkOptions{});
  ASSERT_TRUE(fast.ok()) << fast.status();
  const double scaling = fast->summary.feasible_time_scaling;
  ASSERT_GT(scaling, 1.0);
  EXPECT_GT(fast->summary.velocity_limited + fast->summary.acceleration_limited, 0);
  EXPECT_FALSE(fast->summary.IsSolutionUsable());
  for (const IkResult& s : fast->steps) {
    EXPECT_THAT(s.status, ::testing::AnyOf(planning::StepStatus::kReached,
                                           planning::StepStatus::kVelocityLimited,
                                           planning::StepStatus::kAccelerationLimited));
  }
  std::vector<IkResult> stretched = fast->steps;
  for (IkResult& s : stretched) s.time *= scaling;
  const Rates rates = MeasureRates(stretched);
  EXPECT_LE(rates.max_speed, 0.5 * (1 + 1e-9));
  EXPECT_LE(rates.max_acceleration, 2.0 * (1 + 1e-9));
  EXPECT_NEAR(std::max(rates.max_speed / 0.5, std::sqrt(rates.max_acceleration / 2.0)), 1.0, 1e-9);
  const PathSummary summary = SummarizePath(arm, nullptr, stretched);
  EXPECT_NEAR(summary.feasible_time_scaling, 1.0, 1e-9);
}

// The same with a jerk limit only (1 rad/s^3): the path reports the samples over it
// (ACCELERATION_LIMITED), its largest jerk over the limit and the time scaling cbrt of it;
// stretched by that scaling, the jerk measured here (third differences of the test's own angles
// at the uniform step: v = dq / dt, a = dv / dt, j = da / dt) is within the limit, at it for
// the worst joint.
TEST(PlanPathTest, ReportedTimeScalingMakesTheJerkFeasible) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const Arm arm = PlanarArm(7, {kInf, kInf, 1.0});
  auto fast = PlanPath(arm, nullptr, Circle(1.0), *Circle(1.0).SampleTimes(0.01), IkOptions{});
  ASSERT_TRUE(fast.ok()) << fast.status();
  const double scaling = fast->summary.feasible_time_scaling;
  ASSERT_GT(fast->summary.max_jerk_ratio, 1.0);
  EXPECT_NEAR(scaling, std::cbrt(fast->summary.max_jerk_ratio), 1e-12);
  EXPECT_GT(fast->summary.acceleration_limited, 0);
  const auto q = PlanarAngles(fast->steps);
  const double dt = 0.01 * scaling;
  double largest = 0.0;
  for (size_t k = 3; k < q.size(); ++k) {
    for (size_t j = 0; j < q[k].size(); ++j) {
      const double third = q[k][j] - 3 * q[k - 1][j] + 3 * q[k - 2][j] - q[k - 3][j];
      largest = std::max(largest, std::abs(third) / (dt * dt * dt));
    }
  }
  EXPECT_NEAR(largest, 1.0, 1e-6);
}

// The path optimizer keeps a declared jerk limit (hinges on the third differences, as on the
// velocities and accelerations): a 3 s hand circle of the 7-limb arm, 301 samples, planned
// without a jerk limit peaks at hundreds of rad/s^3 (measured here, third differences of the
// test's own angles), with 5 rad/s^3 declared every sample is REACHED within it.
double LargestJerk(const std::vector<IkResult>& steps) {
  const auto q = PlanarAngles(steps);
  double largest = 0.0;
  for (size_t k = 3; k < q.size(); ++k) {
    const double dt = steps[k].time - steps[k - 1].time;
    for (size_t j = 0; j < q[k].size(); ++j) {
      const double third = q[k][j] - 3 * q[k - 1][j] + 3 * q[k - 2][j] - q[k - 3][j];
      largest = std::max(largest, std::abs(third) / (dt * dt * dt));
    }
  }
  return largest;
}

// The velocity limit is declared far above what the circle needs, so the jerk limit alone
// shapes the path (an arm that declares none gets the unhurried retries, which calm this
// circle's jerk to about 5 rad/s^3 by themselves).
TEST(PlanPathTest, OptimizedPathKeepsItsJerkLimit) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  auto plan = [](double max_jerk) {
    const Arm arm = PlanarArm(7, {1e3, kInf, max_jerk});
    return PlanPath(arm, nullptr, Circle(3.0), *Circle(3.0).SampleTimes(0.01), IkOptions{});
  };
  auto free = plan(kInf);
  ASSERT_TRUE(free.ok()) << free.status();
  EXPECT_GT(LargestJerk(free->steps), 50.0);
  auto limited = plan(5.0);
  ASSERT_TRUE(limited.ok()) << limited.status();
  EXPECT_TRUE(limited->summary.IsSolutionUsable()) << limited->summary.BriefReport();
  EXPECT_LE(LargestJerk(limited->steps), 5.0 * (1 + 1e-6));
  EXPECT_LE(limited->summary.max_jerk_ratio, 1.0);
}

// Clearance is never traded for smoothness: each sample's clearance (the test's own
// point-segment distance to the pillar, minus radii) stays at least min(the step-by-step
// path's, the margin).
TEST(PlanPathTest, OptimizationKeepsTheClearanceOfTheTrackerPath) {
  const Arm arm = PlanarArm(7);
  const Eigen::Vector3d pillar(0.55, 0.55, 0.0);
  const double pillar_radius = 0.06;
  auto scene = planning::Scene::Create(
      {{"pillar", planning::Capsule{
                      {pillar.x(), pillar.y(), -1}, {pillar.x(), pillar.y(), 1}, pillar_radius}}});
  ASSERT_TRUE(scene.ok());
  const Trajectory path = Circle(3.0);
  const auto times = *path.SampleTimes(0.01);
  auto greedy = PlanPath(arm, &*scene, path, times, Greedy());
  auto optimized = PlanPath(arm, &*scene, path, times, IkOptions{});
  ASSERT_TRUE(greedy.ok() && optimized.ok());
  auto clearance = [&](const Eigen::Matrix3Xd& sites) {
    double c = std::numeric_limits<double>::infinity();
    for (int k = 0; k < arm.num_limbs(); ++k) {
      const Eigen::Vector2d a = sites.col(k).head<2>(), b = sites.col(k + 1).head<2>();
      const Eigen::Vector2d p = pillar.head<2>();
      const double t = std::clamp((p - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
      c = std::min(c, (a + t * (b - a) - p).norm() - pillar_radius - 0.01);
    }
    return c;
  };
  const double margin = IkOptions{}.safety_margin;
  for (size_t k = 0; k < times.size(); ++k) {
    const double before = clearance(greedy->steps[k].sites);
    EXPECT_GE(clearance(optimized->steps[k].sites), std::min(before, margin) - 1e-12) << k;
  }
}

// The test's own clearance of a planar configuration to upright posts (x, y, radius): the
// least distance from a post's axis to a limb's segment, less both radii.
double PostClearance(const Eigen::Matrix3Xd& sites, double limb_radius,
                     const std::vector<Eigen::Vector3d>& posts) {
  double c = std::numeric_limits<double>::infinity();
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    const Eigen::Vector2d a = sites.col(k).head<2>(), b = sites.col(k + 1).head<2>();
    for (const Eigen::Vector3d& post : posts) {
      const Eigen::Vector2d p = post.head<2>();
      const double t = std::clamp((p - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
      c = std::min(c, (a + t * (b - a) - p).norm() - post.z() - limb_radius);
    }
  }
  return c;
}

// Two posts that the greedy driver runs into on a half circle (it cannot see them coming: its
// own path, stepped here sample by sample, collides), while the driver run backwards from the
// end passes them: the plan joins the two and is clear at every sample (the test's own
// distances), with the hand on the path and the limbs at their lengths.
TEST(PlanPathTest, BackwardPassFindsTheWayTheGreedyDriverMisses) {
  ArmSpec spec;
  for (int k = 0; k < 5; ++k) spec.limbs.push_back({0.2, 0.02});
  const Arm arm = *Arm::Create(spec);
  const std::vector<Eigen::Vector3d> posts = {{0.640, -0.088, 0.041}, {0.143, 0.154, 0.054}};
  std::vector<planning::Obstacle> obstacles;
  for (const Eigen::Vector3d& p : posts) {
    obstacles.push_back({"post" + std::to_string(obstacles.size()),
                         planning::Capsule{{p.x(), p.y(), -0.5}, {p.x(), p.y(), 0.5}, p.z()}});
  }
  const planning::Scene scene = *planning::Scene::Create(obstacles);
  const Trajectory path = *Trajectory::Arc({0.5, 0, 0}, {0, 0, 1}, {0.75, 0, 0}, kPi, 2.0);
  const auto times = *path.SampleTimes(0.01);
  auto driver = PathDriver::Create(arm, &scene, path, IkOptions{});
  ASSERT_TRUE(driver.ok());
  double greedy_clearance = std::numeric_limits<double>::infinity();
  for (double t : times) {
    const Eigen::Matrix3Xd sites = driver->StepTo(t)->sites;
    greedy_clearance = std::min(greedy_clearance, PostClearance(sites, 0.02, posts));
  }
  EXPECT_LT(greedy_clearance, 0.0);
  for (const bool optimize : {false, true}) {
    IkOptions options;
    options.optimize_path = optimize;
    auto plan = PlanPath(arm, &scene, path, times, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->summary.in_collision, 0) << plan->summary.BriefReport();
    for (const IkResult& s : plan->steps) {
      EXPECT_GE(PostClearance(s.sites, 0.02, posts), 0.0) << "t = " << s.time;
      const double angle = kPi * s.time / 2.0;
      const Eigen::Vector3d on_arc(0.5 + 0.25 * std::cos(angle), 0.25 * std::sin(angle), 0);
      EXPECT_LT((s.sites.col(arm.hand()) - on_arc).norm(), 1e-9) << "t = " << s.time;
    }
    EXPECT_LT(WorstLimbError(arm, plan->steps), 1e-10);
  }
}

// A witness-based scenario of bench/paths (planar-obstacles, seed 1), written out: a planar
// arm (limb radius 0.02, joint limits +-2.4 rad, one rate limit for every joint), posts and
// spheres in its plane (x, y, radius), and the witness: joint angle j (limb 0's direction,
// then each turn) = q0 + sum_m a_m sin(2 pi m t / 2 s + phi_m), m = 1..3, over 2 s.
struct WitnessCase {
  std::string name;
  std::vector<double> lengths;
  double max_velocity, max_acceleration;
  std::vector<Eigen::Vector3d> posts;
  std::vector<std::array<double, 7>> motions;  // q0, a_1..a_3, phi_1..phi_3
  bool greedy_collides;                        // the greedy driver's own path hits an obstacle
  int start = -1;  // the PathSummary::start the plan must come from (-1: any)
};

// The test's own planar forward kinematics of the witness at time t.
Eigen::Matrix3Xd WitnessSites(const WitnessCase& c, double t) {
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, c.lengths.size() + 1);
  double heading = 0.0;
  for (size_t j = 0; j < c.lengths.size(); ++j) {
    const auto& m = c.motions[j];
    double q = m[0];
    for (int h = 0; h < 3; ++h) q += m[1 + h] * std::sin(kPi * (h + 1) * t + m[4 + h]);
    heading += q;
    sites.col(j + 1) =
        sites.col(j) + c.lengths[j] * Eigen::Vector3d(std::cos(heading), std::sin(heading), 0);
  }
  return sites;
}

// Scenario #39: the greedy driver hits a sphere; its other trial seeds and the pass backwards
// from its end did too (the plan before the wide-margin starts collided, clearance -0.047 m).
WitnessCase Bench39() {
  return {"planar_obstacles_39",
          {0.2325418037781645, 0.17402386366236464, 0.21340776185713167, 0.16331224005619199,
           0.1723685421732781},
          3.9928048207547886,
          18.726294859529034,
          {{0.1905145311186012, -0.017185570601315415, 0.031245210849050898},
           {0.48847969845618305, 0.5857119825190209, 0.034086483792840558},
           {0.22619681608087985, -0.051684001968533892, 0.050771224703851536},
           {0.088683327234041764, -0.024773649988760228, 0.034442045801575137},
           {0.56119894730507935, -0.233882395786568, 0.041027243392820205}},
          {{1.6944463965799414, 0.72313379892090379, 0.050402171252817478, 0.0027560986027693919,
            4.8044865824863843, 2.1721630565942935, 3.3898374001680978},
           {-0.86494705885779632, 0.32866814860866089, 0.13520299789348911, 0.075729649047301034,
            3.829616728528233, 3.6603120344726592, 6.138149581488781},
           {-1.3184488314705249, 0.42445687073624633, 0.12781415096037763, 0.013623571643565709,
            0.30427782832448125, 6.1202175793851135, 5.2437551227300032},
           {0.3292742389666059, 0.53797498084367745, 0.055481119506183223, 0.087910504024923022,
            3.0025823221674108, 4.5543471394071435, 2.1134978617591456},
           {1.029059507912256, 0.39777310136399668, 0.11904028121009801, 0.0053409731907815509,
            1.973279053574301, 4.8016464181633491, 1.8173454859064482}},
          true};
}

// Scenario #45: every forward start collides; the backward pass with a widened margin joins
// (the plan before collided, clearance -0.059 m).
WitnessCase Bench45() {
  return {"planar_obstacles_45",
          {0.16239423318819332, 0.2381870211428653, 0.14597216949557218, 0.11833913995653952,
           0.20838975797282927, 0.23524780380670385, 0.18660856357149602},
          3.5100540614683648,
          16.753744620783273,
          {{0.30971373001478131, 0.08384000126373517, 0.059627307229339718},
           {-0.14813621229404172, -0.77153698455007769, 0.03751543736385158},
           {-0.15813963698527869, -0.46312502312510601, 0.044994723603278663},
           {-0.19808676095446726, -0.41660647498473907, 0.05925730766067254},
           {0.69024260645770685, -0.66936959283504116, 0.053093268539570568},
           {0.13063542678482126, 0.10945605088646959, 0.042968907508631235}},
          {{-0.10537360652055661, 0.21031308199906118, 0.026139640564095724, 0.0059107051494290729,
            4.5673427696193576, 3.3780814034774176, 5.2379831805062356},
           {-0.57079855906900367, 0.23936943817855072, 0.022000172324556179, 0.084145052977972132,
            3.6570450380079187, 0.083086712933612944, 6.0566260650840285},
           {-1.0268961654481348, 0.42227054021658694, 0.14570183133642495, 0.013774279069524326,
            0.76667192697279196, 1.1516690636763856, 1.3732245129514919},
           {0.1884292999402013, 0.34810273401266789, 0.11125604270354371, 0.027550719338796499,
            0.23021017727829041, 2.6601037258054006, 2.8472420219379106},
           {0.81099434577206342, 0.41427220673522158, 0.0066202523172147259, 0.018793535043561457,
            0.50873419572280876, 2.2046985431942234, 0.23739292732667838},
           {-1.6887514462557511, 0.007791043003382115, 0.15576443424551217, 0.058883566196168267,
            3.7655856045139355, 5.7858965840327112, 4.384559812504774},
           {0.7042516131955372, 0.50965727996507937, 0.13567574504532731, 0.024152589599994646,
            0.12506761584517107, 5.476287892025467, 0.93149112825690739}},
          true};
}

// Scenario #13: the first forward start is clear, but its optimized path passes the
// acceleration limit (4.4x); the wide-margin starts, optimized too, meet every limit.
WitnessCase Bench13() {
  return {"planar_obstacles_13",
          {0.24879643545554339, 0.20451568298141554, 0.19556096625471039, 0.20995275698607063,
           0.16064322249683702, 0.11108349392369242, 0.16717666096896289},
          3.953475958020114,
          19.034828318886809,
          {{-0.030520231143938086, 0.10400393455478366, 0.04329146692764646},
           {-0.75625497373789874, 0.52697826285338545, 0.035129990031055561},
           {-0.70164100340964475, -0.77848681261152597, 0.05363640530403551},
           {0.092372994242233428, -0.044751270807511144, 0.050244760011036518},
           {-0.53520884151614623, 0.4438386827909479, 0.055660839671454757},
           {-0.085263114110197866, 0.11094787506077868, 0.042696190445176668},
           {-0.18220076243823433, -0.27273474435117084, 0.050914887242545587},
           {0.087322683141595345, -0.022874815576646015, 0.036966110971090059}},
          {{-2.8967772245805476, 0.40554724399249742, 0.14176036457839289, 0.058730337073798107,
            3.3280449918030519, 6.0262491131223594, 3.5205001160232134},
           {-0.82010886021650942, 0.36018127640290976, 0.071939197623926018, 0.018870734917556569,
            2.9785097243953533, 1.9238719374816446, 5.436812668771644},
           {0.85607714129495749, 0.11423722254955387, 0.029759128277162095, 0.05478609657210378,
            1.0319682247464381, 3.8729108739616747, 0.77689904880840577},
           {0.66971998589428594, 0.28471464621245585, 0.049396512299762607, 0.067546786510653795,
            3.2248108772519091, 0.84932293034667694, 3.3340357265936253},
           {-0.49703414122803879, 0.064975413000921911, 0.11095077183810487, 0.056511051025335629,
            0.47472673935506537, 2.2716611538147888, 5.4266925421213443},
           {-0.74865029683571738, 0.40114559577671427, 0.10118660430433038, 0.032829745413711711,
            0.39567805997727451, 4.2565747501868811, 2.8136163461798871},
           {-0.92307723699670197, 0.018507554837235495, 0.083524252419898054, 0.010152596009332755,
            0.60799579597009579, 5.4013506060215342, 1.6571409190431876}},
          false};
}

// Seed 3's scenario #29: every sample clear, but the first start's optimized path jumps
// between branches (5.4x the velocity limit on 37 samples, a time scaling beyond 3); another
// start, optimized, meets every limit.
WitnessCase Seed3Bench29() {
  return {"seed3_planar_obstacles_29",
          {0.10100186226927908, 0.21095296424836382, 0.10483049958048427, 0.16125122385996954,
           0.1473285996471386, 0.10261685280268157, 0.19228136095225223},
          4.5443039679964992,
          19.9438155120224,
          {{0.21952331915033074, 0.1169228463799334, 0.047172880111128163},
           {-0.072581331022204917, -0.080545918086224882, 0.058351753446389654},
           {0.40770622678532831, 0.63492922631181448, 0.042828214385978391},
           {-0.0027899289684664924, -0.11001115707377024, 0.036388127144666563},
           {-0.19478461760421123, 0.81872626202383703, 0.056083680068481759},
           {-0.38897836981761869, 0.62589163410795912, 0.056766068503986092}},
          {{-0.26912166287435912, 0.47551770244174452, 0.11300791721718095, 0.043458646106497079,
            3.8773560026860605, 5.6367819278082001, 0.52624986286004294},
           {2.1905154785643726, 0.048258139232004817, 0.011020732166130221, 0.01304464941950257,
            4.5228205096178566, 5.1427742667693277, 2.7875522794754861},
           {0.49018362712841368, 0.46407826495907156, 0.10739991532914316, 0.077205042032851737,
            5.2875744132400628, 5.8849721129694412, 2.3031678683009411},
           {-1.9207041726067877, 0.14896691353992306, 0.13987490677288128, 0.08383791035849221,
            5.7270410107354337, 2.1111856135438516, 2.9559617783331404},
           {0.62887783344620152, 0.73828385275465735, 0.0023810455808169761, 0.020284855341913717,
            5.9512257534615598, 4.6741348464412802, 4.7826786526944831},
           {0.93096333013646371, 0.70598665839376185, 0.13532856380661051, 0.00064002313762537484,
            0.64686910257867047, 0.7794228851278695, 1.2342605266201767},
           {-0.89184299993522398, 0.088018643291264909, 0.053985928594852101, 0.078853403096633912,
            2.1906264196501777, 2.2672728932909396, 2.3903238517756584}},
          false};
}

// Seed 7's scenario #23: every forward start and the backward joins collide (the plan before
// the joint-space start, path_joint_space.h, hit a post: 10 samples over the velocity limit,
// 37 over the acceleration limit); tracked in the joint angles, the arm passes clear.
WitnessCase Seed7Bench23() {
  return {"seed7_planar_obstacles_23",
          {0.24591605538789577, 0.20454847504934853, 0.21738903258439793, 0.24935067741905725,
           0.12235509629925001, 0.13098232992577424},
          3.7049419418651919,
          21.523115642750888,
          {{-0.70257674785122171, -0.56631315724974873, 0.04304989143803635},
           {-0.97707641773093146, 0.2257683177526916, 0.0539543699468778},
           {-0.40987916390626744, -0.31800545229360588, 0.046721572257230323},
           {-0.22784572883870782, -0.14633004495277696, 0.046544445049331043},
           {-0.14601652418788497, -0.10569168125473152, 0.044138376250582145},
           {-0.5180386392539047, -0.62766236727058422, 0.030581689051071934},
           {-0.15128373993246624, 0.29508894337511127, 0.034569852450478063}},
          {{2.6034146807332839, 0.56773410284241155, 0.084079295169371349, 0.059815551479998036,
            0.10391345989738478, 4.7995917355090194, 6.0968374681934518},
           {0.96685220593916421, 0.48126895850353968, 0.05602492265034309, 0.076858938869885096,
            4.3631063910368084, 0.67395155241659399, 2.2165450534755151},
           {-0.82994566216130261, 0.39547443731433357, 0.055304376993641151, 0.080461147552199463,
            2.194299225824329, 4.1345441679953172, 2.6160172675712219},
           {1.6163356007436391, 0.35284106667285492, 0.056210865465404616, 0.049508349081287477,
            5.5376651448695924, 5.0236919223304213, 6.2443647015113353},
           {-1.2437353291225961, 0.26092161441828993, 0.17553843902780492, 0.066164390893805686,
            3.9927935283960516, 4.5058346122688517, 3.5011075016012492},
           {1.9889957033685182, 0.01729940979912712, 0.048688664055039535, 0.03674658978081282,
            4.0582732179596999, 1.264342891006236, 0.36865819488331314}},
          true,
          8};
}

// Seed 2's #1: in bench/paths without declared limits, the optimizer's smooth path swung a limb
// at 3.3x the witness's fastest turn (with limits declared, 1.4x).
WitnessCase Seed2Bench1() {
  return {"seed2_planar_obstacles_1",
          {0.16639267864537577, 0.23857926946443553, 0.16714900946445799, 0.20388689221999079,
           0.11685900537815447, 0.20228556521490976, 0.20360804908004548},
          4.597328547255092,
          19.88945701457412,
          {{0.092695544648073364, -0.077788861200024234, 0.046328175430787849},
           {-0.37380992915584266, -0.022197705919027699, 0.05526918048513927},
           {-0.081586052836319992, -0.020146104443356853, 0.031941595091306223},
           {0.006862988937406383, -0.085304495470243658, 0.034249481188332938},
           {0.1909813938323294, -0.13307965211833714, 0.033818361140332896},
           {0.19383275600444441, 0.83945892685170143, 0.030157002697862693},
           {-0.069775022288145416, 0.071117047406061354, 0.037810464840140251},
           {-0.002636561691350868, -0.11041331613543505, 0.059105022688278872},
           {-0.058229482244363959, 0.10351807654625883, 0.041896390899836121},
           {0.28673809629026681, 0.0096592807259595764, 0.051895490999550938}},
          {{0.68477036836710947, 0.44697775037287751, 0.11230982587622451, 0.023375420744073269,
            0.25988171131577698, 6.1727316659821367, 1.8551435228629336},
           {0.84253473248326316, 0.46539309984813382, 0.10328976911799206, 0.0014158094780501982,
            5.8030855646109352, 4.4439409267177634, 3.9626639221827116},
           {1.7674350626660849, 0.59909393919237297, 0.18567044405872529, 0.0083832122293704247,
            3.6305295701162792, 2.5629136033353879, 3.1221675011868024},
           {-0.15350130783427346, 0.071790293074421668, 0.064551604250314684, 0.069252698810906385,
            1.5883765716991487, 3.2938605726560244, 0.35869416865063164},
           {-0.76082542615934268, 0.65432274873546603, 0.16883549576559984, 0.0072088334332566792,
            0.91414414689615275, 1.3642991588478623, 4.0966395550609249},
           {-1.4447285308330813, 0.070943974745071359, 0.1071526930222846, 0.067991271387975949,
            3.135267703411269, 3.407773832297412, 2.1015830171825187},
           {0.59028131875202172, 0.70077572021322232, 0.070515739125410218, 0.048670895859183945,
            5.2434958360793473, 3.0854081890390281, 2.0569017886692773}},
          true};
}
// Seed 3's #25: without declared limits, start 0's optimized path swung a limb at 4.2x the
// witness's fastest turn; another start is 1.5x.
WitnessCase Seed3Bench25() {
  return {"seed3_planar_obstacles_25",
          {0.12934213330036581, 0.19722296549517571, 0.19609354260190304, 0.10499904884751536,
           0.24252704670224229, 0.11803256580339698, 0.16267623725841468},
          4.6064302047062577,
          17.01443423595461,
          {{-0.39520260698773929, 0.32943491273595882, 0.03144243691232896},
           {-0.023300115498767395, 0.10566336144640681, 0.057863481086921686},
           {0.070594238188351269, -0.14070133287216779, 0.035223606553570125},
           {-0.39412767793945647, -0.56989507768099124, 0.054300763187117511},
           {-0.57060950993206205, 0.15750054739342151, 0.047732664444863085},
           {-0.51133128840108855, 0.20308130816583397, 0.036196420430011575},
           {0.09452630599560008, -0.031906630881676772, 0.044299758798240663},
           {-0.58409032917103287, 0.15612648768171444, 0.050067852486722145},
           {-0.70254170240988367, 0.12578576078435577, 0.059223144373194023}},
          {{-1.9670584409264065, 0.14925267425030406, 0.12489956220441564, 0.012646253492219615,
            0.62450412258041066, 5.6207142916607022, 0.45543056896925083},
           {-1.7447934637989253, 0.2623717592827568, 0.12112234921132517, 0.023624392007535553,
            1.9373789832204684, 4.8388942767705778, 1.1913914000918939},
           {-0.31186378959223576, 0.056318382304045206, 0.066144981900337213, 0.049715571958630432,
            6.2564567877914374, 1.2706472578009291, 3.5192991648978134},
           {0.87904629992059169, 0.37733121296488387, 0.044914433284788134, 0.00066412935765589325,
            3.597962991409474, 2.7878270689261022, 4.6037560018909147},
           {1.1919279933300977, 0.65754018105303358, 0.15917896972879511, 0.0016603898123788415,
            6.2358339400687388, 3.0615020791976928, 4.9254354749606604},
           {-0.16915809687833108, 0.41459144622279515, 0.064747682415400853, 0.079948518396388557,
            1.7702106968596367, 1.8082531723130235, 5.9709363684389682},
           {-0.060836603952131509, 0.32224714763632206, 0.030271714119957393, 0.024101614895846862,
            5.3916841548565424, 0.80861220085422736, 4.8486033743886141}},
          false};
}

// Seed 12's #12: from the options' seed every start kept 3 samples in collision and 40 over the
// rates (the best, the joint-space start, swung into a post at 1.46x the velocity limit); the
// replans from the next seeds get round (path.h step 4).
WitnessCase Seed12Bench12() {
  return {"seed12_planar_obstacles_12",
          {0.16241761868215318, 0.14942095065617877, 0.180425046017197, 0.13352190282149276,
           0.12021981210717234},
          5.1859762272644545,
          21.200496179205054,
          {{0.2473572948070577, 0.15837568542194497, 0.046488959636369398},
           {-0.34577343809444122, 0.33785636925256607, 0.048040987939543325},
           {-0.040073108034807958, -0.093515200928593528, 0.050295156223887652},
           {-0.33337079672406345, 0.34950398189266357, 0.049898235185672643}},
          {{1.1558507069549304, 0.72591615383590546, 0.085168699028910611, 0.078348460445371804,
            1.0744276703495776, 2.9789943320826446, 3.7264554685668219},
           {1.5112511054534294, 0.26996442968912548, 0.17902816405493932, 0.023151689655004991,
            1.5483828070759733, 4.3486127411446347, 1.6989464463324226},
           {0.88334407376504276, 0.489080845543785, 0.070534860958918061, 0.050522544592022128,
            4.8105890529807427, 4.0647897667359763, 1.911982414077114},
           {-0.69845088934217547, 0.053619066358872577, 0.14252317933898631, 0.062655852960333713,
            0.39588267779436076, 1.2385611453278897, 0.71949334629927086},
           {2.0365237563599492, 0.052151757983887298, 0.14538581593485012, 0.054360044663287949,
            0.55688239526012062, 2.4633105224066614, 4.3767821662056843}},
          true};
}

// Seed 13's #44: from seeds 1-6 as given, every start met a post at samples 66-74 (1.3 cm deep)
// where the witness passes 3 cm clear; the replan with the stiffer arm passes it.
WitnessCase Seed13Bench44() {
  return {"seed13_planar_obstacles_44",
          {0.24426761968132957, 0.10123267478700021, 0.2100417525281989, 0.19448421851689865,
           0.14836259598444554},
          4.621756141909616,
          20.988530420353314,
          {{-0.064829007212269807, 0.35101182075996573, 0.03151104857858248},
           {-0.26757419649977265, 0.55477340548500043, 0.044965827930696714},
           {0.12902120217063853, -0.0061666676895602568, 0.038390724427918549},
           {0.25851547968532845, 0.10148880688746154, 0.047038781064314333},
           {-0.12688031924200041, 0.5014271563614906, 0.043405423508501191},
           {-0.11834114630856762, 0.011404014964102469, 0.035987707391795604},
           {-0.060010948584789996, -0.062527806125381946, 0.033778923807148871},
           {-0.11381655358133133, -0.096022476526881048, 0.033089895192315755}},
          {{1.551109455995259, 0.67698114482442429, 0.16921950032641495, 0.020228366301941591,
            1.8218839955741029, 0.053172619152381292, 2.9248279022600423},
           {1.9500865692523188, 0.16178606741071472, 0.061638107825801855, 0.048722361313558664,
            4.1723704326796547, 0.99062771119507331, 1.6908486884960316},
           {-0.0044957139354729102, 0.3206841498350127, 0.095646218285327267, 0.079433941407321532,
            4.5461030778564302, 6.0399863193435497, 4.618915209608943},
           {-0.16513304499819534, 0.69784574505150576, 0.03226223503512668, 0.050848415062860287,
            2.8624634748047453, 1.2646097758782466, 0.79561088885242881},
           {1.5765199247535597, 0.31114989170671059, 0.0063136538421386199, 0.032820043609501984,
            3.1786924524168447, 0.32701607123872212, 3.8315631946655384}},
          true};
}

void PrintTo(const WitnessCase& c, std::ostream* os) { *os << c.name; }

class WitnessCaseTest : public ::testing::TestWithParam<WitnessCase> {};

// A WitnessCase as PlanPath takes it: the arm (with the case's rate limits, or none), its
// posts, the witness's hand path sampled every 0.01 s and the witness's sites there.
struct WitnessProblem {
  Arm arm;
  planning::Scene scene;
  Trajectory path;
  std::vector<double> times;
  std::vector<Eigen::Matrix3Xd> witness;
};

WitnessProblem ProblemOf(const WitnessCase& c, bool declare_rate_limits) {
  ArmSpec spec;
  for (double length : c.lengths) spec.limbs.push_back({length, 0.02});
  spec.joint_limits.assign(c.lengths.size() - 1, JointLimit{-2.4, 2.4});
  if (declare_rate_limits) spec.default_rate_limit = {c.max_velocity, c.max_acceleration};
  std::vector<planning::Obstacle> obstacles;
  for (const Eigen::Vector3d& p : c.posts) {
    obstacles.push_back({"o" + std::to_string(obstacles.size()),
                         planning::Capsule{{p.x(), p.y(), -0.05}, {p.x(), p.y(), 0.05}, p.z()}});
  }
  std::vector<Waypoint> waypoints;
  std::vector<Eigen::Matrix3Xd> witness;
  for (int k = 0; k <= 200; ++k) {
    witness.push_back(WitnessSites(c, 0.01 * k));
    waypoints.push_back({0.01 * k, witness.back().col(witness.back().cols() - 1)});
  }
  Trajectory path = *Trajectory::FromWaypoints(waypoints, Interpolation::kLinear);
  std::vector<double> times = *path.SampleTimes(0.01);
  return {*Arm::Create(spec), *planning::Scene::Create(obstacles), std::move(path),
          std::move(times), std::move(witness)};
}

// The witness clears every obstacle by 0.02 m and meets the rate limits (1.5x its own), so a
// clear path within them exists; the plan finds one where the greedy driver (#39, #45) or its
// optimized path (#13, seed 3's #29) does not: clear at every sample (the test's own
// distances), the hand on the witness's hand within 1e-9 m, limbs within 1e-10, and every joint
// within the declared rates (the test's own finite differences). Each case failed before the
// wide-margin starts; seed 3's #29 before the retries of paths over their rates on at most 2/3
// of the samples; seed 7's #23 before the joint-space start.
TEST_P(WitnessCaseTest, PlanIsClearAndWithinTheLimitsWhereTheWitnessIs) {
  const WitnessCase& c = GetParam();
  const WitnessProblem p = ProblemOf(c, true);
  double witness_clearance = std::numeric_limits<double>::infinity();
  for (const Eigen::Matrix3Xd& sites : p.witness) {
    witness_clearance = std::min(witness_clearance, PostClearance(sites, 0.02, c.posts));
  }
  EXPECT_GE(witness_clearance, 0.02);
  ASSERT_EQ(p.times.size(), p.witness.size());
  auto driver = PathDriver::Create(p.arm, &p.scene, p.path, IkOptions{}, p.witness.front());
  ASSERT_TRUE(driver.ok());
  double greedy_clearance = std::numeric_limits<double>::infinity();
  for (double t : p.times) {
    greedy_clearance =
        std::min(greedy_clearance, PostClearance(driver->StepTo(t)->sites, 0.02, c.posts));
  }
  EXPECT_EQ(greedy_clearance < 0.0, c.greedy_collides) << greedy_clearance;
  auto plan = PlanPath(p.arm, &p.scene, p.path, p.times, IkOptions{}, p.witness.front());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->summary.IsSolutionUsable()) << plan->summary.BriefReport();
  if (c.start >= 0) {
    EXPECT_EQ(plan->summary.start, c.start);
  }
  // The plan starts where the arm stands (its hand is on the path): no jump in no time (within
  // 10 nm: the first step's trials may keep a nanometre's move, 1.05e-9 m from seed 3 on #44).
  EXPECT_LT((plan->steps.front().sites - p.witness.front()).colwise().norm().maxCoeff(), 1e-8);
  for (size_t k = 0; k < p.times.size(); ++k) {
    const Eigen::Matrix3Xd& sites = plan->steps[k].sites;
    EXPECT_GE(PostClearance(sites, 0.02, c.posts), 0.0) << "sample " << k;
    EXPECT_LT((sites.col(p.arm.hand()) - p.witness[k].col(p.arm.hand())).norm(), 1e-9)
        << "sample " << k;
  }
  EXPECT_LT(WorstLimbError(p.arm, plan->steps), 1e-10);
  for (const Rates& joint : MeasureJointRates(plan->steps)) {
    EXPECT_LE(joint.max_speed, c.max_velocity * (1 + 1e-9));
    EXPECT_LE(joint.max_acceleration, c.max_acceleration * (1 + 1e-9));
  }
}

// Seed 8's #3: without declared limits, the optimizer's smooth path passes 4 mm from a ball
// whose clearance refused the moves that would round the corner there: a limb turned at 2.4x
// the witness's fastest, until the steps that lower spikes were solved again with those samples
// held.
WitnessCase Seed8Bench3() {
  return {"seed8_planar_obstacles_3",
          {0.12755880208964585, 0.24440291230011296, 0.11451072156165432, 0.17675704657269289,
           0.16525574738118887, 0.20074191770291841},
          4.8789564805649714,
          27.582554602506022,
          {{0.20185275156776075, -0.47468384757602422, 0.034432397430094144},
           {-0.020255549063049376, -0.11126200804998854, 0.03577250909612481},
           {0.056789397807831682, -0.77013729129389941, 0.047464501607810891},
           {0.12482053550288198, 0.064074898379838693, 0.035070714209436374},
           {0.0055164107443057137, -0.79115572436338888, 0.047950303078771676}},
          {{-0.412668593752708, 0.08013555434855958, 0.07635472782033477, 0.05384704626703754,
            1.338011783149087, 0.44906941534923744, 6.221576539985917},
           {-1.2649586523499459, 0.1942006725773615, 0.11522877983449246, 0.059215066101933556,
            3.3050996867936995, 0.7331835491880054, 1.9067498273733812},
           {-0.16034184591280626, 0.09573659096586373, 0.009194444723419772, 0.00435876106300285,
            1.3655198850294412, 3.266028668182928, 5.124670018579131},
           {-1.2462520900408232, 0.6517972208633851, 0.0645589247241083, 0.03849829866480808,
            5.541642300194503, 0.8897796944859534, 3.3827312130192566},
           {0.2730391708048793, 0.6298816316245144, 0.18437488112066844, 0.05898142373103624,
            1.890847411247523, 6.072556255292195, 3.3318533265063333},
           {1.5040604189499194, 0.2672430607550786, 0.19503191034878173, 0.0843440305732688,
            3.3298430677073307, 0.5098016493805123, 0.56450267965011}},
          false};
}

INSTANTIATE_TEST_SUITE_P(BenchScenarios, WitnessCaseTest,
                         ::testing::Values(Bench13(), Bench39(), Bench45(), Seed3Bench29(),
                                           Seed7Bench23(), Seed2Bench1(), Seed3Bench25(),
                                           Seed12Bench12(), Seed13Bench44(), Seed8Bench3()),
                         [](const auto& info) { return info.param.name; });

// The test's own measure of how fast the limbs turn: the largest angle between a limb's
// directions at two consecutive configurations, over `dt` (rad/s).
double FastestLimbTurn(const std::vector<Eigen::Matrix3Xd>& sites, double dt) {
  double fastest = 0.0;
  for (size_t k = 1; k < sites.size(); ++k) {
    for (int l = 0; l + 1 < sites[k].cols(); ++l) {
      const Eigen::Vector2d a = (sites[k - 1].col(l + 1) - sites[k - 1].col(l)).head<2>();
      const Eigen::Vector2d b = (sites[k].col(l + 1) - sites[k].col(l)).head<2>();
      const double turn = std::abs(std::atan2(a.x() * b.y() - a.y() * b.x(), a.dot(b)));
      fastest = std::max(fastest, turn / dt);
    }
  }
  return fastest;
}

// Seeds 18's #0, 10's #37 and 11's #5 without declared limits: the optimized path turned a limb
// at 2.00x, 2.12x and 2.09x the witness's fastest (this test's measure), hurried throughout (its
// peak only 3.1-3.9 times its own RMS), until a peak standing out 2.8 times the RMS and 3 times
// the turn the hand's fastest move needs sent the path to other starts. (greedy_collides is not
// checked by this suite.)
WitnessCase Seed18Bench0() {
  return {"seed18_planar_obstacles_0",
          {0.1974454949966471, 0.22351506217152584, 0.16481923797068543, 0.10949047215743053,
           0.12751381925824667, 0.22287669181245268, 0.12958175797110169},
          4.960941444262934,
          30.066919723679142,
          {{-0.42952064209744878, -0.26560737213174707, 0.033372599257154419},
           {-0.51983548488954934, -0.5530221885557407, 0.035071588472133743},
           {-0.007328938297498172, 0.50493863045121778, 0.032858057507062298},
           {-0.75867792522858768, 0.022256370232888182, 0.050934836954308227},
           {-0.41667809570280856, -0.28828233758369715, 0.037142155319982696},
           {-0.38818035114118926, -0.30380927728612989, 0.033022594029906337}},
          {{2.6671781406315604, 0.77405251293511712, 0.18498314155664566, 0.05776975486377342,
            2.3617898070739396, 3.1164472064707263, 4.0154454410469347},
           {0.22270877762573704, 0.71671373215354073, 0.076223980363345045, 0.017570630762878056,
            0.32594607403714493, 3.1359349603412525, 4.4830026974243768},
           {-1.8172518796901143, 0.093003881073048161, 0.15249372270155348, 0.073211256607207301,
            1.3428620683387125, 3.7035049884660003, 3.0116878857373703},
           {1.5662507963213206, 0.13707534565733104, 0.17250114132967054, 0.049731354872005619,
            4.3113303252216024, 5.6442387902095463, 5.3043822145028496},
           {1.1812711001495284, 0.41874935290707083, 0.09135137717265869, 0.0013351686324984118,
            1.5011804142653733, 6.2025715524343719, 2.2529834047439534},
           {-0.38845353508630298, 0.49615136025024981, 0.097286779950388313, 0.032004069619411213,
            2.7109136284478823, 5.7320486767273042, 4.4275562123231005},
           {1.529267736441815, 0.53513145326680767, 0.097400888124780191, 0.060675405379875591,
            5.796628548052321, 3.119451073881188, 2.0021957021749586}},
          false};
}

WitnessCase Seed10Bench37() {
  return {"seed10_planar_obstacles_37",
          {0.21909286276970394, 0.15105242347444042, 0.21854627595409765, 0.15181899466698909,
           0.17296132673739473, 0.21141613860154568, 0.24823877444315126},
          3.6047290517925825,
          19.742200289736832,
          {{-0.64377469890703043, 0.20971099673360533, 0.035712406452466511},
           {-0.54315204741564416, 0.38492868365553334, 0.055318331432884185},
           {-0.18291349277324775, -0.13993154134153504, 0.034103132017342629},
           {-0.066130945882934764, 0.09159282040760626, 0.040275383270320181},
           {-0.074708064483863718, 0.15231715806490309, 0.051416889630583419},
           {-0.12558605518248822, -0.13959259850098282, 0.049102251474284847},
           {-0.076643217514669737, 0.22231834728414293, 0.052101411548205245},
           {-0.72426579371765154, 0.10312345585495986, 0.038642480024462633},
           {-0.089117268486187229, 0.11527928454077049, 0.033980229139401026},
           {-0.93422492337936669, -0.04284099421272701, 0.047960175331825561}},
          {{-3.0225488402334348, 0.045361430029508654, 0.050021273931365885, 0.078783767614656955,
            4.0349685874441121, 5.4024417707714134, 2.2900774648024202},
           {-1.4678212616233357, 0.49713816468166377, 0.084377984406433168, 0.013690820227548774,
            1.0130333067440809, 2.8057932262116085, 0.56773050321188778},
           {0.19993034255007114, 0.26480663481647265, 0.086258035247086487, 0.086609386916539702,
            5.6323452819078144, 4.5841863023711511, 3.1623515244877654},
           {1.6103648325346951, 0.24613876074729452, 0.1527050072013082, 0.049208475526816141,
            2.9176579283657746, 5.5149369223763181, 0.47271676960901976},
           {1.1430181842856131, 0.050393923888910043, 0.10739173117463599, 0.08363050992884441,
            4.5726233574127724, 1.6326659343625196, 1.0170961996514898},
           {-0.68943037394483953, 0.30875679893873476, 0.040428106088276919, 0.079294384434378237,
            5.577020265992493, 3.4391795323219823, 2.2032671223859777},
           {0.9741272168931201, 0.67110609425182721, 0.036209025639645967, 0.0557313802025124,
            5.5462743071761178, 1.3270182168231313, 1.7852702681181407}},
          false};
}

WitnessCase Seed11Bench5() {
  return {"seed11_planar_obstacles_5",
          {0.23352193032853916, 0.18259831081243216, 0.21846438899585108, 0.17378077183287877,
           0.13803426957958503, 0.19624664792149205, 0.11385261361569929},
          5.9480459808126716,
          25.998444013942969,
          {{-0.35440593068450399, 0.27421341288425027, 0.034251970536119128},
           {-0.84080858062543862, 0.12568452358729651, 0.038796291746502704},
           {-0.36880368157389376, 0.30842270554603618, 0.050701353211155584},
           {-0.55340096199744326, 0.30458377405151854, 0.031739490713619548},
           {-0.125003474364936, 0.30199970016268185, 0.052212597763372282},
           {0.030108507740497184, 0.1115132053472597, 0.033704498694906861},
           {-0.42938684967399982, 0.34714786748717918, 0.046615493050439036},
           {-0.31456808576122741, 0.26967590778092981, 0.052451753196146582},
           {-0.58383820191288371, 0.37119520066173051, 0.042178099793960554},
           {-0.031217546468118598, 0.19714524190142757, 0.031146086321137949}},
          {{2.9052033428760495, 0.7777678739122883, 0.10607880889841892, 0.06135710115008703,
            5.4066611403492679, 2.3844443703719032, 0.3502536693010958},
           {1.6268829065226362, 0.4661068682251937, 0.0073253554947282145, 0.085002963843947968,
            0.04494098342485689, 3.7552379001713114, 3.9319899638016858},
           {-1.6270239116109284, 0.68481416950805096, 0.12038125463717048, 0.0038085913981244662,
            3.0547991518666455, 4.4136897091497698, 4.2564099379190345},
           {0.48336496301180798, 0.6920171617211005, 0.18379503992251928, 0.072964482202905162,
            1.8273331815034464, 3.2625298803790761, 5.4329233481163071},
           {-1.3202217544155073, 0.42238190867786429, 0.19200575733286662, 0.060924938006225879,
            1.9436041466950695, 1.8887575037981874, 0.47186630066857888},
           {-0.061461339435606721, 0.30238627786830724, 0.17222870978160049, 0.033774483898035425,
            3.7641164183479008, 0.27859801421856201, 2.2462610532031095},
           {1.7854878376649062, 0.11510091797186206, 0.18488082288763585, 0.0085842740739978732,
            2.9432928866280088, 2.3251071868767599, 2.5931056807603619}},
          false};
}

class UnhurriedWitnessCaseTest : public ::testing::TestWithParam<WitnessCase> {};

// Issue 33 item 4: the same scenarios with no rate limit declared. The plan is clear and on the
// path, and no limb turns faster than twice the witness's fastest (the test's own angles between
// limb directions, in the world). Seed 3's #29 and #25 turned a limb 2.6x and 4.2x as fast
// before the optimizer lowered spikes of undeclared joints and hurried paths went to other
// starts; seed 8's #3 2.4x before the steps that lower them held the samples whose moves the
// clearance refused.
TEST_P(UnhurriedWitnessCaseTest, NoLimbTurnsMuchFasterThanTheWitnesss) {
  const WitnessCase& c = GetParam();
  const WitnessProblem p = ProblemOf(c, false);
  auto plan = PlanPath(p.arm, &p.scene, p.path, p.times, IkOptions{}, p.witness.front());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->summary.IsSolutionUsable()) << plan->summary.BriefReport();
  std::vector<Eigen::Matrix3Xd> sites;
  for (size_t k = 0; k < p.times.size(); ++k) {
    sites.push_back(plan->steps[k].sites);
    EXPECT_GE(PostClearance(sites.back(), 0.02, c.posts), 0.0) << "sample " << k;
    EXPECT_LT((sites.back().col(p.arm.hand()) - p.witness[k].col(p.arm.hand())).norm(), 1e-9)
        << "sample " << k;
  }
  EXPECT_LE(FastestLimbTurn(sites, 0.01), 2.0 * FastestLimbTurn(p.witness, 0.01));
}

INSTANTIATE_TEST_SUITE_P(BenchScenarios, UnhurriedWitnessCaseTest,
                         ::testing::Values(Bench13(), Bench39(), Bench45(), Seed3Bench29(),
                                           Seed7Bench23(), Seed2Bench1(), Seed3Bench25(),
                                           Seed12Bench12(), Seed13Bench44(), Seed8Bench3(),
                                           Seed18Bench0(), Seed10Bench37(), Seed11Bench5()),
                         [](const auto& info) { return info.param.name; });

TEST(PlanPathTest, SameSeedSameBytes) {
  const Arm arm = PlanarArm(7);
  const Trajectory path = Circle(2.0);
  const auto times = *path.SampleTimes(0.02);
  auto a = PlanPath(arm, nullptr, path, times, IkOptions{});
  auto b = PlanPath(arm, nullptr, path, times, IkOptions{});
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t k = 0; k < times.size(); ++k) {
    ASSERT_EQ(0, std::memcmp(a->steps[k].sites.data(), b->steps[k].sites.data(),
                             sizeof(double) * a->steps[k].sites.size()));
  }
}

TEST(PlanPathTest, StopCheckCancels) {
  const Arm arm = PlanarArm(7);
  const Trajectory path = Circle(2.0);
  auto plan =
      PlanPath(arm, nullptr, path, *path.SampleTimes(0.01), IkOptions{}, {}, [] { return true; });
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kCancelled);
}

TEST(PlanPathTest, BadInputNamesTheField) {
  const Arm arm = PlanarArm(3);
  const Trajectory path = Circle(2.0);
  EXPECT_THAT(PlanPath(arm, nullptr, path, {0.0, 0.5, 0.4}, IkOptions{}).status().message(),
              HasSubstr("times[2]"));
  EXPECT_THAT(PlanPath(arm, nullptr, path, {}, IkOptions{}).status().message(), HasSubstr("times"));
  ArmSpec spec;
  spec.limbs = {{0.5, 0.0}, {0.5, 0.0}};
  spec.default_rate_limit.max_velocity = -1.0;
  EXPECT_THAT(Arm::Create(spec).status().message(), HasSubstr("default_rate_limit.max_velocity"));
  spec.default_rate_limit = {};
  spec.rate_limits = {std::nullopt, JointRateLimit{1.0, 0.0}};
  EXPECT_THAT(Arm::Create(spec).status().message(), HasSubstr("rate_limits[1].max_acceleration"));
  spec.rate_limits = {std::nullopt};
  EXPECT_THAT(Arm::Create(spec).status().message(), HasSubstr("rate_limits: need 0 or 2"));
}

}  // namespace
}  // namespace ikd::ik
