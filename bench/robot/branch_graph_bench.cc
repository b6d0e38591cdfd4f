// The branch graph of PlanRobotPath (solver/robot/path_branch_graph.h, issue 34): UR5 full-pose
// tool paths of 1,000 samples (10 s at 100 Hz) among obstacles, each scenario built so that the
// branch nearest the start runs into a ball late in the path while another branch passes it.
// Side by side in one run: the plain tracker from the start (the baseline, which must fail
// them), the branch graph alone, and PlanRobotPath (which tries the graph after its other
// starts). Every path is judged with this program's own checks, in the world: each sample's
// tool on its pose, the joints inside their limits and speeds, the link capsules clear of the
// balls at each sample and at four points of each motion between samples, and no link origin
// moving more than 5 cm between samples (a branch jump moves the elbow by tens of cm).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "../../solver/robot/path_branch_graph.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/robot_body.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/robot/robot_path.h"

ABSL_FLAG(int, scenarios, 20, "scenarios drawn (seeds 1..N)");
ABSL_FLAG(int, samples, 1000, "samples a path (100 Hz)");
ABSL_FLAG(bool, plan, true, "also run the whole PlanRobotPath on each scenario");

namespace ikd::bench {
namespace {

using Clock = std::chrono::steady_clock;
using robot::ChainSpec;
using Vec = Eigen::VectorXd;

constexpr double kLinkRadius = 0.05;
constexpr double kBallRadius = 0.06;

// This program's own forward kinematics: the origins of joints 1..6 and the tool frame.
struct Frames {
  std::vector<Eigen::Vector3d> origins;  // joint origins, then the tool point
  Eigen::Isometry3d tool;
};

Frames FramesAt(const ChainSpec& spec, const Vec& q) {
  Frames f;
  Eigen::Isometry3d X = spec.X_WB;
  for (size_t k = 0; k < spec.joints.size(); ++k) {
    X = X * spec.joints[k].X_PJ;
    f.origins.push_back(X.translation());
    X = X * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
  }
  f.tool = X * spec.X_FT;
  f.origins.push_back(f.tool.translation());
  return f;
}

double SegmentBallClearance(const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                            const Eigen::Vector4d& ball) {
  const Eigen::Vector3d c = ball.head<3>();
  const double t = std::clamp((c - a).dot(b - a) / std::max((b - a).squaredNorm(), 1e-300), 0.0, 1.0);
  return (a + t * (b - a) - c).norm() - ball[3] - kLinkRadius;
}

double Clearance(const ChainSpec& spec, const std::vector<Eigen::Vector4d>& balls, const Vec& q) {
  const Frames f = FramesAt(spec, q);
  double least = std::numeric_limits<double>::infinity();
  for (size_t l = 0; l + 1 < f.origins.size(); ++l) {
    for (const Eigen::Vector4d& b : balls) {
      least = std::min(least, SegmentBallClearance(f.origins[l], f.origins[l + 1], b));
    }
  }
  return least;
}

struct Scenario {
  std::vector<Vec> witness;
  std::vector<robot::ToolTarget> targets;
  std::vector<double> times;
  std::vector<Eigen::Vector4d> balls;
  Vec q0;
};

// A smooth motion (per joint c + sum of 3 sines over the path) inside +-(pi - 0.6) of its
// centre, at most half the speed limit.
std::vector<Vec> Witness(std::mt19937_64& rng, int samples) {
  std::uniform_real_distribution<double> centre(-2.5, 2.5), amplitude(0.05, 0.25), phase(0, 6.28);
  Vec c(6);
  for (int j = 0; j < 6; ++j) c[j] = centre(rng);
  std::vector<std::array<double, 6>> waves(6);
  for (auto& w : waves) {
    for (int m = 0; m < 3; ++m) w[m] = amplitude(rng), w[3 + m] = phase(rng);
  }
  const double duration = 0.01 * (samples - 1);
  std::vector<Vec> q;
  for (int k = 0; k < samples; ++k) {
    const double t = 0.01 * k;
    Vec v = c;
    for (int j = 0; j < 6; ++j) {
      for (int m = 0; m < 3; ++m) {
        v[j] += waves[j][m] * std::sin(2 * std::numbers::pi * (m + 1) * t / duration + waves[j][3 + m]);
      }
    }
    q.push_back(v);
  }
  return q;
}

// `from` carried along the targets, each sample the closed-form solution nearest the last;
// empty where it breaks off.
std::vector<Vec> Continuation(const robot::AnalyticIk& ik, const ChainSpec& spec,
                              const std::vector<Vec>& witness, const Vec& from) {
  std::vector<Vec> path{from};
  for (size_t k = 1; k < witness.size(); ++k) {
    std::optional<Vec> next;
    for (const robot::AnalyticSolution& s : ik.Solve(FramesAt(spec, witness[k]).tool, 0.0, &path.back())) {
      if ((s.q - path.back()).cwiseAbs().maxCoeff() < 0.2) next = s.q;
    }
    if (!next) return {};
    path.push_back(*next);
  }
  return path;
}

bool MotionClear(const ChainSpec& spec, const std::vector<Eigen::Vector4d>& balls,
                 const std::vector<Vec>& q, double least) {
  if (Clearance(spec, balls, q[0]) < least) return false;
  for (size_t k = 1; k < q.size(); ++k) {
    for (int i = 1; i <= 4; ++i) {
      if (Clearance(spec, balls, q[k - 1] + 0.25 * i * (q[k] - q[k - 1])) < least) return false;
    }
  }
  return true;
}

// A scenario of seed `seed`: the witness's branch passes a ball on another branch's elbow,
// placed late in the path where that branch's start is clear of it; the start beside that
// branch. None when this seed's draw allows no such ball.
std::optional<Scenario> MakeScenario(const robot::Robot& robot, const robot::AnalyticIk& ik,
                                     uint64_t seed, int samples) {
  const ChainSpec& spec = robot.spec();
  std::mt19937_64 rng(seed);
  Scenario s;
  s.witness = Witness(rng, samples);
  for (int k = 0; k < samples; ++k) {
    const Eigen::Isometry3d X = FramesAt(spec, s.witness[k]).tool;
    s.times.push_back(0.01 * k);
    s.targets.push_back(*robot::ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear())));
  }
  for (int j = 0; j < 6; ++j) {
    for (const Vec& q : s.witness) {
      if (q[j] < spec.joints[j].limits->lower || q[j] > spec.joints[j].limits->upper) return std::nullopt;
    }
  }
  const robot::RobotBody body(robot);
  std::vector<planning::Capsule> links;
  for (const robot::AnalyticSolution& other : ik.Solve(FramesAt(spec, s.witness[0]).tool)) {
    if ((other.q - s.witness[0]).cwiseAbs().maxCoeff() < 0.5) continue;
    const std::vector<Vec> path = Continuation(ik, spec, s.witness, other.q);
    if (path.empty()) continue;
    bool self_clear = true;
    for (const Vec& q : path) {
      body.Links(q, &links);
      self_clear = self_clear && body.SelfClearance(links) >= 0.02;
    }
    if (!self_clear) continue;
    for (int at = samples - 1; at >= samples / 2; at -= samples / 20) {
      s.balls = {(Eigen::Vector4d() << FramesAt(spec, path[at]).origins[2], kBallRadius).finished()};
      if (Clearance(spec, s.balls, path[0]) >= 0.05 && MotionClear(spec, s.balls, s.witness, 0.05)) {
        s.q0 = other.q + Vec::Constant(6, 0.05);
        return s;
      }
    }
  }
  return std::nullopt;
}

