#include "ikd/ik/tracker.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::ik {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = std::numbers::pi;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

Arm PlanarArm(int n, double total = 1.4) {
  ArmSpec spec;
  for (int k = 0; k < n; ++k) spec.limbs.push_back({total / n, 0.01});
  return *Arm::Create(spec);
}

Arm SpatialArm(int n, double total = 1.4) {
  ArmSpec spec;
  spec.planar = false;
  for (int k = 0; k < n; ++k) spec.limbs.push_back({total / n, 0.01});
  return *Arm::Create(spec);
}

// Largest change of any joint angle (radians, wrapped) between consecutive steps, per unit of
// hand motion measured in shortest-limb lengths: a joint jump shows up as a large ratio.
// Paths stay between 0.4 and 0.8 of the reach, where no fold is forced.
double WorstAngleRatePerHandStep(const Arm& arm, const std::vector<IkResult>& steps) {
  double worst = 0.0;
  for (size_t s = 1; s < steps.size(); ++s) {
    const double hand =
        (steps[s].sites.col(arm.hand()) - steps[s - 1].sites.col(arm.hand())).norm();
    double change = 0.0;
    for (int k = 1; k < arm.num_limbs(); ++k) {
      const double d = arm.JointAngle(steps[s].sites, k) - arm.JointAngle(steps[s - 1].sites, k);
      change = std::max(change, std::abs(std::remainder(d, 2 * kPi)));
    }
    if (hand > 1e-12) worst = std::max(worst, change / (hand / arm.shortest_limb()));
  }
  return worst;
}

struct PathCase {
  const char* name;
  int limbs;
  bool planar;
  int path;  // 0 line, 1 circle, 2 polyline
};

class FreeSpaceTest : public ::testing::TestWithParam<PathCase> {};

Trajectory MakePath(int path) {
  switch (path) {
    case 0:
      return *Trajectory::Line({1.0, -0.3, 0.0}, {0.5, 0.7, 0.0}, 2.0);
    case 1:
      return *Trajectory::Arc({0.8, 0.2, 0.0}, {0, 0, 1}, {1.05, 0.2, 0.0}, 2 * kPi, 3.0);
    default:
      return *Trajectory::Polyline(
          {{0.9, 0.0, 0.0}, {0.6, 0.6, 0.0}, {0.2, 0.8, 0.0}, {0.7, 0.3, 0.0}}, 0.5);
  }
}

// Issue 3: on reachable paths the hand error is <= 1e-9 x reach at every sample, limb lengths
// hold to 1e-10 relative, and no joint jumps: the angle change per 5 ms sample stays below 12
// rad per shortest-limb length of hand motion (a joint flip, ~pi per sample, would give
// 85-600). Measured over seeds 1-20: at most 6.3 (7 limbs), 8.7 (12) and 11.2 (20, circle;
// the tracker without the free-space fast path of docs/algorithms.md: up to 15.1).
TEST_P(FreeSpaceTest, FollowsPathExactlyAndSmoothly) {
  const PathCase c = GetParam();
  const Arm arm = c.planar ? PlanarArm(c.limbs) : SpatialArm(c.limbs);
  IkOptions options;
  options.seed = 17;
  auto steps = SolveTrajectory(arm, nullptr, MakePath(c.path), 0.005, options);
  ASSERT_TRUE(steps.ok()) << steps.status();
  for (const IkResult& s : *steps) {
    ASSERT_EQ(s.status, planning::StepStatus::kReached)
        << planning::StepStatusName(s.status) << " at t=" << s.time;
    EXPECT_LE(s.hand_error, 1e-9 * arm.max_reach()) << "t=" << s.time;
    EXPECT_LE(s.constraint_residual, 1e-10) << "t=" << s.time;
    EXPECT_TRUE(s.sites.allFinite());
  }
  EXPECT_LT(WorstAngleRatePerHandStep(arm, *steps), 12.0);
}

