// Runner and tables of the industrial-arm scenarios (robot_paths.h).
#include "robot_paths.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "paths_util.h"

namespace ikd::bench::paths {
namespace {

constexpr double kDt = 0.01;

void Disagree(RobotRun& run, const std::string& what, double checker, double library) {
  char line[200];
  std::snprintf(line, sizeof line, "%s: checker %.6g, library %.6g", what.c_str(), checker, library);
  run.disagreements.push_back(line);
}

bool Near(double a, double b, double absolute, double relative) {
  return std::abs(a - b) <= absolute + relative * std::max(std::abs(a), std::abs(b));
}

// Where the library's statuses and summary tell another story than the checker.
void CompareWithLibrary(const RobotScenario& s, const std::vector<ToolRequest>& request,
                        RobotRun& run) {
  const RobotPathMeasures& m = run.m;
  const robot::RobotPathSummary& lib = run.summary;
  // Per sample: a REACHED sample must be on the path, within the position limits and clear.
  int off = 0, first_off = -1;
  for (size_t k = 0; k < run.samples.size(); ++k) {
    if (run.samples[k].status != planning::StepStatus::kReached) continue;
    const RobotPathMeasures one = CheckRobotPath(s.model, run.samples[k].q.transpose(), {request[k]}, kDt);
    if (one.reached == 1 && !one.collided) continue;
    if (off++ == 0) first_off = static_cast<int>(k);
  }
  if (off > 0) Disagree(run, "REACHED samples off the path, past a limit or colliding (first: sample " +
                                 std::to_string(first_off) + ")", off, 0);
  if (!Near(m.max_position_error, lib.max_position_error, 1e-9, 0)) {
    Disagree(run, "max position error", m.max_position_error, lib.max_position_error);
  }
  if (s.model.pose && !Near(m.max_rotation_error, lib.max_rotation_error, 1e-9, 0)) {
    Disagree(run, "max rotation error", m.max_rotation_error, lib.max_rotation_error);
  }
  if (const double least = std::min(m.min_clearance, m.min_motion_clearance);
      !ClearanceAgrees(least, lib.min_clearance)) {
    Disagree(run, "min clearance (motions included)", least, lib.min_clearance);
  }
  if (m.collided && lib.in_collision == 0) Disagree(run, "collided, no IN_COLLISION sample", m.min_clearance, 0);
  if (!Near(m.rates.speed, lib.max_velocity_ratio, 0, 1e-6)) {
    Disagree(run, "max velocity / limit", m.rates.speed, lib.max_velocity_ratio);
  }
  const bool accelerations = std::isfinite(s.model.joints[0].max_acceleration);
  if (accelerations && !Near(m.rates.acceleration, lib.max_acceleration_ratio, 0, 1e-6)) {
    Disagree(run, "max acceleration / limit", m.rates.acceleration, lib.max_acceleration_ratio);
  }
  if (m.velocity_violations > 0 && lib.velocity_limited == 0 && lib.reached == lib.samples) {
    Disagree(run, "velocity limit passed, all REACHED", m.velocity_violations, 0);
  }
  if (m.acceleration_violations > 0 && lib.acceleration_limited == 0 &&
      lib.reached == lib.samples) {
    Disagree(run, "acceleration limit passed, all REACHED", m.acceleration_violations, 0);
  }
}

// rad: a first sample further than this from q0 jumps (far below any servo's resolution).
constexpr double kStartSlack = 1e-6;

// Per kind and solver.
struct RobotTally {
  int scenarios = 0, usable = 0, collided = 0, margin = 0, position = 0, velocity = 0,
      acceleration = 0, any_limit = 0, solved = 0, samples = 0;
  double max_position = 0.0, max_rotation = 0.0, seconds = 0.0;
  std::vector<double> speed, accel;
  std::vector<std::pair<double, int>> worst_speed, worst_accel;  // (ratio, index)
  int jumped = 0;  // first sample off q0
  std::vector<int> collided_at, violated_at, unusable_at, jumped_at;

