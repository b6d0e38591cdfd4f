// Scenarios of the IK benchmark and the per-run quality record.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <string>

#include "ik_bench.h"
#include "bench_util.h"
#include "ikd/ik/trajectory.h"

namespace ikd::bench {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void Die(const std::string& what) { DieIn("ik_bench", what); }

template <class T>
T Unwrap(absl::StatusOr<T> value, const char* what) {
  return UnwrapIn("ik_bench", std::move(value), what);
}


ik::Arm MakeArm(int limbs, bool planar, double total_length, double radius) {
  ik::ArmSpec spec;
  spec.planar = planar;
  for (int k = 0; k < limbs; ++k) spec.limbs.push_back({total_length / limbs, radius});
  return Unwrap(ik::Arm::Create(spec), "Arm::Create");
}

// Samples one closed circular hand path (or its first `fraction`) at `samples_per_loop` targets
// per loop, through ikd's Trajectory::Arc.
std::vector<Eigen::Vector3d> CircleTargets(const Eigen::Vector3d& center, const Eigen::Vector3d& axis,
                                           const Eigen::Vector3d& start, const BenchConfig& config) {
  const double duration = config.path_fraction;  // one loop per second
  auto arc = Unwrap(ik::Trajectory::Arc(center, axis, start, 2 * kPi * config.path_fraction, duration),
                    "Trajectory::Arc");
  std::vector<Eigen::Vector3d> targets;
  for (double t : Unwrap(arc.SampleTimes(1.0 / config.samples_per_loop), "SampleTimes")) {
    targets.push_back(arc.PositionAt(t));
  }
  return targets;
}

// `count` obstacles, half spheres and half capsule posts standing across the arm's plane
// (z = 0), at random (fixed seed) around the outside of the planar hand circle: surface
// clearance 0.03-0.15 m from the path, radius 0.025-0.045 m, at least 0.05 m between
// obstacles, 0.2 m from the base and 0.03 m from every limb axis of the start pose (so that
// the common start is collision-free). Nothing sits inside the circle: an obstacle there would
// make the arm wind once around it per loop, so no collision-free tracking would exist.
planning::Scene PlanarObstacles(int count, const Eigen::Vector3d& center, double path_radius,
                                const Eigen::Matrix3Xd& start_sites, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<planning::Obstacle> obstacles;
  std::vector<std::pair<Eigen::Vector3d, double>> placed;  // center, radius
  for (int attempt = 0; static_cast<int>(placed.size()) < count; ++attempt) {
    if (attempt > 100000) Die("could not place the obstacles");
    const double angle = 2 * kPi * Uniform(rng);
    const double clearance = 0.03 + 0.12 * Uniform(rng);
    const double radius = 0.025 + 0.02 * Uniform(rng);
    const bool sphere = Uniform(rng) < 0.5;
    const Eigen::Vector3d c =
        center + (path_radius + clearance + radius) * Eigen::Vector3d(std::cos(angle), std::sin(angle), 0);
    if (c.norm() < 0.2 + radius) continue;
    bool crowded = false;
    for (int k = 0; k + 1 < start_sites.cols(); ++k) {
      crowded = crowded || planning::PointSegmentDistance(c, start_sites.col(k),
                                                          start_sites.col(k + 1)) < radius + 0.03;
    }
    for (const auto& [other, other_radius] : placed) {
      crowded = crowded || (c - other).norm() - radius - other_radius < 0.05;
    }
    if (crowded) continue;
    placed.push_back({c, radius});
    char id[16];
    std::snprintf(id, sizeof id, "o%zu", obstacles.size());
    if (sphere) {
      obstacles.push_back({id, planning::Sphere{c, radius}});
    } else {
      const Eigen::Vector3d half_height(0, 0, 0.1);
      obstacles.push_back({id, planning::Capsule{c - half_height, c + half_height, radius}});
    }
  }
  return Unwrap(planning::Scene::Create(std::move(obstacles)), "Scene::Create");
}

double PathClearance(const planning::Scene& scene, const std::vector<Eigen::Vector3d>& targets) {
  double clearance = kInf;
  for (size_t k = 0; k + 1 < targets.size(); ++k) {
    clearance = std::min(clearance, scene.MinSignedDistance(targets[k], targets[k + 1], 0.0));
  }
  return clearance;
}

// The common start of every solver: ikd drives the hand in free space from the arm's home pose
// onto the path's first point.
Eigen::Matrix3Xd StartSites(const ik::Arm& arm, const Eigen::Vector3d& first_target,
                            const ik::IkOptions& options) {
  const ik::IkResult start =
      Unwrap(ik::SolvePose(arm, nullptr, first_target, options), "SolvePose");
  if (start.status != planning::StepStatus::kReached) {
    Die(std::string("the start pose is ") + planning::StepStatusName(start.status));
  }
  return start.sites;
}

std::unique_ptr<Scenario> Finish(std::string name, std::string path, ik::Arm arm,
                                 planning::Scene scene, std::vector<Eigen::Vector3d> targets,
                                 ik::IkOptions options,
                                 std::optional<Eigen::Matrix3Xd> start = {}) {
  auto s = std::unique_ptr<Scenario>(new Scenario{std::move(name), std::move(path), std::move(arm),
                                                  std::move(scene), std::move(targets),
                                                  Eigen::Matrix3Xd(), options});
  s->min_path_clearance = s->has_obstacles() ? PathClearance(s->scene, s->targets) : kInf;
  s->start_sites = start ? *std::move(start) : StartSites(s->arm, s->targets.front(), options);
  for (int k = 0; k < s->arm.num_limbs(); ++k) {
    if (s->scene.MinSignedDistance(s->start_sites.col(k), s->start_sites.col(k + 1),
                                   s->arm.spec().limbs[k].radius) < 0.0) {
      Die(s->name + ": the start pose hits an obstacle");
    }
  }
  return s;
}

}  // namespace