INSTANTIATE_TEST_SUITE_P(Arms, FreeSpaceTest,
                         ::testing::Values(PathCase{"planar3_line", 3, true, 0},
                                           PathCase{"planar3_circle", 3, true, 1},
                                           PathCase{"planar7_line", 7, true, 0},
                                           PathCase{"planar7_circle", 7, true, 1},
                                           PathCase{"planar7_polyline", 7, true, 2},
                                           PathCase{"planar20_circle", 20, true, 1},
                                           PathCase{"planar20_polyline", 20, true, 2},
                                           PathCase{"spatial6_line", 6, false, 0},
                                           PathCase{"spatial6_circle", 6, false, 1},
                                           PathCase{"spatial6_polyline", 6, false, 2}),
                         [](const auto& info) { return std::string(info.param.name); });

// A 7-link planar arm (limbs 0.2 m, radius 0.02 m) whose hand sweeps in 100 steps from a to b
// (default: x = 0.8 m from y = -0.5 to y = 0.6, past a pillar).
struct SweepResult {
  double min_obstacle_clearance = kInfinity;  // over all steps and limbs
  double min_self_clearance = kInfinity;
  double max_limit_violation = 0.0;
  double max_hand_error = 0.0;
  int not_reached = 0;
  std::vector<IkResult> steps;
};
Arm SevenLink(std::vector<std::optional<JointLimit>> limits = {}) {
  ArmSpec spec;
  for (int k = 0; k < 7; ++k) spec.limbs.push_back({0.2, 0.02});
  spec.joint_limits = std::move(limits);
  return *Arm::Create(spec);
}

SweepResult Sweep(const Arm& arm, planning::Scene* scene, const IkOptions& options,
                  const std::function<void(int, planning::Scene&)>& move_scene = {},
                  const Eigen::Vector3d& a = {0.8, -0.5, 0.0},
                  const Eigen::Vector3d& b = {0.8, 0.6, 0.0}) {
  SweepResult r;
  auto tracker = ArmTracker::Create(arm, scene, options);
  EXPECT_TRUE(tracker.ok()) << tracker.status();
  std::vector<double> radii(arm.num_limbs(), 0.02);
  for (int s = 0; s <= 100; ++s) {
    if (move_scene) move_scene(s, *scene);
    auto step = tracker->StepTo(a + (b - a) * (s / 100.0), s * 0.01);
    EXPECT_TRUE(step.ok());
    for (int k = 0; k < arm.num_limbs() && scene != nullptr; ++k) {
      r.min_obstacle_clearance =
          std::min(r.min_obstacle_clearance,
                   scene->MinSignedDistance(step->sites.col(k), step->sites.col(k + 1), radii[k]));
    }
    r.min_self_clearance =
        std::min(r.min_self_clearance, planning::MinSelfClearance(step->sites, radii));
    r.max_limit_violation = std::max(r.max_limit_violation, arm.LimitViolation(step->sites));
    r.max_hand_error = std::max(r.max_hand_error, step->hand_error);
    if (step->status != planning::StepStatus::kReached) ++r.not_reached;
    r.steps.push_back(*std::move(step));
  }
  return r;
}

IkOptions Plain() {
  IkOptions o;
  o.trials_per_step = 0;
  o.safety_margin = 0.02;
  return o;
}

IkOptions Optimized(uint64_t seed = 1) {
  IkOptions o;
  o.seed = seed;
  o.safety_margin = 0.02;
  return o;
}