  void Add(const RobotRun& r, int index) {
    ++scenarios;
    usable += r.summary.IsSolutionUsable();
    if (!r.summary.IsSolutionUsable()) unusable_at.push_back(index);
    collided += r.m.collided;
    if (r.m.collided) collided_at.push_back(index);
    margin += r.m.margin_samples > 0;
    position += r.m.position_violations > 0;
    velocity += r.m.velocity_violations > 0;
    acceleration += r.m.acceleration_violations > 0;
    any_limit += r.m.any_limit_violation();
    if (r.m.any_limit_violation()) violated_at.push_back(index);
    if (r.start_jump > kStartSlack) ++jumped, jumped_at.push_back(index);
    solved += r.summary.reached;
    samples += static_cast<int>(r.samples.size());
    max_position = std::max(max_position, r.m.max_position_error);
    max_rotation = std::max(max_rotation, r.m.max_rotation_error);
    seconds += 1e-6 * r.us_per_sample * r.samples.size();
    speed.push_back(r.speed_ratio);
    accel.push_back(r.acceleration_ratio);
    worst_speed.push_back({r.speed_ratio, index});
    worst_accel.push_back({r.acceleration_ratio, index});
  }
};

std::string Indices(const std::vector<int>& at) {
  std::string s;
  for (size_t i = 0; i < at.size() && i < 8; ++i) s += (i ? " #" : "#") + std::to_string(at[i]);
  if (at.size() > 8) s += " ...";
  return s;
}

std::string Targets(const RobotTally& t) {
  std::string failed;
  char part[160];
  auto fail = [&](bool bad, const std::string& text) {
    if (bad) failed += (failed.empty() ? "" : ", ") + text;
  };
  fail(t.collided > 0, std::to_string(t.collided) + " collided (" + Indices(t.collided_at) + ")");
  fail(t.any_limit > 0, std::to_string(t.any_limit) + " with limit violations (" + Indices(t.violated_at) + ")");
  fail(t.jumped > 0, std::to_string(t.jumped) + " jumping at the start (" + Indices(t.jumped_at) + ")");
  std::snprintf(part, sizeof part, "TCP %.2g m / %.2g rad", t.max_position, t.max_rotation);
  fail(t.max_position > kRobotTolerance || t.max_rotation > kRobotTolerance, part);
  const auto worst_speed = *std::max_element(t.worst_speed.begin(), t.worst_speed.end());
  const auto worst_accel = *std::max_element(t.worst_accel.begin(), t.worst_accel.end());
  std::snprintf(part, sizeof part, "speed ratio max %.3g (#%d)", worst_speed.first, worst_speed.second);
  fail(worst_speed.first > 2.0, part);
  std::snprintf(part, sizeof part, "speed ratio median %.3g", Percentile(t.speed, 0.5));
  fail(Percentile(t.speed, 0.5) > 1.2, part);
  std::snprintf(part, sizeof part, "acceleration ratio max %.3g (#%d)", worst_accel.first, worst_accel.second);
  fail(worst_accel.first > 3.0, part);
  std::string out = failed.empty() ? "MET" : "NOT MET (" + failed + ")";
  if (t.usable < t.scenarios) out += "; not usable: " + Indices(t.unusable_at);
  return out;
}

// Per kind: what the generator made.
struct RobotKindStats {
  int scenarios = 0, draws = 0, obstacles = 0, near_plain = 0, plain_collides = 0;
  std::vector<double> speed, accel, sigma, tcp_speed;

