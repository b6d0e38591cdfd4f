// Witness-based joint-path benchmark: PlanPath on random chain arms whose hand path comes from a
// known smooth, clear, within-limits joint motion (the witness), so that a feasible answer
// exists and every collision or limit violation is the solver's. Two solvers differ by one
// switch, interleaved scenario by scenario: `tracker` (IkOptions defaults, optimize_path off)
// and `driver` (IkOptions defaults). An independent checker (checker.h) measures every path.
// Then the industrial arms (robot_paths.h): UR5, Panda and iiwa14 scenarios of the same kind,
// plain per-sample solves against PlanRobotPath, and fixed tool circles and lines.
//
//   paths_bench [--seed S] [--scenarios N] [--only KIND] [--norobots] [--nochains] [--nounlimited]
//   [--nodeclared]
//   [--dump FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "checker.h"
#include "cost_case.h"
#include "ikd/ik/path.h"
#include "paths_util.h"
#include "robot_paths.h"
#include "scenarios.h"
#include "trace.h"
#include "track_case.h"
#include "track_witness_case.h"

ABSL_FLAG(uint64_t, seed, 1, "seed of the scenarios (the solvers keep IkOptions' seed 1)");
ABSL_FLAG(int, scenarios, 50, "scenarios per kind");
ABSL_FLAG(std::string, only, "",
          "one kind only: planar-free, planar-obstacles, spatial-free, spatial-obstacles, a "
          "robot kind (ur5|panda|iiwa14-position|pose[-obstacles]) or fixed-paths");
ABSL_FLAG(bool, chains, true, "run the chain-arm kinds");
ABSL_FLAG(bool, robots, true, "run the industrial-arm kinds and the fixed-path table");
ABSL_FLAG(bool, declared, true,
          "with the chain kinds: run them with the declared rate limits (--nodeclared with "
          "--unlimited: only without)");
ABSL_FLAG(bool, unlimited, true,
          "with the chain kinds: run them again with no rate limit declared, judged on how fast "
          "each limb turns in the world against the witness");
ABSL_FLAG(bool, fixed_paths, true, "with --robots: the fixed tool circles and lines table");
ABSL_FLAG(bool, bodies, true,
          "industrial arms carry the presets' collision models (presets::*WithBody) and are "
          "checked against themselves, by the library and by the checker; --nobodies: 5 cm "
          "capsules on the joint origins, as before the models");
ABSL_FLAG(bool, self_collision, false,
          "with --nobodies: the library checks those capsules against each other "
          "(robot::ChainSpec::check_self_collision; the checker does not count self-contacts)");
ABSL_FLAG(std::string, trace, "",
          "KIND:INDEX: instead of the tables, per sample of that scenario and each solver the "
          "fastest and most accelerated angle, the least clearance, (spatial) bend and the "
          "fastest limb turn (rad/s); with --nodeclared, the scenario without rate limits");
ABSL_FLAG(bool, cost, false,
          "instead of the scenarios, time the issue's cost case (a 200-sample path of a 7-link "
          "chain among 20 obstacles, 5 plans)");
ABSL_FLAG(bool, track, false,
          "instead of the scenarios, measure live Track within servo limits (a hand circle at "
          "0.2-0.8 m/s, the rate-limited tracker of ik/rate_limit.h)");
ABSL_FLAG(double, track_jerk_factor, 0,
          "with --track_witness: every chain joint also declares a jerk limit of this many times "
          "the witness's top jerk (0: none)");
ABSL_FLAG(bool, track_witness, false,
          "instead of the scenarios' plans, stream each chain-arm scenario's hand path to live "
          "Track (the rate-limited tracker) with limits at 1.5x / 3x the witness's top joint "
          "speed / acceleration (--nodeclared: none), then the industrial kinds with the presets' "
          "own limits; --only picks one kind, --nochains / --norobots a family");
ABSL_FLAG(std::string, dump, "",
          "write one CSV line per scenario and solver with every measure (%.17g; no timings, so "
          "two runs give the same bytes); robots: FILE.robots.csv (the same) and "
          "FILE.joints.csv (per sample its status and joint values, the witness's as solver "
          "witness); with --track: FILE, per answer its status, joint values and clearance");

