// Models by reference in KinematicsService requests: an ArmRef or SceneRef is an inline spec
// or the name of a stored model ("arms/{id}", "scenes/{id}"), read from the ModelStore and
// converted by the wire layer (wire/ik_conversions.h). NOT_FOUND for an unknown name.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ik_conversions.h"
#include "ikd/ik/arm.h"
#include "ikd/planning/scene.h"
#include "ikd/v1/kinematics_service.pb.h"
#include "model_store.h"
#include "validation.h"

namespace ikd::server {

// The wire spec of `ref` (inline or stored) and the request path its errors are named at
// ("arm.spec" or "arm.name"); NOT_FOUND for an unknown name, an unset ref is INVALID_ARGUMENT.
absl::StatusOr<ResolvedArmSpec> ResolveArmSpec(const v1::ArmRef& ref, const std::string& path,
                                               ModelStore& store);

// The arm of `ref` (inline spec or a stored "arms/{id}"); NOT_FOUND for an unknown name, an
// unset ref is INVALID_ARGUMENT naming `path`.
absl::StatusOr<ik::Arm> ArmFromRef(const v1::ArmRef& ref, const std::string& path,
                                   ModelStore& store, const ModelLimits& limits);

// The scene of `ref`; null for an unset ref (free space). NOT_FOUND for an unknown name.
absl::StatusOr<std::unique_ptr<planning::Scene>> SceneFromRef(const v1::SceneRef& ref,
                                                              const std::string& path,
                                                              ModelStore& store,
                                                              const ModelLimits& limits);

}  // namespace ikd::server
