#include "arm_engine.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "track_admission.h"

namespace ikd::server {

std::unique_ptr<ArmEngine> NewArmEngine(ResolvedArmSpec arm, ModelStore& store,
                                        const ModelLimits& model_limits,
                                        const KinematicsLimits& limits) {
  const bool industrial = arm.spec.has_robot();
  EngineInputs inputs{std::move(arm), &store, model_limits, limits};
  return industrial ? NewRobotEngine(std::move(inputs)) : NewChainEngine(std::move(inputs));
}

double MeanSolveSeconds(
    double reach, const std::function<void(double time, const Eigen::Vector3d& offset)>& step) {
  constexpr double kPeriod = 1e-3;  // s: a 1 kHz controller
  const double radius = 0.1 * reach, speed = 0.5 * reach;
  const auto offset = [&](int k) {
    const double angle = k * speed * kPeriod / radius;
    return Eigen::Vector3d(radius * (std::cos(angle) - 1.0), radius * std::sin(angle), 0.0);
  };
  step(0.0, offset(0));
  double total = 0.0;
  for (int k = 1; k <= kCalibrationSteps; ++k) {
    const double start = ThreadCpuSeconds();
    step(k * kPeriod, offset(k));
    total += ThreadCpuSeconds() - start;
  }
  return total / kCalibrationSteps;
}

bool SaysWhy(planning::StepStatus status) {
  return status != planning::StepStatus::kReached && status != planning::StepStatus::kLate;
}

std::string TargetField(int i, const std::string& field) {
  return absl::StrCat("targets[", i, "].", field);
}

}  // namespace ikd::server