// This program's verdict on a path: every sample on its pose, inside the limits and speeds,
// clear of the balls at and between samples, no link origin moving more than 5 cm a sample.
bool Physical(const ChainSpec& spec, const Scenario& s, const std::vector<Vec>& q) {
  if (q.size() != s.targets.size()) return false;
  for (size_t k = 0; k < q.size(); ++k) {
    const Frames f = FramesAt(spec, q[k]);
    if ((f.tool.translation() - s.targets[k].position).norm() > 1e-9) return false;
    if (Eigen::AngleAxisd(f.tool.linear().transpose() * s.targets[k].orientation->toRotationMatrix())
            .angle() > 1e-9) {
      return false;
    }
    for (int j = 0; j < 6; ++j) {
      const robot::JointLimits& limits = *spec.joints[j].limits;
      if (q[k][j] < limits.lower || q[k][j] > limits.upper) return false;
      if (k > 0 && std::abs(q[k][j] - q[k - 1][j]) > limits.max_velocity * 0.01 * (1 + 1e-9)) return false;
    }
    if (k == 0) continue;
    const Frames before = FramesAt(spec, q[k - 1]);
    for (size_t o = 0; o < f.origins.size(); ++o) {
      if ((f.origins[o] - before.origins[o]).norm() > 0.05) return false;
    }
  }
  return MotionClear(spec, s.balls, q, 0.0);
}

double Ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

}  // namespace
}  // namespace ikd::bench

int main(int argc, char** argv) {
  using namespace ikd::bench;
  namespace robot = ikd::robot;
  absl::SetProgramUsageMessage("The branch graph of PlanRobotPath on UR5 full-pose paths among obstacles");
  absl::ParseCommandLine(argc, argv);
  const int n = absl::GetFlag(FLAGS_scenarios);
  const int samples = absl::GetFlag(FLAGS_samples);
  if (n < 1 || samples < 2) {
    std::fprintf(stderr, "--scenarios >= 1 and --samples >= 2\n");
    return 2;
  }
  ChainSpec spec = robot::presets::Ur5();
  spec.link_radii.assign(6, kLinkRadius);
  auto made = robot::Robot::Create(spec);
  if (!made.ok()) return 1;
  const robot::Robot& arm = *made;
  const robot::AnalyticIk* ik = robot::AnalyticIkOf(arm);
  if (ik == nullptr) return 1;
  int built = 0, tracker_ok = 0, graph_found = 0, graph_ok = 0, plan_ok = 0, plan_graph = 0;
  std::vector<double> graph_ms, plan_ms;
  uint64_t seed = 0;
  while (built < n && seed < static_cast<uint64_t>(50 * n)) {
    const std::optional<Scenario> s = MakeScenario(arm, *ik, ++seed, samples);
    if (!s) continue;
    ++built;
    auto scene = ikd::planning::Scene::Create({{"ball", ikd::planning::Sphere{s->balls[0].head<3>(), s->balls[0][3]}}});
    if (!scene.ok()) return 1;
    // The baseline: the tracker from q0, as a controller following the nearest branch would.
    auto tracker = robot::RobotTracker::Create(arm, robot::RobotIkOptions{}, s->q0, &*scene);
    if (!tracker.ok()) return 1;
    std::vector<Vec> tracked{tracker->Solve(s->targets[0]).q};
    for (int k = 1; k < samples; ++k) tracked.push_back(tracker->StepTo(s->targets[k], 0.01).q);
    tracker_ok += Physical(spec, *s, tracked);
    const Clock::time_point start = Clock::now();
    auto graph = robot::internal::BranchGraphRobotPath(arm, &*scene, s->targets, s->times,
                                                       robot::RobotIkOptions{}, s->q0, {});
    graph_ms.push_back(Ms(start));
    if (graph.ok() && graph->has_value()) {
      ++graph_found;
      std::vector<Vec> q;
      for (const robot::RobotIkResult& r : **graph) q.push_back(r.q);
      graph_ok += Physical(spec, *s, q);
    }
    if (!absl::GetFlag(FLAGS_plan)) continue;
    const Clock::time_point plan_start = Clock::now();
    auto plan = robot::PlanRobotPath(arm, &*scene, s->targets, s->times, robot::RobotIkOptions{}, s->q0);
    plan_ms.push_back(Ms(plan_start));
    if (plan.ok()) {
      std::vector<Vec> q;
      for (const robot::RobotIkResult& r : plan->samples) q.push_back(r.q);
      plan_ok += Physical(spec, *s, q);
      plan_graph += plan->summary.start == 9;
    }
  }
  std::printf("UR5 full-pose paths of %d samples (100 Hz) among a ball on the start branch's elbow; "
              "%d scenarios (those of seeds 1..%llu that allow one). Judged by this program's own "
              "forward kinematics and capsule distances, motion between samples included.\n\n",
              samples, built, static_cast<unsigned long long>(seed));
  std::printf("| planner | physical paths | p50 ms | max ms |\n|---|--:|--:|--:|\n");
  std::printf("| tracker from the start (baseline) | %d of %d | - | - |\n", tracker_ok, built);
  std::printf("| branch graph | %d of %d (found %d) | %.1f | %.1f |\n", graph_ok, built, graph_found,
              Percentile(graph_ms, 0.5), Percentile(graph_ms, 1.0));
  if (absl::GetFlag(FLAGS_plan)) {
    std::printf("| PlanRobotPath (graph kept on %d) | %d of %d | %.1f | %.1f |\n", plan_graph,
                plan_ok, built, Percentile(plan_ms, 0.5), Percentile(plan_ms, 1.0));
  }
  return 0;
}
