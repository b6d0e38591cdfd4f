// ikd's Cartesian tracker on a scenario: one ArmTracker::StepTo per target.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "ik_bench.h"

namespace ikd::bench {

RunResult RunIkd(const Scenario& scenario, const IkdVariant& variant) {
  using Clock = std::chrono::steady_clock;
  const planning::Scene* scene = scenario.has_obstacles() ? &scenario.scene : nullptr;
  Recorder recorder(scenario, scenario.start_sites, scenario.arm.AnglesFromSites(scenario.start_sites));
  auto tracker = ik::ArmTracker::Create(scenario.arm, scene, variant.options, scenario.start_sites);
  if (!tracker.ok()) {
    std::fprintf(stderr, "ik_bench: ArmTracker::Create: %s\n", std::string(tracker.status().message()).c_str());
    std::exit(2);
  }
  std::vector<double> seconds;
  seconds.reserve(scenario.targets.size());
  for (size_t k = 1; k < scenario.targets.size(); ++k) {
    const auto start = Clock::now();
    absl::StatusOr<ik::IkResult> step = tracker->StepTo(scenario.targets[k]);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    if (!step.ok()) {
      std::fprintf(stderr, "ik_bench: StepTo: %s\n", std::string(step.status().message()).c_str());
      std::exit(2);
    }
    // The hand error is judged on the joint angles, as a robot would execute them.
    auto fk = scenario.arm.SitesFromAngles(step->angles);
    recorder.Add(scenario.targets[k], fk.ok() ? *fk : step->sites, step->angles,
                 step->status != planning::StepStatus::kReached);
  }
  return recorder.Finish(variant.label, std::move(seconds));
}

}  // namespace ikd::bench