// Kastenmeier & Vesely step (c): plain projection (a)+(b) drives limbs through a pillar; the
// stochastic optimization keeps every limb clear of it by the 0.02 m margin at every step.
TEST(ObstacleTest, OptimizerKeepsLimbsOutOfThePillar) {
  // Pillars (x, y, radius) that the plain projection crosses.
  for (const Eigen::Vector3d& pillar :
       {Eigen::Vector3d(0.5, 0.3, 0.08), Eigen::Vector3d(0.4, -0.1, 0.1),
        Eigen::Vector3d(0.3, 0.3, 0.1)}) {
    auto scene = *planning::Scene::Create(
        {{"pillar", planning::Capsule{
                        {pillar.x(), pillar.y(), -1}, {pillar.x(), pillar.y(), 1}, pillar.z()}}});
    const Arm arm = SevenLink();
    EXPECT_LT(Sweep(arm, &scene, Plain()).min_obstacle_clearance, 0.0);
    const SweepResult optimized = Sweep(arm, &scene, Optimized());
    EXPECT_GE(optimized.min_obstacle_clearance, 0.02);
    EXPECT_GE(optimized.min_self_clearance, 0.02);
    EXPECT_EQ(optimized.not_reached, 0);
    EXPECT_LE(optimized.max_hand_error, 1e-9 * arm.max_reach());
  }
}

// Pulling the hand in next to the base makes the plain projection fold non-adjacent limbs
// across each other (planar self-collision, clearance -2 r = -0.04 m); the optimizer curls the
// arm instead and keeps the limbs apart by the margin.
TEST(ObstacleTest, OptimizerAvoidsSelfCollision) {
  const Arm arm = SevenLink();
  const Eigen::Vector3d from(0.9, 0.0, 0.0), to(0.1, 0.05, 0.0);
  EXPECT_LT(Sweep(arm, nullptr, Plain(), {}, from, to).min_self_clearance, 0.0);
  const SweepResult optimized = Sweep(arm, nullptr, Optimized(), {}, from, to);
  EXPECT_GE(optimized.min_self_clearance, 0.02);
  EXPECT_EQ(optimized.not_reached, 0);
}

// The cost skips the limb-pair search while no pair can be inside the margin, judged from the
// last step's exact clearance and how far the sites have moved since. Configurations near and
// far from that step, folded into self-contact or not, must still be charged exactly what
// MinSelfClearance gives: w_s (1.25 m - d)^2 summed over the pairs inside the buffered margin.
TEST(ObstacleTest, CostChargesSelfContactAfterAnyMove) {
  const Arm arm = SevenLink();
  IkOptions options = Optimized();
  options.trials_per_step = 0;  // plain projections: the history does not depend on the weights
  auto tracker = *ArmTracker::Create(arm, nullptr, options);
  ASSERT_TRUE(tracker.StepTo({0.9, 0.2, 0.0}).ok());  // measured here, clear of itself
  const Eigen::Matrix3Xd clear = tracker.sites();
  ASSERT_GT(tracker.MinClearance(clear), 1.25 * options.safety_margin);
  const double margin = 1.25 * options.safety_margin;
  const std::vector<double> radii(arm.num_limbs(), 0.02);
  auto self_term = [&](const Eigen::Matrix3Xd& sites) {
    double sum = 0.0;
    for (int i = 0; i < arm.num_limbs(); ++i) {
      for (int j = i + 2; j < arm.num_limbs(); ++j) {
        const double d = planning::SegmentSegmentDistance(sites.col(i), sites.col(i + 1),
                                                          sites.col(j), sites.col(j + 1)) -
                         0.04;
        sum += options.weights.self_clearance * std::pow(std::max(0.0, margin - d), 2);
      }
    }
    return sum;
  };
  // Fold joint k by most of a turn (self-contact), or bend it a little (clear): from the
  // measured pose's own angles, so that the fold is a move of the sites beyond joint k.
  const std::vector<double> measured = arm.AnglesFromSites(clear);
  int in_contact = 0;
  for (int k = 1; k < arm.num_limbs(); ++k) {
    for (double bend : {2.9, 0.01}) {
      std::vector<double> angles = measured;
      angles[k] += bend;
      const Eigen::Matrix3Xd sites = *arm.SitesFromAngles(angles);
      const double expected = self_term(sites);
      if (expected > 0.0) ++in_contact;
      // Cost = self term + smooth terms; the smooth terms alone are the cost of the same
      // configuration with self-clearance weight 0 (a tracker with the same history).
      IkOptions no_self = options;
      no_self.weights.self_clearance = 0.0;
      auto smooth_only = *ArmTracker::Create(arm, nullptr, no_self);
      ASSERT_TRUE(smooth_only.StepTo({0.9, 0.2, 0.0}).ok());
      ASSERT_EQ(smooth_only.sites(), clear);  // the same history
      EXPECT_NEAR(tracker.Cost(sites), smooth_only.Cost(sites) + expected, 1e-9 * (1.0 + expected))
          << "joint " << k << " bent by " << bend;
    }
  }
  EXPECT_GE(in_contact, 3);  // the folds that bring a limb inside the margin of another
}