namespace ikd::bench::paths {
namespace {

struct Solver {
  const char* name;
  ik::IkOptions options;
};

std::vector<Solver> Solvers() {
  ik::IkOptions tracker;
  tracker.optimize_path = false;
  return {{"tracker", tracker}, {"driver", ik::IkOptions()}};
}

// One solver on one scenario: the checker's measures and the library's own summary.
struct Run {
  PathMeasures m;
  double speed_ratio = 0.0, acceleration_ratio = 0.0;  // over the witness's maxima
  double bend_speed_ratio = 0.0, bend_acceleration_ratio = 0.0;  // spatial: bends only
  double limb_turn_ratio = 0.0;  // the fastest limb turn over the witness's (MaxLimbTurnSpeed)
  double us_per_sample = 0.0;
  double angle_difference = 0.0;  // the library's IkResult::angles vs the checker's, rad
  // rad: the first sample's joint angles vs the initial sites' (the checker's own angles; the
  // hand starts on the path, so a plan that starts elsewhere jumps there in no time)
  double start_jump = 0.0;
  std::vector<Eigen::Matrix3Xd> sites;
  ik::PathSummary summary;
  std::vector<std::string> disagreements;  // checker vs the library's own summary
};

void Disagree(Run& run, const char* what, double checker, double library) {
  char line[160];
  std::snprintf(line, sizeof line, "%s: checker %.6g, library %.6g", what, checker, library);
  run.disagreements.push_back(line);
}

// Largest difference (modulo 2 pi) between the library's joint angles and the checker's, leaving
// out azimuths behind a bend under 1e-6 rad (ill-defined there).
double MaxAngleDifference(const Scenario& s, const std::vector<ik::IkResult>& steps) {
  double worst = 0.0;
  for (const ik::IkResult& step : steps) {
    const std::vector<double> angles = JointAngles(s.model, step.sites);
    if (angles.size() != step.angles.size()) return std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < angles.size(); ++j) {
      if (!s.model.planar && j % 2 == 1 && angles[j - 1] < 1e-6) continue;
      worst = std::max(worst, std::abs(std::remainder(angles[j] - step.angles[j], 2 * std::numbers::pi)));
    }
  }
  return worst;
}

// Where the library's summary tells another story than the checker.
void CompareWithLibrary(const Scenario& s, Run& run) {
  if (run.angle_difference > 1e-9)
    Disagree(run, "joint angles (IkResult::angles)", run.angle_difference, 0);
  const PathMeasures& m = run.m;
  const ik::PathSummary& lib = run.summary;
  if (std::abs(m.max_hand_error - lib.max_hand_error) > 1e-9) {
    Disagree(run, "max hand error", m.max_hand_error, lib.max_hand_error);
  }
  if ((m.max_limb_error > 1e-9) != (lib.max_constraint_residual > 1e-9)) {
    Disagree(run, "limb error vs residual (1e-9)", m.max_limb_error, lib.max_constraint_residual);
  }
  const double clearance =
      std::min({m.min_obstacle_clearance, m.min_self_clearance, m.min_motion_clearance});
  if (!ClearanceAgrees(clearance, lib.min_clearance)) {
    Disagree(run, "min clearance (motions included)", clearance, lib.min_clearance);
  }
  if (m.collided && lib.in_collision == 0) Disagree(run, "collided, no IN_COLLISION sample", clearance, 0);
  if (m.position_violations > 0 && lib.limit_blocked == 0) {
    Disagree(run, "position limit passed, no LIMIT_BLOCKED sample", m.max_position_excess, 0);
  }
  const double v = m.max_speed / s.model.max_velocity, a = m.max_acceleration / s.model.max_acceleration;
  if (std::abs(v - lib.max_velocity_ratio) > 1e-6 * std::max(1.0, v)) {
    Disagree(run, "max velocity / limit", v, lib.max_velocity_ratio);
  }
  if (std::abs(a - lib.max_acceleration_ratio) > 1e-6 * std::max(1.0, a)) {
    Disagree(run, "max acceleration / limit", a, lib.max_acceleration_ratio);
  }
}

// Largest joint angle difference (turns the short way) of `first` from the initial sites.
double StartJump(const Scenario& s, const Eigen::Matrix3Xd& first) {
  const std::vector<double> from = JointAngles(s.model, s.initial_sites);
  const std::vector<double> to = JointAngles(s.model, first);
  double largest = 0.0;
  for (size_t j = 0; j < from.size(); ++j) {
    largest = std::max(largest, std::abs(std::remainder(to[j] - from[j], 2.0 * std::numbers::pi)));
  }
  return largest;
}

Run RunSolver(const Scenario& s, const Solver& solver) {
  const planning::Scene* scene = s.scene.size() > 0 ? &s.scene : nullptr;
  const auto start = std::chrono::steady_clock::now();
  auto result = ik::PlanPath(s.arm, scene, s.hand_path, s.times, solver.options, s.initial_sites);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) Die(std::string(solver.name) + ": PlanPath: " + std::string(result.status().message()));
  std::vector<Eigen::Matrix3Xd> sites;
  for (const ik::IkResult& step : result->steps) sites.push_back(step.sites);
  if (sites.size() != s.hand.size()) Die("PlanPath returned the wrong number of steps");
  Run run;
  run.m = CheckPath(s.model, sites, s.hand, kSamplePeriod);
  run.speed_ratio = run.m.max_speed / s.witness.speed;
  run.acceleration_ratio = run.m.max_acceleration / s.witness.acceleration;
  run.bend_speed_ratio = run.m.max_bend_speed / s.witness.speed;
  run.bend_acceleration_ratio = run.m.max_bend_acceleration / s.witness.acceleration;
  run.limb_turn_ratio = run.m.max_limb_turn_speed / s.witness_limb_turn_speed;
  run.us_per_sample = 1e6 * seconds / sites.size();
  run.sites = std::move(sites);
  run.summary = result->summary;
  run.angle_difference = MaxAngleDifference(s, result->steps);
  run.start_jump = StartJump(s, run.sites.front());
  CompareWithLibrary(s, run);
  return run;
}

