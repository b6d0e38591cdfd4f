#include "ikd/ik/path.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
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
std::vector<std::vector<double>> PlanarAngles(const std::vector<IkStep>& steps) {
  std::vector<std::vector<double>> out;
  for (const IkStep& s : steps) {
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
std::vector<Rates> MeasureJointRates(const std::vector<IkStep>& steps) {
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
Rates MeasureRates(const std::vector<IkStep>& steps) {
  Rates rates;
  for (const Rates& joint : MeasureJointRates(steps)) {
    rates.max_speed = std::max(rates.max_speed, joint.max_speed);
    rates.max_acceleration = std::max(rates.max_acceleration, joint.max_acceleration);
  }
  return rates;
}

double WorstLimbError(const Arm& arm, const std::vector<IkStep>& steps) {
  double worst = 0.0;
  for (const IkStep& s : steps) {
    for (int k = 0; k < arm.num_limbs(); ++k) {
      const double length = arm.spec().limbs[k].length;
      worst = std::max(worst, std::abs((s.sites.col(k + 1) - s.sites.col(k)).norm() - length) / length);
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
  for (const IkStep& s : optimized->steps) {
    const double angle = 2 * kPi * s.time / 3.0;
    const Eigen::Vector3d on_circle(0.8 + 0.25 * std::cos(angle), 0.2 + 0.25 * std::sin(angle), 0);
    EXPECT_LT((s.sites.col(arm.hand()) - on_circle).norm(), 1e-9) << "t = " << s.time;
    EXPECT_EQ(s.status, StepStatus::kReached);
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
  std::vector<IkStep> steps;
  Trajectory path;
};

Witness FiveJointWitness(const Arm& arm, const std::vector<double>& amplitudes = {1, 1, 1, 1, 1}) {
  auto angles = [&](double t) {
    std::vector<double> q;
    for (int j = 0; j < 5; ++j) {
      q.push_back((j == 0 ? 0.3 : 0.4) +
                  amplitudes[j] * (0.3 * std::sin(kPi * t + j) + 0.1 * std::sin(2 * kPi * t + 2 * j)));
    }
    return q;
  };
  std::vector<Waypoint> waypoints;
  std::vector<IkStep> witness;
  for (int k = 0; k <= 200; ++k) {
    IkStep step;
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
    EXPECT_LT((plan->steps[k].sites.col(arm.hand()) - witness[k].sites.col(arm.hand())).norm(), 1e-9);
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
  for (const IkStep& s : fast->steps) {
    EXPECT_THAT(s.status, ::testing::AnyOf(StepStatus::kReached, StepStatus::kVelocityLimited,
                                           StepStatus::kAccelerationLimited));
  }
  std::vector<IkStep> stretched = fast->steps;
  for (IkStep& s : stretched) s.time *= scaling;
  const Rates rates = MeasureRates(stretched);
  EXPECT_LE(rates.max_speed, 0.5 * (1 + 1e-9));
  EXPECT_LE(rates.max_acceleration, 2.0 * (1 + 1e-9));
  EXPECT_NEAR(std::max(rates.max_speed / 0.5, std::sqrt(rates.max_acceleration / 2.0)), 1.0, 1e-9);
  const PathSummary summary = SummarizePath(arm, stretched);
  EXPECT_NEAR(summary.feasible_time_scaling, 1.0, 1e-9);
}

// Clearance is never traded for smoothness: each sample's clearance (the test's own
// point-segment distance to the pillar, minus radii) stays at least min(the step-by-step
// path's, the margin).
TEST(PlanPathTest, OptimizationKeepsTheClearanceOfTheTrackerPath) {
  const Arm arm = PlanarArm(7);
  const Eigen::Vector3d pillar(0.55, 0.55, 0.0);
  const double pillar_radius = 0.06;
  auto scene = Scene::Create({{"pillar", Capsule{{pillar.x(), pillar.y(), -1}, {pillar.x(), pillar.y(), 1}, pillar_radius}}});
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
  std::vector<Obstacle> obstacles;
  for (const Eigen::Vector3d& p : posts) {
    obstacles.push_back({"post" + std::to_string(obstacles.size()),
                         Capsule{{p.x(), p.y(), -0.5}, {p.x(), p.y(), 0.5}, p.z()}});
  }
  const Scene scene = *Scene::Create(obstacles);
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
    for (const IkStep& s : plan->steps) {
      EXPECT_GE(PostClearance(s.sites, 0.02, posts), 0.0) << "t = " << s.time;
      const double angle = kPi * s.time / 2.0;
      const Eigen::Vector3d on_arc(0.5 + 0.25 * std::cos(angle), 0.25 * std::sin(angle), 0);
      EXPECT_LT((s.sites.col(arm.hand()) - on_arc).norm(), 1e-9) << "t = " << s.time;
    }
    EXPECT_LT(WorstLimbError(arm, plan->steps), 1e-10);
  }
}

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
  auto plan = PlanPath(arm, nullptr, path, *path.SampleTimes(0.01), IkOptions{}, {},
                       [] { return true; });
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