// A ball moving towards the arm between steps (1 cm per step): the arm gives way and stays
// clear by the margin while the hand keeps tracking.
TEST(ObstacleTest, MovingObstacleIsAvoided) {
  auto scene = *planning::Scene::Create({{"ball", planning::Sphere{{0.2, 0.9, 0.0}, 0.06}}});
  const SweepResult r = Sweep(SevenLink(), &scene, Optimized(), [](int s, planning::Scene& sc) {
    if (s > 0) {
      ASSERT_TRUE(sc.Move("ball", Eigen::Vector3d(0.0, -0.01, 0.0)).ok());
    }
  });
  EXPECT_GE(r.min_obstacle_clearance, 0.02);
  EXPECT_EQ(r.not_reached, 0);
}

// Joint limits of +-50 degrees are never exceeded (violation <= 1e-9 rad) along the sweep.
TEST(JointLimitTest, LimitsAreNeverExceeded) {
  std::vector<std::optional<JointLimit>> limits(6, JointLimit{-0.87, 0.87});
  const Arm arm = SevenLink(limits);
  const SweepResult r = Sweep(arm, nullptr, Optimized());
  EXPECT_LE(r.max_limit_violation, 1e-9);
  EXPECT_EQ(r.not_reached, 0);
}

// Beyond reach the hand stops at the closest reachable point (error = |target| - reach); at
// exactly full reach the arm is straight (singular Jacobian) and finite; the stream goes on.
TEST(ReachTest, UnreachableAndExactlyAtReachAreClampedAndFinite) {
  const Arm arm = SevenLink();
  auto tracker = *ArmTracker::Create(arm, nullptr, Optimized());
  auto far = *tracker.StepTo({3.0, 0.0, 0.0});
  EXPECT_EQ(far.status, planning::StepStatus::kClampedUnreachable);
  EXPECT_NEAR(far.hand_error, 3.0 - 1.4, 1e-12);
  EXPECT_NEAR(far.clamp_distance, 1.6, 1e-12);
  EXPECT_TRUE(far.sites.allFinite());
  EXPECT_LE(far.constraint_residual, 1e-10);
  auto at_reach = *tracker.StepTo({0.0, 1.4, 0.0});
  EXPECT_EQ(at_reach.status, planning::StepStatus::kClampedUnreachable);
  EXPECT_LE(at_reach.hand_error, 1e-9 * 1.4);
  EXPECT_TRUE(at_reach.sites.allFinite());
  EXPECT_LE(at_reach.constraint_residual, 1e-10);
  auto back = *tracker.StepTo({0.5, 0.5, 0.0});
  EXPECT_EQ(back.status, planning::StepStatus::kReached);
  EXPECT_LE(back.hand_error, 1e-9 * 1.4);
}

// Inside the minimal reach (a long first limb folds back onto itself at best): clamped to the
// inner shell, |hand| = 2 * 1.0 - 1.5 = 0.5.
TEST(ReachTest, InsideMinimalReachIsClamped) {
  ArmSpec spec;
  spec.limbs = {{1.0, 0.0}, {0.3, 0.0}, {0.2, 0.0}};
  auto arm = *Arm::Create(spec);
  auto step = *SolvePose(arm, nullptr, {0.1, 0.0, 0.0}, Optimized());
  EXPECT_EQ(step.status, planning::StepStatus::kClampedUnreachable);
  EXPECT_NEAR(step.sites.col(3).norm(), 0.5, 1e-9);
  EXPECT_TRUE(step.sites.allFinite());
}

