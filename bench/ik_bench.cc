// IK tracking benchmark (issue 3): ikd's Cartesian tracker on planar and spatial arms, with and
// without obstacles, and a 100-link snake; beside it, when Orocos KDL is installed, KDL's
// ChainIkSolverPos_NR_JL and ChainIkSolverPos_LMA on the same planar 7-link chain and the same
// targets, each step warm-started from the previous solution. Ratios come from one run.
//
//   ik_bench [--quick]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "ikd/ik/tracker.h"

#ifdef IKD_HAVE_KDL
#include <kdl/chain.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainiksolverpos_lma.hpp>
#include <kdl/chainiksolverpos_nr_jl.hpp>
#include <kdl/chainiksolvervel_pinv.hpp>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using ikd::ik::Arm;
using ikd::ik::ArmSpec;
using ikd::ik::Scene;
constexpr double kPi = std::numbers::pi;

struct Result {
  std::string scenario, solver;
  int steps = 0;
  double us_per_step = 0;
  double reached_fraction = 0;  // hand error <= 1e-6 m
  double max_joint_step = 0;    // rad, largest joint change between consecutive targets
  int collisions = 0;           // steps with a limb inside an obstacle
};

Arm MakeArm(int limbs, bool planar, double total) {
  ArmSpec spec;
  spec.planar = planar;
  for (int k = 0; k < limbs; ++k) spec.limbs.push_back({total / limbs, 0.01});
  return *Arm::Create(spec);
}

// Targets along a circle (centre (0.8, 0.2), radius 0.25, in the plane z = 0), one per step.
std::vector<Eigen::Vector3d> CircleTargets(int steps, double scale) {
  std::vector<Eigen::Vector3d> targets;
  for (int k = 0; k <= steps; ++k) {
    const double a = 2 * kPi * k / steps;
    targets.push_back(scale * Eigen::Vector3d(0.8 + 0.25 * std::cos(a), 0.2 + 0.25 * std::sin(a), 0));
  }
  return targets;
}

// Spheres of radius 0.04 scattered away from the hand's path and the arm's sweep near it.
Scene Obstacles(int count) {
  std::vector<ikd::ik::Obstacle> obstacles;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> angle(0, 2 * kPi);
  for (int k = 0; static_cast<int>(obstacles.size()) < count && k < 100000; ++k) {
    const double a = angle(rng);
    const Eigen::Vector3d c(0.8 + 0.45 * std::cos(a), 0.2 + 0.45 * std::sin(a), 0.0);
    obstacles.push_back({"s" + std::to_string(obstacles.size()), ikd::ik::Sphere{c, 0.04}});
  }
  return *Scene::Create(std::move(obstacles));
}

int Collisions(const Arm& arm, const Scene& scene, const Eigen::Matrix3Xd& sites) {
  for (int k = 0; k < arm.num_limbs(); ++k) {
    if (scene.MinSignedDistance(sites.col(k), sites.col(k + 1), arm.spec().limbs[k].radius) < 0) {
      return 1;
    }
  }
  return 0;
}

Result RunIkd(const std::string& name, const Arm& arm, const Scene* scene,
              const std::vector<Eigen::Vector3d>& targets, double self_weight = 1e6) {
  ikd::ik::IkOptions options;
  options.weights.self_clearance = self_weight;
  auto tracker = *ikd::ik::ArmTracker::Create(arm, scene, options);
  (void)tracker.StepTo(targets.front());  // move onto the path first, outside the timing
  Result r{name, "ikd", static_cast<int>(targets.size()) - 1};
  std::vector<double> previous = arm.AnglesFromSites(tracker.sites());
  int reached = 0;
  double seconds = 0;
  for (size_t k = 1; k < targets.size(); ++k) {
    const auto start = Clock::now();
    auto step = *tracker.StepTo(targets[k]);
    seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (step.hand_error <= 1e-6) ++reached;
    const std::vector<double> angles = step.angles;
    for (size_t j = 0; j < angles.size(); ++j) {
      r.max_joint_step = std::max(r.max_joint_step, std::abs(std::remainder(angles[j] - previous[j], 2 * kPi)));
    }
    previous = angles;
    if (scene != nullptr) r.collisions += Collisions(arm, *scene, step.sites);
  }
  r.us_per_step = 1e6 * seconds / r.steps;
  r.reached_fraction = double(reached) / r.steps;
  return r;
}

#ifdef IKD_HAVE_KDL
// The planar arm as a KDL chain: RotZ joints, segments along x. KDL joint q_k equals ikd's
// planar angle k (first absolute, then relative).
KDL::Chain PlanarChain(const Arm& arm) {
  KDL::Chain chain;
  for (const auto& limb : arm.spec().limbs) {
    chain.addSegment(KDL::Segment(KDL::Joint(KDL::Joint::RotZ),
                                  KDL::Frame(KDL::Vector(limb.length, 0, 0))));
  }
  return chain;
}