// Per kind and solver.
struct Tally {
  int scenarios = 0, collided = 0, margin = 0, position = 0, velocity = 0, acceleration = 0;
  int between = 0;    // scenarios with a motion touching between two clear samples
  int any_limit = 0;  // scenarios with a violation of any kind
  int jumped = 0;     // scenarios whose first sample is off the initial configuration
  int usable = 0;     // the library's IsSolutionUsable
  double max_hand = 0.0, max_limb = 0.0, seconds = 0.0;
  int samples = 0;
  std::vector<double> speed, accel, bend_speed, bend_accel, min_bend, limb_turn;

  void Add(const Run& r) {
    ++scenarios;
    collided += r.m.collided;
    between += r.m.motion_collisions > 0;
    margin += r.m.margin_samples > 0;
    position += r.m.position_violations > 0;
    velocity += r.m.velocity_violations > 0;
    acceleration += r.m.acceleration_violations > 0;
    any_limit += r.m.any_limit_violation();
    jumped += r.start_jump > kPositionSlack;
    usable += r.summary.IsSolutionUsable();
    max_hand = std::max(max_hand, r.m.max_hand_error);
    max_limb = std::max(max_limb, r.m.max_limb_error);
    seconds += 1e-6 * r.us_per_sample * r.sites.size();
    samples += static_cast<int>(r.sites.size());
    speed.push_back(r.speed_ratio);
    accel.push_back(r.acceleration_ratio);
    bend_speed.push_back(r.bend_speed_ratio);
    bend_accel.push_back(r.bend_acceleration_ratio);
    min_bend.push_back(r.m.min_bend);
    limb_turn.push_back(r.limb_turn_ratio);
  }
};

