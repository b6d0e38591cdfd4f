#include "cost_case.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "paths_util.h"
#include "ikd/ik/path.h"

namespace ikd::bench::paths {
namespace {

constexpr double kPi = std::numbers::pi;

// The quick-start arm: 7 limbs of 0.2 m in the plane z = 0 (radius 0.02 m).
ik::Arm SevenLinkArm() {
  ik::ArmSpec spec;
  for (int k = 0; k < 7; ++k) spec.limbs.push_back({0.2, 0.02});
  return Unwrap(ik::Arm::Create(spec), "Arm::Create");
}

// 20 posts (capsules across the arm's plane, radius 0.03 m) on the far side of the hand circle
// (centre (0.8, 0), radius 0.3 m), between -110 and 110 degrees from +x, 0.08-0.14 m outside the
// circle: where the arm's elbows swing out as the hand goes round, never across the way from the
// base, so a collision-free path exists.
planning::Scene TwentyPosts() {
  std::vector<planning::Obstacle> posts;
  for (int k = 0; k < 20; ++k) {
    const double angle = (-110.0 + 220.0 * k / 19) * kPi / 180.0;
    const double radius = 0.3 + 0.03 + (k % 2 == 0 ? 0.08 : 0.14);
    const Eigen::Vector3d c(0.8 + radius * std::cos(angle), radius * std::sin(angle), 0.0);
    posts.push_back(
        {"post-" + std::to_string(k),
         planning::Capsule{c - Eigen::Vector3d(0, 0, 0.5), c + Eigen::Vector3d(0, 0, 0.5), 0.03}});
  }
  return Unwrap(planning::Scene::Create(std::move(posts)), "Scene::Create");
}

}  // namespace

void RunCostCase(int repeats) {
  const ik::Arm arm = SevenLinkArm();
  const planning::Scene scene = TwentyPosts();
  // A full hand circle of radius 0.3 m about (0.8, 0) in 2 s, 200 intervals.
  const ik::Trajectory path = UnwrapIn(
      "paths_bench", ik::Trajectory::Arc({0.8, 0, 0}, {0, 0, 1}, {1.1, 0, 0}, 2 * kPi, 2.0), "Arc");
  const std::vector<double> times = Unwrap(path.SampleTimes(0.01), "SampleTimes");
  std::vector<double> milliseconds;
  ik::PathSummary summary;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto plan = Unwrap(ik::PlanPath(arm, &scene, path, times, ik::IkOptions{}), "PlanPath");
    milliseconds.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    summary = plan.summary;
  }
  std::sort(milliseconds.begin(), milliseconds.end());
  std::printf("cost case: 7-link planar chain, 20 obstacles, %zu samples: median %.1f ms, best %.1f ms "
              "of %d plans (target 50 ms); driver start %d, %d optimizer iterations; %s\n",
              times.size(), milliseconds[milliseconds.size() / 2], milliseconds.front(), repeats,
              summary.start, summary.optimizer_iterations, summary.BriefReport().c_str());
}

}  // namespace ikd::bench::paths
