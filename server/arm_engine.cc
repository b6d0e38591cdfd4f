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
    const std::function<void(double time, const Eigen::Vector3d& offset)>& step) {
  constexpr double kPeriod = 1e-3;  // s: a 1 kHz controller
  constexpr double kRadius = 0.01;  // m
  constexpr double kSpeed = 0.2;    // m/s
  const auto offset = [&](int k) {
    const double angle = k * kSpeed * kPeriod / kRadius;
    return Eigen::Vector3d(kRadius * (std::cos(angle) - 1.0), kRadius * std::sin(angle), 0.0);
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

std::string TargetField(int i, const std::string& field) {
  return absl::StrCat("targets[", i, "].", field);
}

}  // namespace ikd::server