// The targets a run missed, one phrase each: "MET", or "NOT MET (...)".
class Verdict {
 public:
  void Fail(bool bad, const char* format, double value) {
    if (!bad) return;
    char part[96];
    std::snprintf(part, sizeof part, format, value);
    failed_ += failed_.empty() ? part : std::string(", ") + part;
  }
  // Collisions, a jump at the start, hand and limb errors: every table's targets.
  void FailCommon(const Tally& t) {
    Fail(t.collided > 0, "%.0f collided", t.collided);
    Fail(t.jumped > 0, "%.0f jumping at the start", t.jumped);
    Fail(t.max_hand > 1e-6, "hand %.2g m", t.max_hand);
    Fail(t.max_limb > 1e-9, "limbs %.2g", t.max_limb);
  }
  std::string Say() const { return failed_.empty() ? "MET" : "NOT MET (" + failed_ + ")"; }

 private:
  std::string failed_;
};

std::string Targets(const Tally& t) {
  Verdict v;
  v.FailCommon(t);
  v.Fail(t.any_limit > 0, "%.0f with limit violations", t.any_limit);
  const double speed_max = Percentile(t.speed, 1.0), speed_median = Percentile(t.speed, 0.5);
  v.Fail(speed_max > 2.0, "speed ratio max %.3g", speed_max);
  v.Fail(speed_median > 1.2, "speed ratio median %.3g", speed_median);
  v.Fail(Percentile(t.accel, 1.0) > 3.0, "acceleration ratio max %.3g", Percentile(t.accel, 1.0));
  return v.Say();
}

void PrintRow(const char* kind, const char* solver, const Tally& t) {
  std::printf("| %s | %s | %d | %d (%d) | %d | %d / %d / %d | %.2g | %.2g | %.3g / %.3g / %.3g | "
              "%.3g / %.3g / %.3g | %.0f | %d |\n",
              kind, solver, t.scenarios, t.collided, t.between, t.margin, t.position, t.velocity,
              t.acceleration, t.max_hand, t.max_limb, Percentile(t.speed, 0.5),
              Percentile(t.speed, 0.9), Percentile(t.speed, 1.0), Percentile(t.accel, 0.5),
              Percentile(t.accel, 0.9), Percentile(t.accel, 1.0),
              t.samples > 0 ? 1e6 * t.seconds / t.samples : 0.0, t.usable);
}

// Per kind: what the generator made.
struct KindStats {
  int scenarios = 0, draws = 0, obstacles = 0, near_plain = 0, plain_collides = 0;
  std::vector<double> joint_speed, hand_speed, reach;  // the witness's maxima; arm length

  void Add(const Scenario& s) {
    ++scenarios;
    draws += s.draws;
    obstacles += s.scene.size();
    near_plain += s.obstacles_near_plain;
    plain_collides += s.plain_collides;
    joint_speed.push_back(s.witness.speed);
    double speed = 0.0;
    for (size_t k = 1; k < s.hand.size(); ++k) {
      speed = std::max(speed, (s.hand[k] - s.hand[k - 1]).norm() / kSamplePeriod);
    }
    hand_speed.push_back(speed);
    double length = 0.0;
    for (double l : s.model.lengths) length += l;
    reach.push_back(length);
  }
};

void PrintDumpHeader(std::FILE* f) {
  std::fprintf(f,
               "kind,index,solver,fingerprint,limbs,obstacles,witness_speed,witness_acceleration,"
               "collided,margin_samples,min_obstacle_clearance,min_self_clearance,"
               "position_violations,velocity_violations,acceleration_violations,"
               "max_position_excess,max_hand_error,max_limb_error,max_off_plane,max_speed,"
               "max_acceleration,speed_ratio,acceleration_ratio,max_bend_speed,"
               "max_bend_acceleration,min_bend,lib_reached,lib_clamped,"
               "lib_in_collision,lib_limit_blocked,lib_velocity_limited,lib_acceleration_limited,"
               "lib_max_hand_error,lib_max_constraint_residual,lib_min_clearance,"
               "lib_max_velocity_ratio,lib_max_acceleration_ratio,lib_start,"
               "lib_optimizer_iterations,lib_angle_difference,start_jump,motion_collisions,"
               "min_motion_clearance,limb_turn_ratio\n");
}

