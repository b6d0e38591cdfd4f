#include "model_service.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "conversions.h"
#include "errors.h"
#include "pose_conversions.h"
#include "robot_conversions.h"

namespace ikd::server {
namespace {

// What differs between arms and scenes; everything else is shared below.
struct ArmModel {
  using Resource = v1::Arm;
  using Spec = v1::ArmSpec;
  static constexpr char kCollection[] = "arms";
  // Canonical stored form: the spec the solver accepted; an industrial arm as given, once the
  // robot library accepts it (its URDF or DH table stays the client's).
  static absl::StatusOr<std::string> Canonical(const Spec& spec, const std::string& path,
                                               const ModelLimits& limits) {
    if (spec.has_robot()) {
      absl::StatusOr<robot::Robot> robot = RobotFromArmSpec(spec, path);
      if (!robot.ok()) return robot.status();
      Spec stored = spec;
      stored.mutable_robot()->clear_geometry_notes();
      for (const std::string& note : robot->spec().geometry_notes) {
        stored.mutable_robot()->add_geometry_notes(note);
      }
      return stored.SerializeAsString();
    }
    absl::StatusOr<ik::Arm> arm = ArmFromProto(spec, path, limits);
    if (!arm.ok()) return arm.status();
    return ToProto(arm->spec()).SerializeAsString();
  }
};

struct SceneModel {
  using Resource = v1::Scene;
  using Spec = v1::SceneSpec;
  static constexpr char kCollection[] = "scenes";
  static absl::StatusOr<std::string> Canonical(const Spec& spec, const std::string& path,
                                               const ModelLimits& limits) {
    absl::StatusOr<planning::Scene> scene = SceneFromProto(spec, path, limits);
    if (!scene.ok()) return scene.status();
    return ToProto(*scene).SerializeAsString();
  }
};

struct SkeletonModel {
  using Resource = v1::Skeleton;
  using Spec = v1::SkeletonSpec;
  static constexpr char kCollection[] = "skeletons";