std::unique_ptr<Scenario> MakePlanarCircleScenario(const BenchConfig& config, int obstacles) {
  // Planar 7-link arm, 1.4 m, limb radius 1 cm; the hand circles (0.8, 0.2) at 0.25 m,
  // 0.57-1.08 m from the base.
  const Eigen::Vector3d center(0.8, 0.2, 0.0), z = Eigen::Vector3d::UnitZ();
  const Eigen::Vector3d start = center + Eigen::Vector3d(0.25, 0, 0);
  const auto circle = CircleTargets(center, z, start, config);
  const std::string circle_text = "circle r 0.25 m about (0.8, 0.2, 0) in the plane z = 0";
  // The start pose (and so the obstacle layout built around it) comes from a plain projection,
  // which does not depend on the tracker's cost weights: tuning the weights must not move the
  // obstacles and so change the problem being measured.
  ik::IkOptions plain;
  plain.trials_per_step = 0;
  const Eigen::Matrix3Xd planar_start = StartSites(MakeArm(7, true, 1.4, 0.01), circle.front(), plain);
  char name[32] = "planar7 free";
  if (obstacles > 0) std::snprintf(name, sizeof name, "planar7 %d obstacles", obstacles);
  return Finish(name, circle_text, MakeArm(7, true, 1.4, 0.01),
                obstacles == 0
                    ? planning::Scene()
                    : PlanarObstacles(obstacles, center, 0.25, planar_start, config.layout_seed),
                circle, ik::IkOptions{}, planar_start);
}

