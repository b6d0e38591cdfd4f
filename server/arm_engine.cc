#include "arm_engine.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ikd::server {

std::unique_ptr<ArmEngine> NewArmEngine(ResolvedArmSpec arm, ModelStore& store,
                                        const ModelLimits& model_limits,
                                        const KinematicsLimits& limits) {
  const bool industrial = arm.spec.has_robot();
  EngineInputs inputs{std::move(arm), &store, model_limits, limits};
  return industrial ? NewRobotEngine(std::move(inputs)) : NewChainEngine(std::move(inputs));
}

std::string TargetField(int i, const std::string& field) {
  return absl::StrCat("targets[", i, "].", field);
}

}  // namespace ikd::server