// Determinism: the same seed reproduces every byte; another seed gives another valid path.
TEST(DeterminismTest, SeedReproducesBitsAndOtherSeedsDiffer) {
  auto scene = *planning::Scene::Create(
      {{"pillar", planning::Capsule{{0.5, 0.3, -1}, {0.5, 0.3, 1}, 0.08}}});
  const Arm arm = SevenLink();
  const SweepResult a = Sweep(arm, &scene, Optimized(5));
  const SweepResult b = Sweep(arm, &scene, Optimized(5));
  const SweepResult c = Sweep(arm, &scene, Optimized(6));
  ASSERT_EQ(a.steps.size(), b.steps.size());
  bool differs = false;
  for (size_t s = 0; s < a.steps.size(); ++s) {
    EXPECT_EQ(0, std::memcmp(a.steps[s].sites.data(), b.steps[s].sites.data(),
                             sizeof(double) * a.steps[s].sites.size()));
    differs = differs || a.steps[s].sites != c.steps[s].sites;
  }
  EXPECT_TRUE(differs);
  EXPECT_EQ(c.not_reached, 0);
  EXPECT_GE(c.min_obstacle_clearance, 0.02);
}

// Clear of every margin the cost is smooth and the descent trial alone optimizes it: a free
// arm's path is the same for every seed, unless random trials are asked for there too. (The
// sweep starts where a first tracker put the hand: the way from the curled home pose passes
// through the self-clearance margin, where random trials run.)
TEST(DeterminismTest, FreeArmIgnoresTheSeedUnlessExploring) {
  const Arm arm = SevenLink();
  auto first = *ArmTracker::Create(arm, nullptr, Optimized());
  ASSERT_TRUE(first.StepTo({0.8, -0.5, 0.0}).ok());
  IkOptions explore = Optimized(6);
  explore.explore_unconstrained = true;
  std::vector<std::vector<IkResult>> runs;
  for (const IkOptions& options : {Optimized(5), Optimized(6), explore}) {
    auto tracker = *ArmTracker::Create(arm, nullptr, options, first.sites());
    runs.emplace_back();
    for (int s = 1; s <= 100; ++s) {
      auto step = tracker.StepTo({0.8, -0.5 + 0.011 * s, 0.0});
      ASSERT_TRUE(step.ok());
      EXPECT_EQ(step->status, planning::StepStatus::kReached);
      runs.back().push_back(*std::move(step));
    }
  }
  bool differs = false;
  for (size_t s = 0; s < runs[0].size(); ++s) {
    ASSERT_GT(runs[0][s].min_clearance, 1.25 * Optimized().safety_margin);  // no term active
    EXPECT_EQ(0, std::memcmp(runs[0][s].sites.data(), runs[1][s].sites.data(),
                             sizeof(double) * runs[0][s].sites.size()));
    differs = differs || runs[0][s].sites != runs[2][s].sites;
  }
  EXPECT_TRUE(differs);
}

// A budget of 1 ns leaves no time for trials: the step is the plain projection (+ pushes),
// still exact on the hand and the limbs.
TEST(TimeBudgetTest, ExhaustedBudgetSkipsRandomTrials) {
  IkOptions options = Optimized();
  options.time_budget_seconds = 1e-9;
  const Arm arm = SevenLink();
  auto step = *SolvePose(arm, nullptr, {0.6, 0.6, 0.0}, options);
  EXPECT_EQ(step.status, planning::StepStatus::kReached);
  EXPECT_EQ(step.trials_accepted, 0);
  EXPECT_LE(step.hand_error, 1e-9 * arm.max_reach());
}