Result RunKdl(const std::string& name, const std::string& which, const Arm& arm,
              const Scene* scene, const std::vector<Eigen::Vector3d>& targets) {
  const KDL::Chain chain = PlanarChain(arm);
  const unsigned n = chain.getNrOfJoints();
  KDL::ChainFkSolverPos_recursive fk(chain);
  KDL::ChainIkSolverVel_pinv vel(chain);
  KDL::JntArray q_min(n), q_max(n);
  for (unsigned j = 0; j < n; ++j) q_min(j) = -kPi, q_max(j) = kPi;
  KDL::ChainIkSolverPos_NR_JL nr_jl(chain, q_min, q_max, fk, vel, 100, 1e-6);
  Eigen::Matrix<double, 6, 1> weights;
  weights << 1, 1, 1, 0, 0, 0;  // position only
  KDL::ChainIkSolverPos_LMA lma(chain, weights, 1e-7, 500);
  // Start from ikd's solution on the first target (same start for everyone).
  auto tracker = *ikd::ik::ArmTracker::Create(arm, nullptr, ikd::ik::IkOptions());
  auto first = *tracker.StepTo(targets.front());
  KDL::JntArray q(n), q_out(n);
  for (unsigned j = 0; j < n; ++j) q(j) = first.angles[j];
  Result r{name, which, static_cast<int>(targets.size()) - 1};
  int reached = 0;
  double seconds = 0;
  for (size_t k = 1; k < targets.size(); ++k) {
    KDL::Frame current;
    fk.JntToCart(q, current);
    // NR_JL solves full frames: keep the current tool heading, move the position.
    const KDL::Frame goal(current.M, KDL::Vector(targets[k].x(), targets[k].y(), targets[k].z()));
    const auto start = Clock::now();
    const int rc = which == "KDL NR_JL" ? nr_jl.CartToJnt(q, goal, q_out) : lma.CartToJnt(q, goal, q_out);
    seconds += std::chrono::duration<double>(Clock::now() - start).count();
    KDL::Frame reached_frame;
    fk.JntToCart(q_out, reached_frame);
    const double error = (reached_frame.p - goal.p).Norm();
    if (rc >= 0 && error <= 1e-6) ++reached;
    const std::vector<double> angles(q_out.data.data(), q_out.data.data() + n);
    const Eigen::Matrix3Xd sites = *arm.SitesFromAngles(angles);
    for (unsigned j = 0; j < n; ++j) {
      r.max_joint_step = std::max(r.max_joint_step, std::abs(std::remainder(q_out(j) - q(j), 2 * kPi)));
    }
    if (scene != nullptr) r.collisions += Collisions(arm, *scene, sites);
    q = q_out;
  }
  r.us_per_step = 1e6 * seconds / r.steps;
  r.reached_fraction = double(reached) / r.steps;
  return r;
}
#endif

void Print(const Result& r) {
  std::printf("%-26s %-10s %7d %12.1f %9.1f%% %12.4f %10d\n", r.scenario.c_str(), r.solver.c_str(),
              r.steps, r.us_per_step, 100 * r.reached_fraction, r.max_joint_step, r.collisions);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
  const int steps = quick ? 200 : 2000;
  std::printf("%-26s %-10s %7s %12s %10s %12s %10s\n", "scenario", "solver", "steps", "us/step",
              "reached", "max dq/step", "collisions");
  std::vector<Result> results;
  const Arm planar7 = MakeArm(7, true, 1.4);
  const auto circle = CircleTargets(steps, 1.0);
  const Scene five = Obstacles(5), twenty = Obstacles(20);
  results.push_back(RunIkd("planar7 free", planar7, nullptr, circle));
  results.push_back(RunIkd("planar7 5 obstacles", planar7, &five, circle));
  results.push_back(RunIkd("planar7 20 obstacles", planar7, &twenty, circle));
#ifdef IKD_HAVE_KDL
  results.push_back(RunKdl("planar7 free", "KDL NR_JL", planar7, nullptr, circle));
  results.push_back(RunKdl("planar7 free", "KDL LMA", planar7, nullptr, circle));
  results.push_back(RunKdl("planar7 20 obstacles", "KDL LMA", planar7, &twenty, circle));
#endif
  for (const Result& r : results) Print(r);
  Print(RunIkd("spatial7 free", MakeArm(7, false, 1.4), nullptr, circle));
  // The snake's O(n^2) self-clearance term is switched off: it would dominate at 100 links.
  const Arm snake = MakeArm(100, true, 1.4);
  const Result snake_result = RunIkd("snake100 free (no self)", snake, nullptr, circle, 0.0);
  Print(snake_result);
  std::printf("\nsnake100 steps/s: %.0f\n", 1e6 / snake_result.us_per_step);
#ifdef IKD_HAVE_KDL
  std::printf("KDL LMA / ikd time per step, planar7 free:   %.2f\n",
              results[4].us_per_step / results[0].us_per_step);
  std::printf("KDL NR_JL / ikd time per step, planar7 free: %.2f\n",
              results[3].us_per_step / results[0].us_per_step);
#else
  std::printf("KDL not found at configure time: install liborocos-kdl-dev for the comparison\n");
#endif
  return 0;
}
