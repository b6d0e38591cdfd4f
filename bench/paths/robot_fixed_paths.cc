// The fixed-path table of the industrial-arm benchmark (robot_paths.h): for UR5, Panda and
// iiwa14, position-only and full-pose targets, horizontal circles of radius 5, 10 and 15 cm
// centred at the ready pose's TCP (starting at the point farthest from the base's z axis,
// counter-clockwise seen from above) and straight lines of 5, 10 and 15 cm centred at it (from
// -L/2 to +L/2: down for Panda and iiwa14, horizontally towards the base for the UR5, as
// bench/robot/robot_bench.cc), at tool speeds of 0.1, 0.2 and 0.3 m/s (constant, from the
// first sample), sampled at 100 Hz; the tool orientation held at the ready pose's. The first
// sample is off the ready TCP by the radius (L/2): PlanRobotPath solves it as a single pose from
// the ready pose, and the rates start at sample 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include "paths_util.h"
#include "robot_paths.h"

namespace ikd::bench::paths {
namespace {

constexpr double kDt = 0.01;
constexpr double kSizes[] = {0.05, 0.10, 0.15};  // m: circle radius, line length
constexpr double kSpeeds[] = {0.1, 0.2, 0.3};    // m/s

struct FixedPath {
  bool circle = true;
  double size = 0.0, speed = 0.0;
};

std::string Label(const RobotKind& kind, const FixedPath& p) {
  char text[96];
  std::snprintf(text, sizeof text, "fixed:%s:%s-%.0fmm:%.1fm/s", RobotKindName(kind).c_str(),
                p.circle ? "circle-r" : "line", 1000 * p.size, p.speed);
  return text;
}

// The problem in the scenario's form (no witness, no obstacles), starting at the ready pose.
RobotScenario MakeFixed(const RobotKind& kind, const FixedPath& p, int index) {
  RobotScenario s = EmptyRobotScenario(kind, index);
  const RobotArm& arm = *s.arm;
  s.q0 = arm.ready;
  const RigidTransform X0 = ForwardKinematics(s.model, s.q0).tool;
  const Eigen::Vector3d inward = Eigen::Vector3d(-X0.p.x(), -X0.p.y(), 0.0).normalized();
  const Eigen::Vector3d u = -inward, v = Eigen::Vector3d::UnitZ().cross(u);  // u: away from the base
  const Eigen::Vector3d line = arm.line_down ? Eigen::Vector3d(-Eigen::Vector3d::UnitZ()) : inward;
  const double length = p.circle ? 2 * std::numbers::pi * p.size : p.size;
  const int n = static_cast<int>(std::ceil(length / p.speed / kDt - 1e-9));
  for (int k = 0; k <= n; ++k) {
    const double f = double(k) / n, angle = 2 * std::numbers::pi * f;
    const Eigen::Vector3d position =
        p.circle ? Eigen::Vector3d(X0.p + p.size * (std::cos(angle) * u + std::sin(angle) * v))
                 : Eigen::Vector3d(X0.p + p.size * (f - 0.5) * line);
    s.times.push_back(k * kDt);
    s.request.push_back({position, X0.R});
    s.targets.push_back(kind.pose ? Unwrap(robot::ToolTarget::Pose(position, Eigen::Quaterniond(X0.R).normalized()), "ToolTarget::Pose")
                                  : Unwrap(robot::ToolTarget::Position(position), "ToolTarget::Position"));
  }
  return s;
}

// Per robot and target mode.
struct FixedTally {
  int paths = 0, samples = 0;
  int full[2] = {0, 0}, solved[2] = {0, 0};  // per solver: paths all REACHED; REACHED samples
  int confirmed_paths = 0, confirmed = 0;    // PlanRobotPath, by the checker
  int violations = 0;                        // PlanRobotPath: samples past a limit (checker)
  double max_position = 0.0, max_rotation = 0.0, max_velocity = 0.0, max_acceleration = 0.0;
  double max_scaling = 0.0, seconds[2] = {0.0, 0.0};
  std::vector<std::string> disagreements, short_of_full;
};

}  // namespace

void RunFixedPaths(const std::vector<ArmId>& arms, const RobotDump& dump) {
  std::printf(
      "\n## Industrial arms: fixed tool circles and lines\n\n"
      "From each arm's ready pose (bench/robot/robot_bench.cc): horizontal circles of radius 5, "
      "10 and 15 cm centred at the ready TCP (once round, from the point farthest from the base's "
      "z axis, counter-clockwise seen from above) and straight lines of 5, 10 and 15 cm centred at "
      "it (from -L/2 to +L/2; down, the UR5 horizontally towards its base), at constant tool "
      "speeds of 0.1, 0.2 and 0.3 m/s from the first sample, 100 Hz, the tool orientation held "
      "(pose) or free (position). The first sample is the radius (L/2) away from the ready TCP: "
      "the arm is taken to be there at t = 0 (a single-pose solve from the ready pose), and the "
      "rates, finite differences between samples, start at sample 1 (the start from rest is not "
      "counted). Per speed: %% of samples REACHED by PlanRobotPath / by plain, then "
      "PlanRobotPath's max velocity ratio (largest |dq_j/dt| / max_velocity_j) and "
      "feasible_time_scaling (the least stretch of the timing within every declared rate limit; "
      "<= 1: feasible as timed). Ready TCP positions (m):");
  for (ArmId arm : arms) {
    const Eigen::Vector3d p = ForwardKinematics(GetArm(arm).model, GetArm(arm).ready).tool.p;
    std::printf("%s %s (%.3f, %.3f, %.3f), %.3f from the base's z axis", arm == arms[0] ? "" : ";",
                GetArm(arm).name, p.x(), p.y(), p.z(), std::hypot(p.x(), p.y()));
  }
  std::printf(".\n\n| robot | target | path | size | 0.1 m/s | 0.2 m/s | 0.3 m/s |\n"
              "|---|---|---|---:|---|---|---|\n");
  std::vector<std::pair<RobotKind, FixedTally>> tallies;
  int index = 0;
  for (ArmId arm : arms) {
    for (bool pose : {false, true}) {
      const RobotKind kind{arm, pose, false};
      FixedTally t;
      for (bool circle : {true, false}) {
        for (double size : kSizes) {
          std::printf("| %s | %s | %s | %.0f cm |", GetArm(arm).name, pose ? "pose" : "position",
                      circle ? "circle (radius)" : "line", 100 * size);
          for (double speed : kSpeeds) {
            const FixedPath p{circle, size, speed};
            const std::string label = Label(kind, p);
            std::fprintf(stderr, "\r%s          ", label.c_str());
            const RobotScenario s = MakeFixed(kind, p, index++);
            RobotRun runs[2];
            for (int order = 0; order < 2; ++order) {
              const int j = index % 2 == 0 ? order : 1 - order;
              runs[j] = RunRobotSolver(s, j);
            }
            const int n = static_cast<int>(s.targets.size());
            ++t.paths;
            t.samples += n;
            for (int j = 0; j < 2; ++j) {
              DumpRobotRun(dump, label, s, kRobotSolvers[j], runs[j]);
              t.full[j] += runs[j].summary.reached == n;
              t.solved[j] += runs[j].summary.reached;
              t.seconds[j] += 1e-6 * runs[j].us_per_sample * n;
              for (const std::string& d : runs[j].disagreements) {
                t.disagreements.push_back(label + " " + kRobotSolvers[j] + ": " + d);
              }
            }
            const RobotRun& r = runs[1];
            if (r.summary.reached < n) t.short_of_full.push_back(label.substr(6));
            t.confirmed_paths += r.m.confirmed == n;
            t.confirmed += r.m.confirmed;
            t.violations += r.m.position_violations + r.m.velocity_violations + r.m.acceleration_violations;
            t.max_position = std::max(t.max_position, r.m.max_position_error);
            t.max_rotation = std::max(t.max_rotation, r.m.max_rotation_error);
            t.max_velocity = std::max(t.max_velocity, r.summary.max_velocity_ratio);
            t.max_acceleration = std::max(t.max_acceleration, r.summary.max_acceleration_ratio);
            t.max_scaling = std::max(t.max_scaling, r.summary.feasible_time_scaling);
            std::printf(" %.4g / %.4g (%.2f, %.2f) |", 100.0 * r.summary.reached / n,
                        100.0 * runs[0].summary.reached / n, r.summary.max_velocity_ratio,
                        r.summary.feasible_time_scaling);
          }
          std::printf("\n");
          std::fflush(stdout);
        }
      }
      tallies.push_back({kind, std::move(t)});
    }
  }
  std::fprintf(stderr, "\n");
  std::printf(
      "\nPer robot and target (target: every path 100%% REACHED, confirmed by the checker). "
      "Columns:\n\n"
      "- paths / samples: fixed paths (2 shapes x 3 sizes x 3 speeds) and their samples.\n"
      "- PlanRobotPath: paths all REACHED, REACHED samples: by the library's own statuses.\n"
      "- checker: paths confirmed / samples: paths all of whose samples, and the share of "
      "samples, the checker (robot_checker.cc) finds within 1e-5 m (1e-5 rad) of the request, "
      "the position limits and the declared rate limits.\n"
      "- limit violations: PlanRobotPath's samples past a position or declared rate limit "
      "(checker).\n"
      "- max TCP error: the checker's largest TCP distance (m) and rotation (rad, pose) from "
      "the request.\n"
      "- max velocity / acceleration ratio, max feasible_time_scaling: the largest of "
      "PlanRobotPath's summaries (acceleration: Panda only, the others declare none).\n"
      "- us per sample: wall time per sample, this machine; plain: the same figures for "
      "RobotTracker::Solve per sample.\n\n"
      "| robot | target | paths | samples | PlanRobotPath: paths all REACHED | REACHED samples | "
      "checker: paths confirmed / samples | limit violations | max TCP error (m / rad) | max "
      "velocity / acceleration ratio | max feasible_time_scaling | us per sample | plain: paths "
      "all REACHED | REACHED samples | us per sample |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<std::string> disagreements, missed;
  for (const auto& [kind, t] : tallies) {
    std::printf("| %s | %s | %d | %d | %d | %.2f%% | %d / %.2f%% | %d | %.2g / %.2g | %.3g / %.3g | %.3g | "
                "%.0f | %d | %.2f%% | %.0f |\n",
                GetArm(kind.arm).name, kind.pose ? "pose" : "position", t.paths, t.samples, t.full[1],
                100.0 * t.solved[1] / t.samples, t.confirmed_paths, 100.0 * t.confirmed / t.samples,
                t.violations, t.max_position, t.max_rotation, t.max_velocity, t.max_acceleration,
                t.max_scaling, 1e6 * t.seconds[1] / t.samples, t.full[0], 100.0 * t.solved[0] / t.samples,
                1e6 * t.seconds[0] / t.samples);
    disagreements.insert(disagreements.end(), t.disagreements.begin(), t.disagreements.end());
    missed.insert(missed.end(), t.short_of_full.begin(), t.short_of_full.end());
  }
  std::printf("\nPaths PlanRobotPath does not solve in full: %zu", missed.size());
  for (size_t i = 0; i < missed.size() && i < 20; ++i) std::printf("%s%s", i ? ", " : " (", missed[i].c_str());
  std::printf("%s\n", missed.empty() ? "" : missed.size() > 20 ? ", ...)" : ")");
  std::printf("\nFixed paths, checker vs the library: %zu disagreement(s)\n%s", disagreements.size(),
              disagreements.empty() ? "" : "\n");
  for (size_t i = 0; i < disagreements.size() && i < 20; ++i) std::printf("- %s\n", disagreements[i].c_str());
  if (disagreements.size() > 20) std::printf("- ... (%zu more)\n", disagreements.size() - 20);
}

}  // namespace ikd::bench::paths
