// ModelService writes through the real handlers (fuzz_server.h): the first byte picks the RPC
// (CreateArm, UpdateArm, CreateScene, UpdateScene, EditScene, CreateSkeleton, UpdateSkeleton),
// the rest is its request: ArmSpec with limbs or an industrial robot (DH table, URDF document,
// preset), SceneSpec obstacles, scene operations, skeletons. A created chain arm or scene is
// then used in a bounded Solve, so whatever validation accepts is also exercised by the solver
// (not an industrial arm: its Solve may take 31 attempts of 4000 projections, seconds under
// the sanitizers for an unreachable target; kinematics_service_fuzzer solves those). Updates
// and edits act on a scratch model made for the input ("*/fuzz-scratch": any name in the right
// collection is pointed there, so the demo models stay as loaded), and everything an input
// creates is deleted again: inputs do not depend on each other.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "fuzz_server.h"

namespace {

using ikd::fuzz::CheckFinite;
using ikd::fuzz::FuzzServer;
using ikd::fuzz::ParseInput;
namespace v1 = ikd::v1;

constexpr char kScratchId[] = "fuzz-scratch";

v1::ModelService::Stub& Models() { return FuzzServer::Get().models(); }

// A name in `collection` ("arms/...") is pointed at the scratch model; others stay as given
// (they exercise name validation).
void PointAtScratch(const std::string& collection, std::string* name) {
  if (absl::StartsWith(*name, collection + "/")) *name = collection + "/" + kScratchId;
}

// One pose of `arm` in `scene` (either may be empty: the demo planar7 arm, free space), without
// random trials: the solver sees every model validation accepted.
void SolveWith(const std::string& arm, const std::string& scene) {
  v1::SolveRequest request;
  request.mutable_arm()->set_name(arm.empty() ? "arms/planar7" : arm);
  if (!scene.empty()) request.mutable_scene()->set_name(scene);
  request.mutable_target()->set_x(0.4);
  request.mutable_target()->set_y(0.1);
  request.mutable_target()->set_z(0.3);
  request.mutable_options()->set_no_trials(true);
  grpc::ClientContext context;
  v1::SolveResponse response;
  if (FuzzServer::Get().kinematics().Solve(&context, request, &response).ok()) {
    CheckFinite(response);
  }
}

template <typename Request>
void Delete(const std::string& name) {
  Request request;
  request.set_name(name);
  grpc::ClientContext context;
  google::protobuf::Empty empty;
  if constexpr (std::is_same_v<Request, v1::DeleteArmRequest>) {
    Models().DeleteArm(&context, request, &empty).ok();
  } else if constexpr (std::is_same_v<Request, v1::DeleteSceneRequest>) {
    Models().DeleteScene(&context, request, &empty).ok();
  } else {
    Models().DeleteSkeleton(&context, request, &empty).ok();
  }
}

void FuzzCreateArm(std::string_view bytes) {
  v1::CreateArmRequest request;
  if (!ParseInput(bytes, request)) return;
  grpc::ClientContext context;
  v1::Arm arm;
  if (!Models().CreateArm(&context, request, &arm).ok()) return;
  CheckFinite(arm);
  if (!arm.spec().has_robot()) SolveWith(arm.name(), "");
  Delete<v1::DeleteArmRequest>(arm.name());
}

void FuzzCreateScene(std::string_view bytes) {
  v1::CreateSceneRequest request;
  if (!ParseInput(bytes, request)) return;
  grpc::ClientContext context;
  v1::Scene scene;
  if (!Models().CreateScene(&context, request, &scene).ok()) return;
  CheckFinite(scene);
  SolveWith("", scene.name());
  Delete<v1::DeleteSceneRequest>(scene.name());
}

void FuzzCreateSkeleton(std::string_view bytes) {
  v1::CreateSkeletonRequest request;
  if (!ParseInput(bytes, request)) return;
  grpc::ClientContext context;
  v1::Skeleton skeleton;
  if (!Models().CreateSkeleton(&context, request, &skeleton).ok()) return;
  CheckFinite(skeleton);
  Delete<v1::DeleteSkeletonRequest>(skeleton.name());
}

// The scratch copies updates and edits act on: the first demo arm and scene, a two-bone
// skeleton.
void CreateScratchArm() {
  v1::CreateArmRequest request;
  request.set_arm_id(kScratchId);
  *request.mutable_arm()->mutable_spec() = ikd::fuzz::LoadDemoModels().arms.front().second;
  grpc::ClientContext context;
  v1::Arm arm;
  Models().CreateArm(&context, request, &arm).ok();
}

void CreateScratchScene() {
  v1::CreateSceneRequest request;
  request.set_scene_id(kScratchId);
  *request.mutable_scene()->mutable_spec() = ikd::fuzz::LoadDemoModels().scenes.back().second;
  grpc::ClientContext context;
  v1::Scene scene;
  Models().CreateScene(&context, request, &scene).ok();
}

void CreateScratchSkeleton() {
  v1::CreateSkeletonRequest request;
  request.set_skeleton_id(kScratchId);
  v1::SkeletonSpec* spec = request.mutable_skeleton()->mutable_spec();
  for (const char* site : {"a", "b", "c"}) spec->add_sites(site);
  for (int k = 0; k < 2; ++k) {
    v1::SkeletonBone* bone = spec->add_bones();
    bone->set_i(k);
    bone->set_j(k + 1);
    bone->set_length(0.3);
  }
  grpc::ClientContext context;
  v1::Skeleton skeleton;
  Models().CreateSkeleton(&context, request, &skeleton).ok();
}

void FuzzUpdateArm(std::string_view bytes) {
  v1::UpdateArmRequest request;
  if (!ParseInput(bytes, request)) return;
  PointAtScratch("arms", request.mutable_arm()->mutable_name());
  CreateScratchArm();
  grpc::ClientContext context;
  v1::Arm arm;
  if (Models().UpdateArm(&context, request, &arm).ok()) {
    CheckFinite(arm);
    if (!arm.spec().has_robot()) SolveWith(arm.name(), "");
  }
  Delete<v1::DeleteArmRequest>(std::string("arms/") + kScratchId);
}

void FuzzUpdateScene(std::string_view bytes) {
  v1::UpdateSceneRequest request;
  if (!ParseInput(bytes, request)) return;
  PointAtScratch("scenes", request.mutable_scene()->mutable_name());
  CreateScratchScene();
  grpc::ClientContext context;
  v1::Scene scene;
  if (Models().UpdateScene(&context, request, &scene).ok()) {
    CheckFinite(scene);
    SolveWith("", scene.name());
  }
  Delete<v1::DeleteSceneRequest>(std::string("scenes/") + kScratchId);
}

void FuzzEditScene(std::string_view bytes) {
  v1::EditSceneRequest request;
  if (!ParseInput(bytes, request)) return;
  PointAtScratch("scenes", request.mutable_name());
  CreateScratchScene();
  grpc::ClientContext context;
  v1::Scene scene;
  if (Models().EditScene(&context, request, &scene).ok()) {
    CheckFinite(scene);
    SolveWith("", scene.name());
  }
  Delete<v1::DeleteSceneRequest>(std::string("scenes/") + kScratchId);
}

void FuzzUpdateSkeleton(std::string_view bytes) {
  v1::UpdateSkeletonRequest request;
  if (!ParseInput(bytes, request)) return;
  PointAtScratch("skeletons", request.mutable_skeleton()->mutable_name());
  CreateScratchSkeleton();
  grpc::ClientContext context;
  v1::Skeleton skeleton;
  if (Models().UpdateSkeleton(&context, request, &skeleton).ok()) CheckFinite(skeleton);
  Delete<v1::DeleteSkeletonRequest>(std::string("skeletons/") + kScratchId);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FuzzServer::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 7) {
    case 0: FuzzCreateArm(rest); break;
    case 1: FuzzUpdateArm(rest); break;
    case 2: FuzzCreateScene(rest); break;
    case 3: FuzzUpdateScene(rest); break;
    case 4: FuzzEditScene(rest); break;
    case 5: FuzzCreateSkeleton(rest); break;
    case 6: FuzzUpdateSkeleton(rest); break;
  }
  return 0;
}