void DumpLine(std::FILE* f, const Scenario& s, const char* solver, const Run& r) {
  const PathMeasures& m = r.m;
  const ik::PathSummary& l = r.summary;
  std::fprintf(f, "%s,%d,%s,%016llx,%d,%d,%.17g,%.17g,", KindName(s.kind), s.index, solver,
               static_cast<unsigned long long>(s.fingerprint), s.arm.num_limbs(), s.scene.size(),
               s.witness.speed, s.witness.acceleration);
  std::fprintf(f, "%d,%d,%.17g,%.17g,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,",
               m.collided, m.margin_samples, m.min_obstacle_clearance, m.min_self_clearance,
               m.position_violations, m.velocity_violations, m.acceleration_violations,
               m.max_position_excess, m.max_hand_error, m.max_limb_error, m.max_off_plane,
               m.max_speed, m.max_acceleration, r.speed_ratio, r.acceleration_ratio);
  std::fprintf(f, "%.17g,%.17g,%.17g,", m.max_bend_speed, m.max_bend_acceleration, m.min_bend);
  std::fprintf(f, "%d,%d,%d,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%d,%.17g,%.17g,%d,%.17g,",
               l.reached, l.clamped, l.in_collision, l.limit_blocked, l.velocity_limited,
               l.acceleration_limited, l.max_hand_error, l.max_constraint_residual, l.min_clearance,
               l.max_velocity_ratio, l.max_acceleration_ratio, l.start, l.optimizer_iterations,
               r.angle_difference, r.start_jump, m.motion_collisions, m.min_motion_clearance);
  std::fprintf(f, "%.17g\n", r.limb_turn_ratio);
}

struct Report {
  std::map<std::pair<int, int>, Tally> tallies;  // (kind, solver)
  std::map<int, KindStats> kinds;
  std::vector<std::string> disagreements;
};

// `unlimited`: every scenario WithoutRateLimits, its solvers dumped as "<name>-nolimits".
void RunKind(Kind kind, int count, uint64_t seed, const std::vector<Solver>& solvers,
             bool unlimited, std::FILE* dump, Report& report) {
  for (int i = 0; i < count; ++i) {
    std::fprintf(stderr, "\r%s%s %d/%d ", KindName(kind), unlimited ? " (no limits)" : "", i + 1,
                 count);
    const Scenario s =
        unlimited ? WithoutRateLimits(MakeScenario(kind, i, seed)) : MakeScenario(kind, i, seed);
    report.kinds[int(kind)].Add(s);
    std::vector<Run> runs(solvers.size());
    // Interleaved, alternating which goes first: both see the same machine load.
    for (size_t n = 0; n < solvers.size(); ++n) {
      const size_t j = i % 2 == 0 ? n : solvers.size() - 1 - n;
      runs[j] = RunSolver(s, solvers[j]);
    }
    for (size_t j = 0; j < solvers.size(); ++j) {
      report.tallies[{int(kind), int(j)}].Add(runs[j]);
      const std::string name = std::string(solvers[j].name) + (unlimited ? "-nolimits" : "");
      if (dump) DumpLine(dump, s, name.c_str(), runs[j]);
      for (const std::string& d : runs[j].disagreements) {
        report.disagreements.push_back(std::string(KindName(kind)) + " #" + std::to_string(i) +
                                       " " + name + ": " + d);
      }
    }
  }
  std::fprintf(stderr, "\n");
}

// Spatial arms: how much of the rate ratios the bends alone explain (the rest is azimuths,
// which spin fast near a straight joint).
void PrintBendsOnly(const std::vector<Kind>& kinds, const std::vector<Solver>& solvers,
                    const Report& report) {
  bool header = false;
  for (Kind kind : kinds) {
    if (kind != Kind::kSpatialFree && kind != Kind::kSpatialObstacles) continue;
    if (!header) {
      std::printf(
          "\nSpatial arms, bends only (azimuths left out; same denominators):\n\n"
          "| kind | solver | speed ratio median / p90 / max | acceleration ratio median / "
          "p90 / max | least bend (rad) median / p10 / min | limb turn ratio median / p90 "
          "/ max |\n|---|---|---:|---:|---:|---:|\n");
      header = true;
    }
    for (size_t j = 0; j < solvers.size(); ++j) {
      const Tally& t = report.tallies.at({int(kind), int(j)});
      std::printf(
          "| %s | %s | %.3g / %.3g / %.3g | %.3g / %.3g / %.3g | %.3g / %.3g / %.3g | "
          "%.3g / %.3g / %.3g |\n",
          KindName(kind), solvers[j].name, Percentile(t.bend_speed, 0.5),
          Percentile(t.bend_speed, 0.9), Percentile(t.bend_speed, 1.0),
          Percentile(t.bend_accel, 0.5), Percentile(t.bend_accel, 0.9),
          Percentile(t.bend_accel, 1.0), Percentile(t.min_bend, 0.5), Percentile(t.min_bend, 0.1),
          Percentile(t.min_bend, 0.0), Percentile(t.limb_turn, 0.5), Percentile(t.limb_turn, 0.9),
          Percentile(t.limb_turn, 1.0));
    }
  }
}