std::vector<std::unique_ptr<Scenario>> MakeScenarios(const BenchConfig& config) {
  std::vector<std::unique_ptr<Scenario>> scenarios;
  for (int obstacles : {0, 5, 20}) scenarios.push_back(MakePlanarCircleScenario(config, obstacles));
  const Eigen::Vector3d z = Eigen::Vector3d::UnitZ();
  const Eigen::Vector3d center(0.8, 0.2, 0.0);
  const auto circle = CircleTargets(center, z, center + Eigen::Vector3d(0.25, 0, 0), config);
  const std::string circle_text = "circle r 0.25 m about (0.8, 0.2, 0) in the plane z = 0";
  const ik::IkOptions defaults;
  // Spatial 7-link arm (ball joints): a tilted circle, 0.71-1.15 m from the base.
  const Eigen::Vector3d c3(0.5, 0.3, 0.7), axis(0.3, -0.5, 1.0);
  const Eigen::Vector3d start3 = c3 + 0.3 * axis.cross(z).normalized();
  scenarios.push_back(Finish("spatial7 free",
                             "circle r 0.3 m about (0.5, 0.3, 0.7), axis (0.3, -0.5, 1)",
                             MakeArm(7, false, 1.4, 0.01), planning::Scene(),
                             CircleTargets(c3, axis, start3, config), defaults));
  // 100-link planar snake, 1.4 m (limbs 14 mm, radius 2 mm), safety margin 2 mm: the default
  // 10 mm (12.5 mm with the tracker's buffer) would span the 10 mm clearance between limbs k
  // and k + 2 of a straight snake and keep the self-clearance term always active.
  ik::IkOptions snake = defaults;
  snake.safety_margin = 0.002;
  scenarios.push_back(Finish("snake100 free", circle_text, MakeArm(100, true, 1.4, 0.002),
                             planning::Scene(), circle, snake));
  return scenarios;
}

Recorder::Recorder(const Scenario& scenario, const Eigen::Matrix3Xd& start_sites,
                   std::vector<double> start_joints)
    : scenario_(&scenario), previous_sites_(start_sites), previous_joints_(std::move(start_joints)) {
  for (const ik::Limb& limb : scenario.arm.spec().limbs) radii_.push_back(limb.radius);
  result_.scenario = scenario.name;
  result_.min_clearance = kInf;
  result_.min_self_clearance = kInf;
}

void Recorder::Add(const Eigen::Vector3d& target, const Eigen::Matrix3Xd& sites,
                   const std::vector<double>& joints, bool solver_failed) {
  const ik::Arm& arm = scenario_->arm;
  RunResult& r = result_;
  ++r.steps;
  const double error = (sites.col(arm.hand()) - target).norm();
  r.max_hand_error = std::max(r.max_hand_error, error);
  if (error <= 1e-6) ++r.reached;
  if (solver_failed) ++r.solver_failures;
  for (size_t j = 0; j < joints.size(); ++j) {
    r.max_joint_step =
        std::max(r.max_joint_step, std::abs(std::remainder(joints[j] - previous_joints_[j], 2 * kPi)));
  }
  double clearance = kInf, turn = 0.0;
  for (int k = 0; k < arm.num_limbs(); ++k) {
    const Eigen::Vector3d a = previous_sites_.col(k + 1) - previous_sites_.col(k);
    const Eigen::Vector3d b = sites.col(k + 1) - sites.col(k);
    turn = std::max(turn, std::atan2(a.cross(b).norm(), a.dot(b)));
    if (scenario_->has_obstacles()) {
      clearance = std::min(clearance,
                           scenario_->scene.MinSignedDistance(sites.col(k), sites.col(k + 1), radii_[k]));
    }
  }
  r.max_limb_turn = std::max(r.max_limb_turn, turn);
  limb_turns_.push_back(turn);
  const double self = planning::MinSelfClearance(sites, radii_);
  if (clearance < 0.0) ++r.collision_steps;
  if (self < 0.0) ++r.self_collision_steps;
  r.min_clearance = std::min(r.min_clearance, clearance);
  r.min_self_clearance = std::min(r.min_self_clearance, self);
  previous_sites_ = sites;
  previous_joints_ = joints;
}

RunResult Recorder::Finish(const std::string& solver, std::vector<double> step_seconds_best) const {
  RunResult r = result_;
  r.solver = solver;
  if (!limb_turns_.empty()) r.p99_limb_turn = Percentile99(limb_turns_);
  if (!step_seconds_best.empty()) {
    double total = 0.0;
    for (double s : step_seconds_best) total += s;
    r.mean_us = 1e6 * total / step_seconds_best.size();
    r.p99_us = 1e6 * Percentile99(std::move(step_seconds_best));
  }
  return r;
}

double Percentile99(std::vector<double> values) {
  const size_t k = std::min(values.size() - 1, size_t(0.99 * values.size()));
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return values[k];
}

}  // namespace ikd::bench