// The random trials of a sub-step stop after `patience` rejections in a row: with 1000 trials
// per sub-step along a free sweep (explored although no clearance term is active), the
// default patience (4) runs a small fraction of the projections (iterations) that patience 0
// (every trial) runs, and both reproduce their bits.
TEST(PatienceTest, RejectionsInARowEndTheRandomTrials) {
  const Arm arm = SevenLink();
  IkOptions every = Optimized();
  every.trials_per_step = 1000;
  every.patience = 0;
  every.explore_unconstrained = true;
  IkOptions patient = every;
  patient.patience = 4;
  const SweepResult all = Sweep(arm, nullptr, every);
  const SweepResult stopped = Sweep(arm, nullptr, patient);
  int all_iterations = 0, stopped_iterations = 0;
  for (const IkResult& s : all.steps) all_iterations += s.iterations;
  for (const IkResult& s : stopped.steps) stopped_iterations += s.iterations;
  EXPECT_GT(all_iterations, 1000 * 100);
  EXPECT_LT(stopped_iterations, all_iterations / 20);
  EXPECT_EQ(stopped.not_reached, 0);
  const SweepResult again = Sweep(arm, nullptr, patient);
  for (size_t s = 0; s < again.steps.size(); ++s) {
    EXPECT_EQ(0, std::memcmp(again.steps[s].sites.data(), stopped.steps[s].sites.data(),
                             sizeof(double) * again.steps[s].sites.size()));
  }
}

// Single-pose IK from home reaches a target anywhere inside the shell (error <= 1e-9 reach).
TEST(SolvePoseTest, ReachesTargetFromHome) {
  const Arm arm = SpatialArm(6);
  auto step = SolvePose(arm, nullptr, {0.3, -0.6, 0.8}, Optimized());
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->status, planning::StepStatus::kReached);
  EXPECT_LE(step->hand_error, 1e-9 * arm.max_reach());
  EXPECT_LE(step->constraint_residual, 1e-10);
}

TEST(BadInputTest, ErrorsNameTheField) {
  const Arm arm = SevenLink();
  auto tracker = *ArmTracker::Create(arm, nullptr, Optimized());
  EXPECT_THAT(std::string(tracker.StepTo({NAN, 0, 0}).status().message()), HasSubstr("target"));
  // Fuzzer finding 12 (docs/fuzzing.md): a target at x = -3.1e231 m was clamped to the reach,
  // and its hand error |target - hand| overflowed to inf. Targets must lie in the world.
  const absl::Status far = tracker.StepTo({-3.1050369133325719e231, 0.5, 0}).status();
  EXPECT_EQ(far.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(far.message()),
              HasSubstr("target must be finite and within 1e+06 m of the origin"));
  auto edge = tracker.StepTo({-1e6, 0.5, 0});  // the world's edge: far out of reach, all finite
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_EQ(edge->status, planning::StepStatus::kClampedUnreachable);
  EXPECT_TRUE(std::isfinite(edge->hand_error));
  EXPECT_TRUE(std::isfinite(edge->clamp_distance));
  IkOptions bad = Optimized();
  bad.safety_margin = -1.0;
  EXPECT_THAT(std::string(ArmTracker::Create(arm, nullptr, bad).status().message()),
              HasSubstr("safety_margin must be finite and in [0, 1e+06] m"));
  bad = Optimized();
  bad.weights.velocity = NAN;
  EXPECT_THAT(std::string(ArmTracker::Create(arm, nullptr, bad).status().message()),
              HasSubstr("weights.velocity"));
  bad = Optimized();
  bad.patience = -1;
  EXPECT_THAT(std::string(ArmTracker::Create(arm, nullptr, bad).status().message()),
              HasSubstr("patience must be in [0, 100000]"));
  bad = Optimized();
  bad.time_budget_seconds = -1.0;
  EXPECT_THAT(std::string(ArmTracker::Create(arm, nullptr, bad).status().message()),
              HasSubstr("time_budget_seconds must be in [0, 3600]"));
  Eigen::Matrix3Xd stretched = arm.HomeSites();
  stretched(0, 3) += 0.1;
  EXPECT_THAT(
      std::string(ArmTracker::Create(arm, nullptr, Optimized(), stretched).status().message()),
      HasSubstr("initial_sites: limb lengths violated"));
}

}  // namespace
}  // namespace ikd::ik
