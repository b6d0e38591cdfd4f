// ikd's Cartesian tracker on a scenario: one ArmTracker::StepTo per target.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "ik_bench.h"

namespace ikd::bench {

RunResult RunIkd(const Scenario& scenario, const IkdVariant& variant, int repeats) {
  using Clock = std::chrono::steady_clock;
  const ik::Scene* scene = scenario.has_obstacles() ? &scenario.scene : nullptr;
  Recorder recorder(scenario, scenario.start_sites, scenario.arm.AnglesFromSites(scenario.start_sites));
  std::vector<double> best;
  double best_total = std::numeric_limits<double>::infinity();
  for (int repeat = 0; repeat < repeats; ++repeat) {
    auto tracker = ik::ArmTracker::Create(scenario.arm, scene, variant.options, scenario.start_sites);
    if (!tracker.ok()) {
      std::fprintf(stderr, "ik_bench: ArmTracker::Create: %s\n", std::string(tracker.status().message()).c_str());
      std::exit(2);
    }
    std::vector<double> seconds;
    seconds.reserve(scenario.targets.size());
    double total = 0.0;
    for (size_t k = 1; k < scenario.targets.size(); ++k) {
      const auto start = Clock::now();
      absl::StatusOr<ik::IkStep> step = tracker->StepTo(scenario.targets[k]);
      seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      total += seconds.back();
      if (!step.ok()) {
        std::fprintf(stderr, "ik_bench: StepTo: %s\n", std::string(step.status().message()).c_str());
        std::exit(2);
      }
      if (repeat > 0) continue;  // the tracker is deterministic: record the first run only
      // The hand error is judged on the joint angles, as a robot would execute them.
      auto fk = scenario.arm.SitesFromAngles(step->angles);
      recorder.Add(scenario.targets[k], fk.ok() ? *fk : step->sites, step->angles,
                   step->status != ik::StepStatus::kReached);
    }
    if (total < best_total) best_total = total, best = std::move(seconds);
  }
  return recorder.Finish(variant.label, std::move(best));
}

}  // namespace ikd::bench