  void Add(const RobotScenario& s) {
    ++scenarios;
    draws += s.draws;
    obstacles += static_cast<int>(s.model.obstacles.size());
    near_plain += s.obstacles_near_plain;
    plain_collides += s.plain_collides;
    speed.push_back(s.witness.speed);
    accel.push_back(s.witness.acceleration);
    sigma.push_back(s.witness_min_sigma);
    double v = 0.0;
    for (size_t k = 1; k < s.request.size(); ++k) {
      v = std::max(v, (s.request[k].position - s.request[k - 1].position).norm() / kDt);
    }
    tcp_speed.push_back(v);
  }
};

void PrintTables(const std::vector<RobotKind>& kinds, int count,
                 const std::map<std::pair<int, int>, RobotTally>& tallies,
                 const std::map<int, RobotKindStats>& stats) {
  std::printf(
      "\n## Industrial arms (UR5, Panda, iiwa14)\n\n"
      "%d scenarios per kind, 201 samples at 100 Hz. Witness: a smooth random joint motion (three "
      "harmonics per joint over 2 s) inside the position limits by 5%% of the range (at least 0.1 "
      "rad), at most half of each joint's declared velocity and acceleration limit, its Jacobian's "
      "used rows' least singular value >= 0.05, its joint origins and TCP above z = 0.02 m and its "
      "links clear of each other by the safety margin. Links: %s. "
      "Request: the witness's TCP positions (-position) or poses (-pose), from the witness's first "
      "configuration. Obstacles: 3 to 6 spheres (r 0.03-0.08 m) clear of the witness's links by "
      ">= 0.03 m, centred on the plain solve's links where it can. "
      "Percentiles: nearest rank.\n\n"
      "Columns (the checker's figures, bench/paths/robot_checker.cc, but for usable, REACHED and "
      "the time):\n\n"
      "- kind: the arm, the target (-position: TCP position only; -pose: full TCP pose) and "
      "-obstacles (spheres in the scene) or -blocking (a witness that changes its posture in its "
      "first 0.8 s, a move of 0.6-1.2 rad per joint a least-motion solve has no reason to copy; "
      "then up to 6 spheres placed one by one on the plain per-sample solve's links or its "
      "motion between samples, given the spheres so far, as large as the witness's 0.03 m gap "
      "allows, until that solve collides, and where it still does not, another witness, up to "
      "8; not the UR5's full pose, whose plain solve follows "
      "the witness's own branch), or -near-base / -folded (no obstacles; a witness whose TCP "
      "passes "
      "within 0.2 m of the base's vertical axis / two of whose links at least three joints apart "
      "come within 0.04 m of each other, as a wrist folded toward the upper arm).\n"
      "- solver: plain = RobotTracker::Solve per sample from the previous answer (its statuses "
      "and summary from SummarizeRobotPath); PlanRobotPath = robot_path.h; both with "
      "RobotIkOptions defaults.\n"
      "- usable: scenarios whose RobotPathSummary::IsSolutionUsable (every sample REACHED).\n"
      "- REACHED samples: share of all samples the library marks REACHED.\n"
      "- collided / in margin: scenarios where a link comes closer to an obstacle or to a link "
      "the checker checks it against than 0 / 0.01 m, at a sample or between two (at least 64 "
      "sub-steps of the joints' linear motion, at most 1 mrad a joint each).\n"
      "- position / velocity / acceleration violations: scenarios with a joint past a position "
      "limit (> 1e-9 rad) / a declared velocity / acceleration limit (> limit x (1 + 1e-6)), "
      "rates by finite differences between samples.\n"
      "- max TCP error: the largest distance (m) and rotation angle (rad, -pose) of the TCP from "
      "the request.\n"
      "- speed ratio: the path's max over samples and joints of |v_j| / max_velocity_j over the "
      "witness's same figure (1: as fast as the witness); acceleration ratio: the same of |a_j| / "
      "max_acceleration_j (or / max_velocity_j where none is declared: UR5, iiwa14).\n"
      "- us per sample: wall time of the solve (or plan) per sample, this machine.\n\n",
      count, LinksDescription().c_str());
  std::printf(
      "| kind | solver | scenarios | usable | REACHED samples | collided | in margin | position / "
      "velocity / acceleration violations | max TCP error (m / rad) | speed ratio median / p90 / "
      "max | acceleration ratio median / p90 / max | us per sample |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < kinds.size(); ++i) {
    for (int j = 0; j < 2; ++j) {
      const RobotTally& t = tallies.at({int(i), j});
      std::printf("| %s | %s | %d | %d | %.2f%% | %d | %d | %d / %d / %d | %.2g / %.2g | %.3g / %.3g / "
                  "%.3g | %.3g / %.3g / %.3g | %.0f |\n",
                  RobotKindName(kinds[i]).c_str(), kRobotSolvers[j], t.scenarios, t.usable,
                  100.0 * t.solved / std::max(1, t.samples), t.collided, t.margin, t.position,
                  t.velocity, t.acceleration, t.max_position, t.max_rotation,
                  Percentile(t.speed, 0.5), Percentile(t.speed, 0.9), Percentile(t.speed, 1.0),
                  Percentile(t.accel, 0.5), Percentile(t.accel, 0.9), Percentile(t.accel, 1.0),
                  t.samples > 0 ? 1e6 * t.seconds / t.samples : 0.0);
    }
  }
  std::printf("\nTargets (zero collisions, zero limit violations, TCP within 1e-5 m and 1e-5 rad, "
              "the first sample at q0 within 1e-6 rad, speed ratio max <= 2 and median <= 1.2, "
              "acceleration ratio max <= 3):\n\n");
  for (size_t i = 0; i < kinds.size(); ++i) {
    for (int j = 0; j < 2; ++j) {
      std::printf("- %s, %s: %s\n", RobotKindName(kinds[i]).c_str(), kRobotSolvers[j],
                  Targets(tallies.at({int(i), j})).c_str());
    }
  }
  std::printf("\nRobot scenarios:\n\n");
  for (size_t i = 0; i < kinds.size(); ++i) {
    const RobotKindStats& k = stats.at(int(i));
    std::printf("- %s: the witness's max joint speed median %.2f of the limits, acceleration %.2f "
                "(of the limits; per s where only velocities are declared), max TCP speed median %.2f m/s, least singular value median "
                "%.3f; %.1f witness draws per scenario",
                RobotKindName(kinds[i]).c_str(), Percentile(k.speed, 0.5), Percentile(k.accel, 0.5),
                Percentile(k.tcp_speed, 0.5), Percentile(k.sigma, 0.5), double(k.draws) / k.scenarios);
    if (kinds[i].blocking) {
      std::printf(
          "; %.1f obstacles, %.1f of them on the plain solve's motion when placed; the "
          "plain per-sample solve among them collides in %d of %d",
          double(k.obstacles) / k.scenarios, double(k.near_plain) / k.scenarios, k.plain_collides,
          k.scenarios);
    } else if (k.obstacles > 0) {
      std::printf("; %.1f obstacles, %.1f of them in the plain free-space path's way, which "
                  "collides in %d of %d",
                  double(k.obstacles) / k.scenarios, double(k.near_plain) / k.scenarios,
                  k.plain_collides, k.scenarios);
    }
    std::printf("\n");
  }
}

}  // namespace

RobotDump RobotDump::Open(const std::string& prefix) {
  RobotDump dump;
  if (prefix.empty()) return dump;
  dump.measures = std::fopen((prefix + ".robots.csv").c_str(), "w");
  dump.joints = std::fopen((prefix + ".joints.csv").c_str(), "w");
  if (!dump.measures || !dump.joints) Die("--dump: cannot write " + prefix + ".robots.csv / .joints.csv");
  std::fprintf(dump.measures,
               "kind,index,solver,fingerprint,obstacles,witness_speed,witness_acceleration,"
               "witness_min_sigma,collided,margin_samples,min_clearance,position_violations,"
               "velocity_violations,acceleration_violations,max_position_excess,max_position_error,"
               "max_rotation_error,reached,speed,acceleration,speed_ratio,acceleration_ratio,"
               "raw_speed,raw_acceleration,min_sigma,min_sigma_sample,lib_reached,lib_joint_limit_blocked,lib_not_converged,"
               "lib_in_collision,lib_velocity_limited,lib_acceleration_limited,lib_max_position_error,"
               "lib_max_rotation_error,lib_min_clearance,lib_max_velocity_ratio,"
               "lib_max_acceleration_ratio,lib_feasible_time_scaling,start_jump,motion_collisions,"
               "min_motion_clearance\n");
  std::fprintf(dump.joints, "kind,index,solver,sample,status,q...\n");
  return dump;
}

void RobotDump::Close() {
  if (measures) std::fclose(measures);
  if (joints) std::fclose(joints);
  measures = joints = nullptr;
}

RobotRun RunRobotSolver(const RobotScenario& s, int solver) {
  const robot::Robot& robot = *s.arm->robot;
  const planning::Scene* scene = s.scene.size() > 0 ? &s.scene : nullptr;
  RobotRun run;
  const auto start = std::chrono::steady_clock::now();
  if (solver == 0) {
    run.samples = PlainSolve(robot, scene, s.targets, s.q0);
    run.summary = robot::SummarizeRobotPath(robot, scene, s.times, run.samples);
  } else {
    auto result = robot::PlanRobotPath(robot, scene, s.targets, s.times, robot::RobotIkOptions(), s.q0);
    if (!result.ok()) Die("PlanRobotPath: " + std::string(result.status().message()));
    run.samples = std::move(result->samples);
    run.summary = result->summary;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (run.samples.size() != s.targets.size()) Die("a solver returned the wrong number of samples");
  run.us_per_sample = 1e6 * seconds / run.samples.size();
  run.m = CheckRobotPath(s.model, JointRows(run.samples), s.request, kDt);
  if (s.witness.speed > 0) run.speed_ratio = run.m.rates.speed / s.witness.speed;
  if (s.witness.acceleration > 0) run.acceleration_ratio = run.m.rates.acceleration / s.witness.acceleration;
  if (s.witness.speed > 0) run.start_jump = (run.samples.front().q - s.q0).cwiseAbs().maxCoeff();
  CompareWithLibrary(s, s.request, run);
  return run;
}

void DumpRobotRun(const RobotDump& dump, const std::string& label, const RobotScenario& s,
                  const char* solver, const RobotRun& r) {
  if (dump.measures) {
    const RobotPathMeasures& m = r.m;
    const robot::RobotPathSummary& l = r.summary;
    std::fprintf(dump.measures, "%s,%d,%s,%016llx,%zu,%.17g,%.17g,%.17g,", label.c_str(), s.index,
                 solver, static_cast<unsigned long long>(s.fingerprint), s.model.obstacles.size(),
                 s.witness.speed, s.witness.acceleration, s.witness_min_sigma);
    std::fprintf(dump.measures, "%d,%d,%.17g,%d,%d,%d,%.17g,%.17g,%.17g,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,",
                 m.collided, m.margin_samples, m.min_clearance, m.position_violations,
                 m.velocity_violations, m.acceleration_violations, m.max_position_excess,
                 m.max_position_error, m.max_rotation_error, m.reached, m.rates.speed,
                 m.rates.acceleration, r.speed_ratio, r.acceleration_ratio, m.raw.speed, m.raw.acceleration);
    std::fprintf(dump.measures, "%.17g,%d,", m.min_sigma, m.min_sigma_sample);
    std::fprintf(dump.measures,
                 "%d,%d,%d,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%.17g\n",
                 l.reached, l.limit_blocked, l.not_converged, l.in_collision, l.velocity_limited,
                 l.acceleration_limited, l.max_position_error, l.max_rotation_error, l.min_clearance,
                 l.max_velocity_ratio, l.max_acceleration_ratio, l.feasible_time_scaling,
                 r.start_jump, m.motion_collisions, m.min_motion_clearance);
  }
  if (dump.joints) {
    for (size_t k = 0; k < r.samples.size(); ++k) {
      std::fprintf(dump.joints, "%s,%d,%s,%zu,%s", label.c_str(), s.index, solver, k,
                   planning::StepStatusName(r.samples[k].status));
      for (Eigen::Index j = 0; j < r.samples[k].q.size(); ++j) std::fprintf(dump.joints, ",%.17g", r.samples[k].q[j]);
      std::fprintf(dump.joints, "\n");
    }
  }
}

// The witness's joint path in the joints dump (solver "witness", status "-"), to compare with.
void DumpWitness(const RobotDump& dump, const std::string& label, const RobotScenario& s) {
  if (!dump.joints) return;
  for (Eigen::Index k = 0; k < s.witness_q.rows(); ++k) {
    std::fprintf(dump.joints, "%s,%d,witness,%td,-", label.c_str(), s.index, k);
    for (Eigen::Index j = 0; j < s.witness_q.cols(); ++j) std::fprintf(dump.joints, ",%.17g", s.witness_q(k, j));
    std::fprintf(dump.joints, "\n");
  }
}

void RunRobotKinds(const std::vector<RobotKind>& kinds, int count, uint64_t seed,
                   const RobotDump& dump) {
  std::map<std::pair<int, int>, RobotTally> tallies;
  std::map<int, RobotKindStats> stats;
  std::vector<std::string> disagreements;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const std::string name = RobotKindName(kinds[i]);
    for (int n = 0; n < count; ++n) {
      std::fprintf(stderr, "\r%s %d/%d ", name.c_str(), n + 1, count);
      const RobotScenario s = MakeRobotScenario(kinds[i], n, seed);
      stats[int(i)].Add(s);
      RobotRun runs[2];
      // Interleaved, alternating which goes first: both see the same machine load.
      for (int order = 0; order < 2; ++order) {
        const int j = n % 2 == 0 ? order : 1 - order;
        runs[j] = RunRobotSolver(s, j);
      }
      DumpWitness(dump, name, s);
      for (int j = 0; j < 2; ++j) {
        tallies[{int(i), j}].Add(runs[j], n);
        DumpRobotRun(dump, name, s, kRobotSolvers[j], runs[j]);
        for (const std::string& d : runs[j].disagreements) {
          disagreements.push_back(name + " #" + std::to_string(n) + " " + kRobotSolvers[j] + ": " + d);
        }
      }
    }
    std::fprintf(stderr, "\n");
  }
  PrintTables(kinds, count, tallies, stats);
  std::printf("\nRobot checker vs the library's own statuses and summary: %zu disagreement(s)\n%s",
              disagreements.size(), disagreements.empty() ? "" : "\n");
  for (size_t i = 0; i < disagreements.size() && i < 30; ++i) std::printf("- %s\n", disagreements[i].c_str());
  if (disagreements.size() > 30) std::printf("- ... (%zu more)\n", disagreements.size() - 30);
}

}  // namespace ikd::bench::paths