void PrintReport(const std::vector<Kind>& kinds, const std::vector<Solver>& solvers,
                 const Report& report) {
  std::printf(
      "| kind | solver | scenarios | collided (between samples) | in margin | position / velocity / acceleration "
      "violations | max hand error (m) | max limb error | speed ratio median / p90 / max | "
      "acceleration ratio median / p90 / max | us per sample | library: usable |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (Kind kind : kinds) {
    for (size_t j = 0; j < solvers.size(); ++j) {
      PrintRow(KindName(kind), solvers[j].name, report.tallies.at({int(kind), int(j)}));
    }
  }
  std::printf("\nTargets (zero collisions, zero limit violations, hand <= 1e-6 m, limbs <= 1e-9, "
              "the first sample at the initial configuration within 1e-6 rad, speed ratio max <= 2 and "
              "median <= 1.2, acceleration ratio max <= 3):\n\n");
  for (Kind kind : kinds) {
    for (size_t j = 0; j < solvers.size(); ++j) {
      std::printf("- %s, %s: %s\n", KindName(kind), solvers[j].name,
                  Targets(report.tallies.at({int(kind), int(j)})).c_str());
    }
  }
  PrintBendsOnly(kinds, solvers, report);
  std::printf("\nScenarios:\n\n");
  for (Kind kind : kinds) {
    const KindStats& k = report.kinds.at(int(kind));
    std::printf("- %s: arm length median %.2f m; the witness's max joint speed median %.2f rad/s, "
                "max hand speed median %.2f m/s; %.2f witness draws per scenario",
                KindName(kind), Percentile(k.reach, 0.5), Percentile(k.joint_speed, 0.5),
                Percentile(k.hand_speed, 0.5), double(k.draws) / k.scenarios);
    if (k.obstacles > 0) {
      std::printf("; %.1f obstacles, %.1f of them on the plain projection's path; the plain "
                  "projection collides in %d of %d",
                  double(k.obstacles) / k.scenarios, double(k.near_plain) / k.scenarios,
                  k.plain_collides, k.scenarios);
    }
    std::printf("\n");
  }
  std::printf("\nChecker vs the library's own summary: %zu disagreement(s)\n",
              report.disagreements.size());
  for (size_t i = 0; i < report.disagreements.size() && i < 30; ++i) {
    std::printf("- %s\n", report.disagreements[i].c_str());
  }
  if (report.disagreements.size() > 30) std::printf("- ... (all of them: --dump)\n");
}

// Without declared limits: judged in the world, on how fast each limb turns.
std::string UnlimitedTargets(const Tally& t) {
  Verdict v;
  v.FailCommon(t);
  const double turn_max = Percentile(t.limb_turn, 1.0), turn_median = Percentile(t.limb_turn, 0.5);
  v.Fail(turn_max > 2.0, "limb turn ratio max %.3g", turn_max);
  v.Fail(turn_median > 1.2, "limb turn ratio median %.3g", turn_median);
  return v.Say();
}

