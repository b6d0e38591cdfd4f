// The industrial-arm part of the joint-path benchmark: the two solvers side by side on the
// robot scenarios (robot_scenarios.h) and on fixed tool circles and lines, every figure from the
// checker (robot_checker.h), set against the library's own summary.
//   plain:         one RobotTracker made at q0 (RobotIkOptions defaults, the scene) and
//                  RobotTracker::Solve per sample, each from the previous answer; its rate
//                  statuses and summary from SummarizeRobotPath.
//   PlanRobotPath: ikd::robot::PlanRobotPath (robot_path.h) with RobotIkOptions defaults.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "ikd/robot/robot_path.h"
#include "robot_checker.h"
#include "robot_scenarios.h"

namespace ikd::bench::paths {

inline constexpr const char* kRobotSolvers[] = {"plain", "PlanRobotPath"};

// --dump for the robots: per scenario (or fixed path) and solver every measure, and per sample
// its status and every joint value (%.17g, no timings: deterministic, so two runs or builds
// compare bit for bit).
struct RobotDump {
  std::FILE* measures = nullptr;  // <dump>.robots.csv
  std::FILE* joints = nullptr;    // <dump>.joints.csv
  static RobotDump Open(const std::string& prefix);  // empty prefix: no dump
  void Close();
};

struct RobotRun {
  RobotPathMeasures m;
  double speed_ratio = 0.0, acceleration_ratio = 0.0;  // m.rates over the witness's
  double us_per_sample = 0.0;
  // rad: the first sample's largest joint difference from q0 (witness scenarios, whose first
  // target is q0's own: a plan that starts elsewhere jumps there in no time)
  double start_jump = 0.0;
  robot::RobotPathSummary summary;  // the library's
  std::vector<robot::RobotIkResult> samples;
  std::vector<std::string> disagreements;  // checker vs the library's statuses and summary
};

// One solver (index into kRobotSolvers) on one problem; the witness ratios are 0 for a
// scenario without a witness (s.witness zero).
RobotRun RunRobotSolver(const RobotScenario& s, int solver);

void DumpRobotRun(const RobotDump& dump, const std::string& label, const RobotScenario& s,
                  const char* solver, const RobotRun& run);

// The robot kinds' tables (count scenarios each) and the checker's disagreements with the
// library.
void RunRobotKinds(const std::vector<RobotKind>& kinds, int count, uint64_t seed,
                   const RobotDump& dump);

// The fixed-path table (robot_fixed_paths.cc).
void RunFixedPaths(const std::vector<ArmId>& arms, const RobotDump& dump);

}  // namespace ikd::bench::paths
