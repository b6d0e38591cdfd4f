// Shared pieces of the IK tracking benchmark (issue 3): scenarios (arm, scene, hand path), the
// per-run record every solver fills in, and the two runners (ikd's tracker, Orocos KDL).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "ikd/ik/arm.h"
#include "ikd/ik/tracker.h"
#include "ikd/planning/scene.h"

namespace ikd::bench {

// One tracking problem. Every solver starts from `start_sites` (ikd's collision-free solution
// for targets[0], computed outside the timing) and is then timed on targets[1..], one call per
// target, warm-started from its own previous solution.
struct Scenario {
  std::string name;
  std::string path_description;
  ik::Arm arm;
  planning::Scene scene;  // empty for free space
  std::vector<Eigen::Vector3d> targets;
  Eigen::Matrix3Xd start_sites;
  ik::IkOptions options;  // ikd's options for this scenario (margin, seed, weights)
  double min_path_clearance = 0.0;  // surface distance from the hand path to the obstacles
  bool has_obstacles() const { return scene.size() > 0; }
};

struct BenchConfig {
  int samples_per_loop = 2000;  // targets on each closed hand path
  double path_fraction = 1.0;   // part of each loop that is tracked (--quick: 0.1)
  int repeats = 5;              // timing: rounds of interleaved runs, each solver keeps its best
  // KDL stopping tolerances on the hand position error (m), one KDL run each: 1e-6 is the
  // loosest that meets the success criterion, 1e-9 approaches ikd's precision.
  std::vector<double> kdl_eps = {1e-6, 1e-9};
  bool kdl = true;
  bool ikd_variants = true;  // false: ikd's own options only, no diagnostic variants (profiling)
  double ikd_bending = -1.0;  // >= 0: overrides ikd's weights.bending (diagnostics)
  uint64_t layout_seed = 20261122;  // random obstacle layouts of the planar scenarios
  uint64_t ikd_seed = 0;  // > 0: ikd's IkOptions::seed for the tracking runs (default 1)
  // Random layouts of the 20-obstacle scenario (layout seeds 1..N) x ikd seeds 1..5, one
  // untimed run each, counted by collisions (0: none).
  int layout_sweep = 30;
};

// All scenarios of issue 3's benchmark list, in print order.
std::vector<std::unique_ptr<Scenario>> MakeScenarios(const BenchConfig& config);
// The planar 7-link arm's circle among `obstacles` random obstacles (0: free) of
// config.layout_seed's layout: the first three of MakeScenarios.
std::unique_ptr<Scenario> MakePlanarCircleScenario(const BenchConfig& config, int obstacles);

// What one solver did on one scenario.
struct RunResult {
  std::string scenario, solver;
  int steps = 0;
  double mean_us = 0.0;   // mean wall time per step, best repeat
  double p99_us = 0.0;    // 99th percentile of the per-step times of the best repeat
  int reached = 0;        // steps whose forward-kinematics hand error is <= 1e-6 m
  double max_hand_error = 0.0;
  int solver_failures = 0;  // ikd: status != REACHED; KDL: negative return code
  double max_joint_step = 0.0;  // rad, in the solver's own joint coordinates
  double max_limb_turn = 0.0;   // rad, largest turn of one limb's direction between steps
  double p99_limb_turn = 0.0;   // rad, 99th percentile over the steps of the step's largest turn
  int collision_steps = 0;      // steps with a limb inside an obstacle (ikd's exact distances)
  int self_collision_steps = 0; // steps with two non-adjacent limbs intersecting
  double min_clearance = 0.0;   // over the run, obstacles only (+inf: no obstacles)
  double min_self_clearance = 0.0;
  double steps_per_second() const { return 1e6 / mean_us; }
  double reached_fraction() const { return steps > 0 ? double(reached) / steps : 0.0; }
};

// Accumulates the quality figures of one run, step by step, outside the timed region.
class Recorder {
 public:
  Recorder(const Scenario& scenario, const Eigen::Matrix3Xd& start_sites,
           std::vector<double> start_joints);
  // `sites` from the solver's own forward kinematics of `joints`.
  void Add(const Eigen::Vector3d& target, const Eigen::Matrix3Xd& sites,
           const std::vector<double>& joints, bool solver_failed);
  RunResult Finish(const std::string& solver, std::vector<double> step_seconds_best) const;

 private:
  const Scenario* scenario_;
  std::vector<double> radii_;
  Eigen::Matrix3Xd previous_sites_;
  std::vector<double> previous_joints_;
  std::vector<double> limb_turns_;  // per step, the largest limb turn
  RunResult result_;
};

// The 99th percentile (nearest rank below) of non-empty `values`.
double Percentile99(std::vector<double> values);

struct IkdVariant {
  std::string label;
  ik::IkOptions options;
};
RunResult RunIkd(const Scenario& scenario, const IkdVariant& variant);  // one timed run

#ifdef IKD_HAVE_KDL
enum class KdlSolver { kLma, kNrJl };
RunResult RunKdl(const Scenario& scenario, KdlSolver solver, double eps);  // one timed run
std::string KdlLabel(KdlSolver solver, double eps);
const char* KdlVersion();
#endif

}  // namespace ikd::bench
