// The closed-form tables of robot_bench (issue 34): every branch of random reachable poses by
// robot::AnalyticIk, judged by forward kinematics (ikd's URDF-composition ToolPose, not the
// product of exponentials the closed form uses) and, for the UR5, counted against the
// benchmark's own Hawkins closed form; beside it the numeric branch search (SolveBranches with
// the numeric solver, the service's 128 attempts) on the first poses of the same draw.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/robot_branches.h"
#include "robot_bench.h"
#include "ur5_closed_form.h"

namespace ikd::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kBranchTolerance = 1e-10;
constexpr int kNumericPoses = 20;    // the numeric search takes ~30 ms a pose
constexpr int kSweepSamples = 64;    // values of a 7R arm's locked joint (issue 34's target)

double Micros(Clock::time_point since) {
  return std::chrono::duration<double, std::micro>(Clock::now() - since).count();
}

struct ClosedFormTally {
  int poses = 0, source_found = 0, branches = 0, hawkins_checked = 0, hawkins_agree = 0;
  int off_pose = 0;
  double worst_position = 0.0, worst_rotation = 0.0;
  std::vector<double> us, nearest_us, numeric_ms;
  int numeric_branches = 0;
};

void Judge(const robot::Robot& robot, const Eigen::Isometry3d& X, const Eigen::VectorXd& q,
           ClosedFormTally& t) {
  const Eigen::Isometry3d Y = robot::ToolPose(robot.spec(), q);
  const double position = (Y.translation() - X.translation()).norm();
  const double rotation = Eigen::AngleAxisd(Y.linear().transpose() * X.linear()).angle();
  t.worst_position = std::max(t.worst_position, position);
  t.worst_rotation = std::max(t.worst_rotation, rotation);
  t.off_pose += position > kBranchTolerance || rotation > kBranchTolerance;
}

// Every Hawkins solution is among the branches, and every branch beyond them lies on the pose
// by the benchmark's DH forward kinematics within 0.1 rad of one (Hawkins merges solutions
// closer than that: near a shoulder or elbow double root the closed form lists both).
bool AgreesWithHawkins(const std::vector<robot::AnalyticSolution>& all,
                       const Eigen::VectorXd& made) {
  const Eigen::Matrix4d T = Ur5Forward(made);
  const std::vector<Eigen::VectorXd> hawkins = Ur5ClosedForm(T);
  for (const Eigen::VectorXd& h : hawkins) {
    const bool listed = std::any_of(all.begin(), all.end(), [&](const robot::AnalyticSolution& s) {
      return TurnDistance(s.q, h) < 1e-6;
    });
    if (!listed) return false;
  }
  for (const robot::AnalyticSolution& s : all) {
    const bool merged = std::any_of(hawkins.begin(), hawkins.end(), [&](const Eigen::VectorXd& h) {
      return TurnDistance(s.q, h) < 0.1;
    });
    if (!merged || (Ur5Forward(s.q) - T).cwiseAbs().maxCoeff() > 1e-9) return false;
  }
  return true;
}

ClosedFormTally Run(const robot::Robot& robot, const robot::AnalyticIk& ik, int poses,
                    uint64_t seed) {
  ClosedFormTally t;
  std::mt19937_64 rng(seed);
  const Eigen::VectorXd mid = robot.MidRange();
  const bool ur5 = robot.spec().name == "ur5";
  for (int i = 0; i < poses; ++i) {
    const Eigen::VectorXd made = RandomInsideLimits(robot, rng);
    const Eigen::Isometry3d X = robot::ToolPose(robot.spec(), made);
    const double locked = ik.locked_joint() >= 0 ? made[ik.locked_joint()] : 0.0;
    const auto t0 = Clock::now();
    const std::vector<robot::AnalyticSolution> all = ik.Solve(X, locked, &mid);
    t.us.push_back(Micros(t0));
    ++t.poses;
    t.branches += static_cast<int>(all.size());
    bool found = false;
    for (const robot::AnalyticSolution& s : all) {
      Judge(robot, X, s.q, t);
      found = found || TurnDistance(s.q, made) < 1e-6;
    }
    t.source_found += found;
    if (ur5) {
      ++t.hawkins_checked;
      t.hawkins_agree += AgreesWithHawkins(all, made);
    }
    if (ik.locked_joint() >= 0 && i % 10 == 0) {
      const auto t1 = Clock::now();
      const auto nearest = ik.SolveNearest(X, mid, kSweepSamples);
      t.nearest_us.push_back(Micros(t1));
      if (nearest) Judge(robot, X, nearest->q, t);
    }
    if (ik.locked_joint() < 0 && i < kNumericPoses) {
      robot::RobotIkOptions numeric;
      numeric.solver = robot::IkSolver::kNumeric;
      numeric.position_tolerance = numeric.rotation_tolerance = 1e-9;
      const auto target =
          robot::ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear()).normalized());
      const auto t1 = Clock::now();
      auto branches = robot::SolveBranches(robot, *target, mid, numeric,
                                           {.max_solutions = 16, .attempts = 128});
      t.numeric_ms.push_back(1e-3 * Micros(t1));
      if (branches.ok()) t.numeric_branches += static_cast<int>(branches->size());
    }
  }
  return t;
}

}  // namespace

