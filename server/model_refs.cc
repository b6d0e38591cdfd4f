#include "model_refs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "errors.h"

namespace ikd::server {
namespace {

// The spec stored under resource name `name` ("arms/{id}", "scenes/{id}").
template <class Spec>
absl::StatusOr<Spec> LoadSpec(ModelStore& store, const char* collection, const std::string& name,
                              const std::string& field) {
  absl::StatusOr<std::string> id = IdFromName(name, collection, field);
  if (!id.ok()) return id.status();
  absl::StatusOr<StoredModel> stored = store.Get(collection, *id);
  if (!stored.ok()) return stored.status();
  Spec spec;
  if (!spec.ParseFromString(stored->payload)) {
    return absl::DataLossError(absl::StrCat(name, ": stored model cannot be parsed"));
  }
  return spec;
}

}  // namespace

absl::StatusOr<ResolvedArmSpec> ResolveArmSpec(const v1::ArmRef& ref, const std::string& path,
                                               ModelStore& store) {
  switch (ref.arm_case()) {
    case v1::ArmRef::kSpec:
      return ResolvedArmSpec{ref.spec(), Below(path, "spec")};
    case v1::ArmRef::kName: {
      absl::StatusOr<v1::ArmSpec> spec =
          LoadSpec<v1::ArmSpec>(store, "arms", ref.name(), Below(path, "name"));
      if (!spec.ok()) return spec.status();
      return ResolvedArmSpec{*std::move(spec), Below(path, "name")};
    }
    default:
      return FieldViolation(path, "required: a name (\"arms/{id}\") or an inline spec");
  }
}

absl::StatusOr<ik::Arm> ArmFromRef(const v1::ArmRef& ref, const std::string& path,
                                   ModelStore& store, const ModelLimits& limits) {
  absl::StatusOr<ResolvedArmSpec> resolved = ResolveArmSpec(ref, path, store);
  if (!resolved.ok()) return resolved.status();
  return ArmFromProto(resolved->spec, resolved->path, limits);
}

absl::StatusOr<std::unique_ptr<planning::Scene>> SceneFromRef(const v1::SceneRef& ref,
                                                              const std::string& path,
                                                              ModelStore& store,
                                                              const ModelLimits& limits) {
  absl::StatusOr<planning::Scene> scene = absl::UnknownError("unset");
  switch (ref.scene_case()) {
    case v1::SceneRef::kSpec:
      scene = SceneFromProto(ref.spec(), Below(path, "spec"), limits);
      break;
    case v1::SceneRef::kName: {
      absl::StatusOr<v1::SceneSpec> spec =
          LoadSpec<v1::SceneSpec>(store, "scenes", ref.name(), Below(path, "name"));
      if (!spec.ok()) return spec.status();
      scene = SceneFromProto(*spec, Below(path, "name"), limits);
      break;
    }
    default:
      return std::unique_ptr<planning::Scene>();  // free space
  }
  if (!scene.ok()) return scene.status();
  return std::make_unique<planning::Scene>(*std::move(scene));
}

}  // namespace ikd::server