void PrintUnlimitedReport(const std::vector<Kind>& kinds, const std::vector<Solver>& solvers,
                          const Report& report) {
  std::printf(
      "\n### Without declared limits\n\n"
      "The same scenarios with no rate limit declared (issue 33 item 4: a path still moves no "
      "faster than its hand path needs). Limb turn ratio as above; joint speed ratio: the "
      "largest joint speed over the witness's, in the arm's own coordinates (spatial azimuths "
      "spin where a limb passes straight, so it bounds little).\n\n"
      "| kind | solver | scenarios | collided (between samples) | in margin | max hand error (m) | "
      "max limb error | limb turn ratio median / p90 / max | joint speed ratio median / p90 / "
      "max | us per sample | library: usable |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
      "---:|\n");
  for (Kind kind : kinds) {
    for (size_t j = 0; j < solvers.size(); ++j) {
      const Tally& t = report.tallies.at({int(kind), int(j)});
      std::printf(
          "| %s | %s | %d | %d (%d) | %d | %.2g | %.2g | %.3g / %.3g / %.3g | "
          "%.3g / %.3g / %.3g | %.0f | %d |\n",
          KindName(kind), solvers[j].name, t.scenarios, t.collided, t.between, t.margin, t.max_hand,
          t.max_limb, Percentile(t.limb_turn, 0.5), Percentile(t.limb_turn, 0.9),
          Percentile(t.limb_turn, 1.0), Percentile(t.speed, 0.5), Percentile(t.speed, 0.9),
          Percentile(t.speed, 1.0), t.samples > 0 ? 1e6 * t.seconds / t.samples : 0.0, t.usable);
    }
  }
  std::printf(
      "\nTargets (zero collisions at or between samples, hand <= 1e-6 m, limbs <= 1e-9, "
      "the first sample at the initial configuration within 1e-6 rad, limb turn ratio max "
      "<= 2 and median <= 1.2):\n\n");
  for (Kind kind : kinds) {
    for (size_t j = 0; j < solvers.size(); ++j) {
      std::printf("- %s, %s: %s\n", KindName(kind), solvers[j].name,
                  UnlimitedTargets(report.tallies.at({int(kind), int(j)})).c_str());
    }
  }
  std::printf("\nChecker vs the library's own summary: %zu disagreement(s)\n",
              report.disagreements.size());
  for (size_t i = 0; i < report.disagreements.size() && i < 30; ++i) {
    std::printf("- %s\n", report.disagreements[i].c_str());
  }
}

// --trace (trace.h): the witness, then each solver's path.
void Trace(const Scenario& s, const std::vector<Solver>& solvers) {
  TraceWitness(s);
  for (const Solver& solver : solvers) TraceSites(s, solver.name, RunSolver(s, solver).sites);
}

void PrintLegend(uint64_t seed, int count) {
  std::printf(
      "## Chain arms (PlanPath)\n\n"
      "Witness-based joint paths: seed %llu, %d scenarios per kind, 201 samples at 100 Hz. "
      "Collided / in margin / violations: scenarios with any (clearance < 0, < 0.01 m; "
      "position > 1e-6 rad, rate > limit x (1 + 1e-6), limits = 1.5 x the witness's maxima). "
      "Ratios: the path's max joint speed (acceleration) over the witness's, over all joints; "
      "spatial arms: bends and azimuths (the checker's own parallel-transported frame). "
      "Limb turn ratio: the fastest turn of any limb in the world (the angle between its "
      "directions at two samples over the period) over the witness's. "
      "Percentiles: nearest rank. Library: usable = PathSummary::IsSolutionUsable.\n\n",
      static_cast<unsigned long long>(seed), count);
}

}  // namespace
}  // namespace ikd::bench::paths