void PrintClosedFormTables(const std::vector<NamedRobot>& robots, int poses, uint64_t seed) {
  std::printf("Random configurations inside the limits (seed %llu), %d per arm; every branch of "
              "each one's tool pose by robot::AnalyticIk::Solve (7R arms: the locked joint at the "
              "configuration's own value), judged by forward kinematics at %.0e m and rad. The "
              "UR5's branches are checked against the benchmark's own Hawkins closed form: all of "
              "its solutions among them, every other within its 0.1 rad merge and on the pose by "
              "its DH forward kinematics. "
              "Beside it, the numeric search for every branch (SolveBranches, numeric solver, 128 "
              "attempts) on the first %d poses.\n\n",
              static_cast<unsigned long long>(seed), poses, kBranchTolerance, kNumericPoses);
  std::printf("| robot | family | locked joint | geometry error | poses | making configuration "
              "among the branches | branches a pose | off the pose | worst position (m) | worst "
              "rotation (rad) | Hawkins agrees | p50 µs | p99 µs | mean µs | numeric: "
              "branches a pose | numeric: mean ms |\n"
              "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  std::vector<std::pair<const char*, ClosedFormTally>> sweeps;
  for (const NamedRobot& r : robots) {
    auto ik = robot::AnalyticIk::Create(r.robot->spec());
    if (!ik.ok()) {
      std::printf("| %s | none: %s |\n", r.name, std::string(ik.status().message()).c_str());
      continue;
    }
    const ClosedFormTally t = Run(*r.robot, *ik, poses, seed);
    const Times s = Summarize(t.us), numeric = Summarize(t.numeric_ms);
    char hawkins[64] = "-", numeric_cols[64] = "- | -";
    if (t.hawkins_checked > 0) {
      std::snprintf(hawkins, sizeof hawkins, "%d of %d", t.hawkins_agree, t.hawkins_checked);
    }
    if (!t.numeric_ms.empty()) {
      std::snprintf(numeric_cols, sizeof numeric_cols, "%.2f | %.1f",
                    double(t.numeric_branches) / t.numeric_ms.size(), numeric.mean);
    }
    std::printf("| %s | %s%s | %d | %.1e | %d | %d (%.1f%%) | %.2f | %d | %.1e | %.1e | %s | %.2f "
                "| %.2f | %.2f | %s |\n",
                r.name, robot::AnalyticFamilyName(ik->family()),
                ik->reversed() ? " (from the tool back)" : "", ik->locked_joint() + 1,
                ik->geometry_error(), t.poses, t.source_found, 100.0 * t.source_found / t.poses,
                double(t.branches) / t.poses, t.off_pose, t.worst_position, t.worst_rotation,
                hawkins, s.p50, s.p99, s.mean, numeric_cols);
    if (!t.nearest_us.empty()) sweeps.emplace_back(r.name, t);
  }
  if (sweeps.empty()) return;
  std::printf("\n7R arms: the solution nearest the mid-range seed over %d values of the locked "
              "joint and the seed's own (AnalyticIk::SolveNearest), every tenth pose.\n\n"
              "| robot | poses | p50 µs | p99 µs | mean µs |\n|---|--:|--:|--:|--:|\n",
              kSweepSamples);
  for (const auto& [name, t] : sweeps) {
    const Times s = Summarize(t.nearest_us);
    std::printf("| %s | %zu | %.1f | %.1f | %.1f |\n", name, t.nearest_us.size(), s.p50, s.p99,
                s.mean);
  }
}

}  // namespace ikd::bench