  // Stored as given once the pose solver accepts it (its rest positions stay the client's).
  static absl::StatusOr<std::string> Canonical(const Spec& spec, const std::string& path,
                                               const ModelLimits& limits) {
    absl::StatusOr<pose::Skeleton> skeleton = SkeletonFromProto(spec, path, limits);
    if (!skeleton.ok()) return skeleton.status();
    return spec.SerializeAsString();
  }
};

// "ListArms", "ListScenes", "ListSkeletons": the RPC a page token belongs to.
std::string ListMethod(const std::string& collection) {
  std::string method = "List" + collection;
  method[4] = static_cast<char>(std::toupper(static_cast<unsigned char>(method[4])));
  return method;
}

google::protobuf::Timestamp ToTimestamp(int64_t unix_nanos) {
  google::protobuf::Timestamp t;
  t.set_seconds(unix_nanos / 1'000'000'000);
  t.set_nanos(static_cast<int32_t>(unix_nanos % 1'000'000'000));
  return t;
}

template <class M>
absl::Status ToResource(const StoredModel& model, typename M::Resource* out) {
  out->Clear();
  if (!out->mutable_spec()->ParseFromString(model.payload)) {
    return absl::DataLossError(
        absl::StrCat(M::kCollection, "/", model.id, ": stored model cannot be parsed"));
  }
  out->set_name(absl::StrCat(M::kCollection, "/", model.id));
  out->set_version(model.version);
  out->set_etag(model.etag);
  *out->mutable_create_time() = ToTimestamp(model.create_time_ns);
  *out->mutable_update_time() = ToTimestamp(model.update_time_ns);
  return absl::OkStatus();
}

// Store errors as the wire expects them.
absl::Status FromStore(const absl::Status& status, const std::string& collection) {
  if (status.code() != absl::StatusCode::kResourceExhausted) return status;
  return QuotaExceeded(collection, std::string(status.message()));
}

template <class M>
absl::Status Create(ModelStore& store, const ModelLimits& limits, const std::string& id,
                    const std::string& id_field, const typename M::Resource& resource,
                    const std::string& resource_field, typename M::Resource* out) {
  if (absl::Status s = ValidateId(id, id_field); !s.ok()) return s;
  if (!resource.has_spec()) return FieldViolation(resource_field + ".spec", "is required");
  absl::StatusOr<std::string> payload =
      M::Canonical(resource.spec(), resource_field + ".spec", limits);
  if (!payload.ok()) return payload.status();
  absl::StatusOr<StoredModel> created = store.Create(M::kCollection, id, *payload);
  if (!created.ok()) return FromStore(created.status(), M::kCollection);
  return ToResource<M>(*created, out);
}

template <class M>
absl::Status Get(ModelStore& store, const std::string& name, typename M::Resource* out) {
  absl::StatusOr<std::string> id = IdFromName(name, M::kCollection, "name");
  if (!id.ok()) return id.status();
  absl::StatusOr<StoredModel> model = store.Get(M::kCollection, *id);
  if (!model.ok()) return model.status();
  return ToResource<M>(*model, out);
}

// Page tokens are opaque to clients: web-safe base64 of "<collection>/<last id>".
std::string EncodePageToken(const std::string& collection, const std::string& last_id) {
  return absl::WebSafeBase64Escape(absl::StrCat(collection, "/", last_id));
}

absl::StatusOr<std::string> DecodePageToken(const std::string& token,
                                            const std::string& collection) {
  if (token.empty()) return std::string();
  std::string decoded;
  const std::string prefix = collection + "/";
  if (!absl::WebSafeBase64Unescape(token, &decoded) || !absl::StartsWith(decoded, prefix) ||
      !ValidateId(decoded.substr(prefix.size()), "page_token").ok()) {
    return FieldViolation("page_token", absl::StrCat("is not a page token of ",
                                                     ListMethod(collection),
                                                     "; pass next_page_token back unchanged"));
  }
  return decoded.substr(prefix.size());
}

// Fills `out` (one Resource per listed model) and returns the next page token.
template <class M>
absl::StatusOr<std::string> List(ModelStore& store, const ModelLimits& limits, int page_size,
                                 const std::string& page_token,
                                 google::protobuf::RepeatedPtrField<typename M::Resource>* out) {
  if (page_size < 0) return FieldViolation("page_size", "must be >= 0");
  if (page_size == 0) page_size = limits.default_page_size;
  page_size = std::min(page_size, limits.max_page_size);
  absl::StatusOr<std::string> after_id = DecodePageToken(page_token, M::kCollection);
  if (!after_id.ok()) return after_id.status();
  // One extra row tells whether another page follows.
  absl::StatusOr<std::vector<StoredModel>> models =
      store.List(M::kCollection, *after_id, page_size + 1);
  if (!models.ok()) return models.status();
  const bool more = static_cast<int>(models->size()) > page_size;
  if (more) models->pop_back();
  for (const StoredModel& model : *models) {
    if (absl::Status s = ToResource<M>(model, out->Add()); !s.ok()) return s;
  }
  return more ? EncodePageToken(M::kCollection, models->back().id) : std::string();
}

template <class M>
absl::Status Update(ModelStore& store, const ModelLimits& limits,
                    const typename M::Resource& resource, const std::string& resource_field,
                    typename M::Resource* out) {
  absl::StatusOr<std::string> id =
      IdFromName(resource.name(), M::kCollection, resource_field + ".name");
  if (!id.ok()) return id.status();
  if (!resource.has_spec()) return FieldViolation(resource_field + ".spec", "is required");
  absl::StatusOr<std::string> payload =
      M::Canonical(resource.spec(), resource_field + ".spec", limits);
  if (!payload.ok()) return payload.status();
  absl::StatusOr<StoredModel> updated =
      store.Update(M::kCollection, *id, resource.etag(),
                   [&](const StoredModel&) -> absl::StatusOr<std::string> { return *payload; });
  if (!updated.ok()) return updated.status();
  return ToResource<M>(*updated, out);
}

template <class M>
absl::Status Delete(ModelStore& store, const std::string& name, const std::string& etag) {
  absl::StatusOr<std::string> id = IdFromName(name, M::kCollection, "name");
  if (!id.ok()) return id.status();
  return store.Delete(M::kCollection, *id, etag);
}

absl::Status Edit(ModelStore& store, const ModelLimits& limits, const v1::EditSceneRequest& request,
                  v1::Scene* out) {
  absl::StatusOr<std::string> id = IdFromName(request.name(), SceneModel::kCollection, "name");
  if (!id.ok()) return id.status();
  if (absl::Status s = ValidateOperations(request, limits); !s.ok()) return s;
  // Read, edit and write in one store transaction, so concurrent edits never interleave.
  auto edit = [&](const StoredModel& current) -> absl::StatusOr<std::string> {
    v1::SceneSpec spec;
    if (!spec.ParseFromString(current.payload)) {
      return absl::DataLossError(absl::StrCat(request.name(), ": stored model cannot be parsed"));
    }
    absl::StatusOr<planning::Scene> scene = planning::Scene::Create(FromProto(spec));
    if (!scene.ok())
      return absl::DataLossError(absl::StrCat(request.name(), ": ", scene.status().message()));
    if (absl::Status s = ApplyOperations(request, request.name(), limits, *scene); !s.ok()) {
      return s;
    }
    return ToProto(*scene).SerializeAsString();
  };
  absl::StatusOr<StoredModel> updated =
      store.Update(SceneModel::kCollection, *id, request.etag(), edit);
  if (!updated.ok()) return updated.status();
  return ToResource<SceneModel>(*updated, out);
}

grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

ModelServiceImpl::ModelServiceImpl(ModelStore* store, ModelLimits limits)
    : store_(store), limits_(limits) {}

grpc::ServerUnaryReactor* ModelServiceImpl::CreateArm(grpc::CallbackServerContext* context,
                                                      const v1::CreateArmRequest* request,
                                                      v1::Arm* response) {
  return Finish(context, Create<ArmModel>(*store_, limits_, request->arm_id(), "arm_id",
                                          request->arm(), "arm", response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::GetArm(grpc::CallbackServerContext* context,
                                                   const v1::GetArmRequest* request,
                                                   v1::Arm* response) {
  return Finish(context, Get<ArmModel>(*store_, request->name(), response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::ListArms(grpc::CallbackServerContext* context,
                                                     const v1::ListArmsRequest* request,
                                                     v1::ListArmsResponse* response) {
  absl::StatusOr<std::string> next = List<ArmModel>(
      *store_, limits_, request->page_size(), request->page_token(), response->mutable_arms());
  if (next.ok()) response->set_next_page_token(*next);
  return Finish(context, next.status());
}

grpc::ServerUnaryReactor* ModelServiceImpl::UpdateArm(grpc::CallbackServerContext* context,
                                                      const v1::UpdateArmRequest* request,
                                                      v1::Arm* response) {
  return Finish(context, Update<ArmModel>(*store_, limits_, request->arm(), "arm", response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::DeleteArm(grpc::CallbackServerContext* context,
                                                      const v1::DeleteArmRequest* request,
                                                      google::protobuf::Empty*) {
  return Finish(context, Delete<ArmModel>(*store_, request->name(), request->etag()));
}

grpc::ServerUnaryReactor* ModelServiceImpl::CreateScene(grpc::CallbackServerContext* context,
                                                        const v1::CreateSceneRequest* request,
                                                        v1::Scene* response) {
  return Finish(context, Create<SceneModel>(*store_, limits_, request->scene_id(), "scene_id",
                                            request->scene(), "scene", response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::GetScene(grpc::CallbackServerContext* context,
                                                     const v1::GetSceneRequest* request,
                                                     v1::Scene* response) {
  return Finish(context, Get<SceneModel>(*store_, request->name(), response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::ListScenes(grpc::CallbackServerContext* context,
                                                       const v1::ListScenesRequest* request,
                                                       v1::ListScenesResponse* response) {
  absl::StatusOr<std::string> next = List<SceneModel>(
      *store_, limits_, request->page_size(), request->page_token(), response->mutable_scenes());
  if (next.ok()) response->set_next_page_token(*next);
  return Finish(context, next.status());
}

grpc::ServerUnaryReactor* ModelServiceImpl::UpdateScene(grpc::CallbackServerContext* context,
                                                        const v1::UpdateSceneRequest* request,
                                                        v1::Scene* response) {
  return Finish(context, Update<SceneModel>(*store_, limits_, request->scene(), "scene", response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::DeleteScene(grpc::CallbackServerContext* context,
                                                        const v1::DeleteSceneRequest* request,
                                                        google::protobuf::Empty*) {
  return Finish(context, Delete<SceneModel>(*store_, request->name(), request->etag()));
}

grpc::ServerUnaryReactor* ModelServiceImpl::EditScene(grpc::CallbackServerContext* context,
                                                      const v1::EditSceneRequest* request,
                                                      v1::Scene* response) {
  return Finish(context, Edit(*store_, limits_, *request, response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::CreateSkeleton(
    grpc::CallbackServerContext* context, const v1::CreateSkeletonRequest* request,
    v1::Skeleton* response) {
  return Finish(context, Create<SkeletonModel>(*store_, limits_, request->skeleton_id(),
                                               "skeleton_id", request->skeleton(), "skeleton",
                                               response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::GetSkeleton(grpc::CallbackServerContext* context,
                                                        const v1::GetSkeletonRequest* request,
                                                        v1::Skeleton* response) {
  return Finish(context, Get<SkeletonModel>(*store_, request->name(), response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::ListSkeletons(
    grpc::CallbackServerContext* context, const v1::ListSkeletonsRequest* request,
    v1::ListSkeletonsResponse* response) {
  absl::StatusOr<std::string> next =
      List<SkeletonModel>(*store_, limits_, request->page_size(), request->page_token(),
                          response->mutable_skeletons());
  if (next.ok()) response->set_next_page_token(*next);
  return Finish(context, next.status());
}

grpc::ServerUnaryReactor* ModelServiceImpl::UpdateSkeleton(
    grpc::CallbackServerContext* context, const v1::UpdateSkeletonRequest* request,
    v1::Skeleton* response) {
  return Finish(context,
                Update<SkeletonModel>(*store_, limits_, request->skeleton(), "skeleton", response));
}

grpc::ServerUnaryReactor* ModelServiceImpl::DeleteSkeleton(
    grpc::CallbackServerContext* context, const v1::DeleteSkeletonRequest* request,
    google::protobuf::Empty* /*response*/) {
  return Finish(context, Delete<SkeletonModel>(*store_, request->name(), request->etag()));
}

}  // namespace ikd::server