int main(int argc, char** argv) {
  using namespace ikd::bench::paths;
  absl::SetProgramUsageMessage("witness-based joint-path benchmark of ikd::ik::PlanPath");
  absl::ParseCommandLine(argc, argv);
  SetBodies(absl::GetFlag(FLAGS_bodies), absl::GetFlag(FLAGS_self_collision));  // Track's arms too
  if (absl::GetFlag(FLAGS_cost)) {
    RunCostCase(5);
    return 0;
  }
  if (absl::GetFlag(FLAGS_track)) {
    std::FILE* dump = nullptr;
    if (const std::string path = absl::GetFlag(FLAGS_dump); !path.empty()) {
      dump = std::fopen(path.c_str(), "w");
      if (!dump) Die("--dump: cannot write " + path);
      // Chains: chain,scene,max_velocity,max_acceleration,speed,...; robots: robot,arm,target,speed,...
      std::fprintf(dump, "kind,case...,sample,status,joint values...,min_clearance\n");
    }
    RunTrackCase(dump);
    RunRobotTrackCase(dump);
    if (dump) std::fclose(dump);
    return 0;
  }
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  const int count = absl::GetFlag(FLAGS_scenarios);
  if (count < 1) Die("--scenarios must be >= 1");
  std::vector<Kind> kinds;
  if (absl::GetFlag(FLAGS_chains)) kinds.assign(std::begin(kKinds), std::end(kKinds));
  std::vector<RobotKind> robot_kinds;
  if (absl::GetFlag(FLAGS_robots)) robot_kinds = RobotKinds();
  bool fixed_paths = absl::GetFlag(FLAGS_robots) && absl::GetFlag(FLAGS_fixed_paths);
  if (const std::string only = absl::GetFlag(FLAGS_only); !only.empty()) {
    const auto kind = ParseKind(only);
    const auto robot_kind = ParseRobotKind(only);
    if (!kind && !robot_kind && only != "fixed-paths") Die("--only: unknown kind " + only);
    kinds = kind ? std::vector<Kind>{*kind} : std::vector<Kind>{};
    robot_kinds = robot_kind ? std::vector<RobotKind>{*robot_kind} : std::vector<RobotKind>{};
    fixed_paths = only == "fixed-paths";
  }
  const std::string dump_path = absl::GetFlag(FLAGS_dump);
  std::FILE* dump = nullptr;
  if (!dump_path.empty() && !kinds.empty()) {
    dump = std::fopen(dump_path.c_str(), "w");
    if (!dump) Die("--dump: cannot write " + dump_path);
    if (!absl::GetFlag(FLAGS_track_witness)) PrintDumpHeader(dump);
  }
  if (absl::GetFlag(FLAGS_track_witness)) {
    if (kinds.empty() && robot_kinds.empty()) Die("--track_witness: no kind selected");
    if (!kinds.empty()) {
      RunTrackWitnessCase(kinds, count, seed, absl::GetFlag(FLAGS_declared),
                          absl::GetFlag(FLAGS_track_jerk_factor), dump);
    }
    if (!robot_kinds.empty()) RunRobotTrackWitnessCase(robot_kinds, count, seed);
    if (dump) std::fclose(dump);
    return 0;
  }
  const std::vector<Solver> solvers = Solvers();
  if (const std::string trace = absl::GetFlag(FLAGS_trace); !trace.empty()) {
    const size_t colon = trace.find(':');
    const auto kind = ParseKind(trace.substr(0, colon));
    if (colon == std::string::npos || !kind) Die("--trace: want KIND:INDEX, got " + trace);
    Scenario s = MakeScenario(*kind, std::atoi(trace.c_str() + colon + 1), seed);
    Trace(absl::GetFlag(FLAGS_declared) ? s : WithoutRateLimits(std::move(s)), solvers);
    return 0;
  }
  if (!kinds.empty()) {
    Report report, unlimited;
    const bool run_declared = absl::GetFlag(FLAGS_declared);
    const bool run_unlimited = absl::GetFlag(FLAGS_unlimited);
    if (run_declared) {
      for (Kind kind : kinds) RunKind(kind, count, seed, solvers, false, dump, report);
    }
    if (run_unlimited) {
      for (Kind kind : kinds) RunKind(kind, count, seed, solvers, true, dump, unlimited);
    }
    if (dump) std::fclose(dump);
    PrintLegend(seed, count);
    if (run_declared) PrintReport(kinds, solvers, report);
    if (run_unlimited) PrintUnlimitedReport(kinds, solvers, unlimited);
  }
  RobotDump robot_dump = RobotDump::Open(robot_kinds.empty() && !fixed_paths ? "" : dump_path);
  if (!robot_kinds.empty()) RunRobotKinds(robot_kinds, count, seed, robot_dump);
  if (fixed_paths) RunFixedPaths({std::begin(kArms), std::end(kArms)}, robot_dump);
  robot_dump.Close();
  return 0;
}
