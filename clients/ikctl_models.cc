// ikctl's model commands: arms, scenes and skeletons (create, get, list, update, delete) on
// ModelService, arms import-urdf and scenes edit.
#include <google/protobuf/util/time_util.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client_util.h"
#include "ikctl_common.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "table_printer.h"

ABSL_FLAG(std::string, base_link, "", "arms import-urdf: the chain's base link");
ABSL_FLAG(std::string, tip_link, "", "arms import-urdf: the chain's tip link (the tool flange)");
ABSL_FLAG(std::string, tool, "", "arms import-urdf: TCP offset x,y,z in the tip link (m)");
ABSL_FLAG(std::string, mesh_dir, "",
          "arms import-urdf: send every .stl file of this directory (by file name) for the "
          "URDF's <collision> meshes; the answer's robot.geometry_notes say which were used");
ABSL_FLAG(std::string, etag, "", "update/delete/edit: only if the model still has this etag");

namespace ikd::clients {
namespace {

std::string FormatTime(const google::protobuf::Timestamp& time) {
  return google::protobuf::util::TimeUtil::ToString(time);
}

// ---------------------------------------------------------------------------------------------
// Arms, scenes and skeletons share their commands; the traits below say how each maps onto
// ModelService.

using ModelStub = v1::ModelService::Stub;

struct ArmTraits {
  using Resource = v1::Arm;
  using Spec = v1::ArmSpec;
  static constexpr char kCollection[] = "arms";

  static absl::StatusOr<Spec> Load(const std::string& path) { return LoadArmSpec(path); }
  static grpc::Status Create(ModelStub& stub, grpc::ClientContext* context, const std::string& id,
                             const Spec& spec, Resource* out) {
    v1::CreateArmRequest request;
    request.set_arm_id(id);
    *request.mutable_arm()->mutable_spec() = spec;
    return stub.CreateArm(context, request, out);
  }
  static grpc::Status Get(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                          Resource* out) {
    v1::GetArmRequest request;
    request.set_name(name);
    return stub.GetArm(context, request, out);
  }
  static grpc::Status List(ModelStub& stub, grpc::ClientContext* context,
                           const std::string& page_token, std::vector<Resource>* out,
                           std::string* next_page_token) {
    v1::ListArmsRequest request;
    request.set_page_size(1000);
    request.set_page_token(page_token);
    v1::ListArmsResponse response;
    grpc::Status status = stub.ListArms(context, request, &response);
    out->insert(out->end(), response.arms().begin(), response.arms().end());
    *next_page_token = response.next_page_token();
    return status;
  }
  static grpc::Status Update(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                             const Spec& spec, const std::string& etag, Resource* out) {
    v1::UpdateArmRequest request;
    request.mutable_arm()->set_name(name);
    request.mutable_arm()->set_etag(etag);
    *request.mutable_arm()->mutable_spec() = spec;
    return stub.UpdateArm(context, request, out);
  }
  static grpc::Status Delete(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                             const std::string& etag) {
    v1::DeleteArmRequest request;
    request.set_name(name);
    request.set_etag(etag);
    google::protobuf::Empty empty;
    return stub.DeleteArm(context, request, &empty);
  }
  static std::vector<std::string> Header() {
    return {"name", "version", "limbs", "planar", "kind", "updated", "etag"};
  }
  static std::vector<std::string> Row(const Resource& arm) {
    const v1::ArmSpec& spec = arm.spec();
    if (spec.has_robot()) {  // an industrial arm: joints, not limbs
      return {arm.name(), absl::StrCat(arm.version()), "-",
              "-",        RobotKind(spec.robot()),     FormatTime(arm.update_time()),
              arm.etag()};
    }
    return {arm.name(),
            absl::StrCat(arm.version()),
            absl::StrCat(spec.limbs_size()),
            spec.planar() ? "yes" : "no",
            "chain",
            FormatTime(arm.update_time()),
            arm.etag()};
  }
  static std::string RobotKind(const v1::RobotSpec& robot) {
    switch (robot.kinematics_case()) {
      case v1::RobotSpec::kDh:
        return "robot (dh)";
      case v1::RobotSpec::kUrdf:
        return "robot (urdf " + robot.urdf().tip_link() + ")";
      case v1::RobotSpec::kPreset:
        return "robot (" + v1::RobotPreset_Name(robot.preset()) + ")";
      default:
        return "robot";
    }
  }
};

struct SceneTraits {
  using Resource = v1::Scene;
  using Spec = v1::SceneSpec;
  static constexpr char kCollection[] = "scenes";

  static absl::StatusOr<Spec> Load(const std::string& path) { return LoadSceneSpec(path); }
  static grpc::Status Create(ModelStub& stub, grpc::ClientContext* context, const std::string& id,
                             const Spec& spec, Resource* out) {
    v1::CreateSceneRequest request;
    request.set_scene_id(id);
    *request.mutable_scene()->mutable_spec() = spec;
    return stub.CreateScene(context, request, out);
  }
  static grpc::Status Get(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                          Resource* out) {
    v1::GetSceneRequest request;
    request.set_name(name);
    return stub.GetScene(context, request, out);
  }
  static grpc::Status List(ModelStub& stub, grpc::ClientContext* context,
                           const std::string& page_token, std::vector<Resource>* out,
                           std::string* next_page_token) {
    v1::ListScenesRequest request;
    request.set_page_size(1000);
    request.set_page_token(page_token);
    v1::ListScenesResponse response;
    grpc::Status status = stub.ListScenes(context, request, &response);
    out->insert(out->end(), response.scenes().begin(), response.scenes().end());
    *next_page_token = response.next_page_token();
    return status;
  }
  static grpc::Status Update(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                             const Spec& spec, const std::string& etag, Resource* out) {
    v1::UpdateSceneRequest request;
    request.mutable_scene()->set_name(name);
    request.mutable_scene()->set_etag(etag);
    *request.mutable_scene()->mutable_spec() = spec;
    return stub.UpdateScene(context, request, out);
  }
  static grpc::Status Delete(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                             const std::string& etag) {
    v1::DeleteSceneRequest request;
    request.set_name(name);
    request.set_etag(etag);
    google::protobuf::Empty empty;
    return stub.DeleteScene(context, request, &empty);
  }
  static std::vector<std::string> Header() {
    return {"name", "version", "obstacles", "updated", "etag"};
  }
  static std::vector<std::string> Row(const Resource& scene) {
    return {scene.name(), absl::StrCat(scene.version()),
            absl::StrCat(scene.spec().obstacles_size()), FormatTime(scene.update_time()),
            scene.etag()};
  }
};

struct SkeletonTraits {
  using Resource = v1::Skeleton;
  using Spec = v1::SkeletonSpec;
  static constexpr char kCollection[] = "skeletons";

  static absl::StatusOr<Spec> Load(const std::string& path) { return LoadSkeletonSpec(path); }
  static grpc::Status Create(ModelStub& stub, grpc::ClientContext* context, const std::string& id,
                             const Spec& spec, Resource* out) {
    v1::CreateSkeletonRequest request;
    request.set_skeleton_id(id);
    *request.mutable_skeleton()->mutable_spec() = spec;
    return stub.CreateSkeleton(context, request, out);
  }
  static grpc::Status Get(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                          Resource* out) {
    v1::GetSkeletonRequest request;
    request.set_name(name);
    return stub.GetSkeleton(context, request, out);
  }
  static grpc::Status List(ModelStub& stub, grpc::ClientContext* context,
                           const std::string& page_token, std::vector<Resource>* out,
                           std::string* next_page_token) {
    v1::ListSkeletonsRequest request;
    request.set_page_size(1000);
    request.set_page_token(page_token);
    v1::ListSkeletonsResponse response;
    grpc::Status status = stub.ListSkeletons(context, request, &response);
    out->insert(out->end(), response.skeletons().begin(), response.skeletons().end());
    *next_page_token = response.next_page_token();
    return status;
  }
  static grpc::Status Update(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                             const Spec& spec, const std::string& etag, Resource* out) {
    v1::UpdateSkeletonRequest request;
    request.mutable_skeleton()->set_name(name);
    request.mutable_skeleton()->set_etag(etag);
    *request.mutable_skeleton()->mutable_spec() = spec;
    return stub.UpdateSkeleton(context, request, out);
  }
  static grpc::Status Delete(ModelStub& stub, grpc::ClientContext* context, const std::string& name,
                             const std::string& etag) {
    v1::DeleteSkeletonRequest request;
    request.set_name(name);
    request.set_etag(etag);
    google::protobuf::Empty empty;
    return stub.DeleteSkeleton(context, request, &empty);
  }
  static std::vector<std::string> Header() {
    return {"name", "version", "sites", "bones", "updated", "etag"};
  }
  static std::vector<std::string> Row(const Resource& skeleton) {
    return {skeleton.name(),
            absl::StrCat(skeleton.version()),
            absl::StrCat(skeleton.spec().sites_size()),
            absl::StrCat(skeleton.spec().bones_size()),
            FormatTime(skeleton.update_time()),
            skeleton.etag()};
  }
};

template <typename Traits>
void PrintModels(const std::vector<typename Traits::Resource>& models, Format format) {
  if (format == Format::kJson) {
    for (const auto& model : models) std::cout << ToJson(model);
    return;
  }
  TablePrinter table(Traits::Header(), StyleOf(format));
  for (const auto& model : models) table.AddRow(Traits::Row(model));
  table.Print(std::cout);
}

template <typename Traits>
class ModelCommands {
 public:
  explicit ModelCommands(std::shared_ptr<grpc::Channel> channel)
      : stub_(v1::ModelService::NewStub(channel)) {}

  int Run(const std::string& verb, const Args& args) {
    if (verb == "create" && args.size() == 2) return Create(args[0], args[1]);
    if (verb == "get" && args.size() == 1) return Get(args[0]);
    if (verb == "list" && args.empty()) return List();
    if (verb == "update" && args.size() == 2) return Update(args[0], args[1]);
    if (verb == "delete" && args.size() == 1) return Delete(args[0]);
    return UsageError(absl::StrCat("unknown or incomplete command: ", Traits::kCollection, " ",
                                   verb, " with ", args.size(), " argument(s)"));
  }

 protected:
  std::string Name(const std::string& id_or_name) const {
    return ResourceName(Traits::kCollection, id_or_name);
  }

  // Prints one model as the command's output (json unless --format says otherwise).
  int PrintOne(const typename Traits::Resource& model) {
    auto format = OutputFormat(Format::kJson);
    if (!format.ok()) return InputError(format.status());
    PrintModels<Traits>({model}, *format);
    return kExitOk;
  }

  std::unique_ptr<ModelStub> stub_;

 private:
  int Create(const std::string& id, const std::string& path) {
    auto spec = Traits::Load(path);
    if (!spec.ok()) return InputError(spec.status());
    grpc::ClientContext context;
    PrepareContext(context);
    typename Traits::Resource created;
    grpc::Status status = Traits::Create(*stub_, &context, id, *spec, &created);
    return status.ok() ? PrintOne(created) : RpcError(status);
  }

  int Get(const std::string& name) {
    grpc::ClientContext context;
    PrepareContext(context);
    typename Traits::Resource model;
    grpc::Status status = Traits::Get(*stub_, &context, Name(name), &model);
    return status.ok() ? PrintOne(model) : RpcError(status);
  }

  int List() {
    auto format = OutputFormat(Format::kTable);
    if (!format.ok()) return InputError(format.status());
    std::vector<typename Traits::Resource> models;
    std::string page_token;
    do {
      grpc::ClientContext context;
      PrepareContext(context);
      grpc::Status status = Traits::List(*stub_, &context, page_token, &models, &page_token);
      if (!status.ok()) return RpcError(status);
    } while (!page_token.empty());
    PrintModels<Traits>(models, *format);
    return kExitOk;
  }

  int Update(const std::string& name, const std::string& path) {
    auto spec = Traits::Load(path);
    if (!spec.ok()) return InputError(spec.status());
    grpc::ClientContext context;
    PrepareContext(context);
    typename Traits::Resource updated;
    grpc::Status status =
        Traits::Update(*stub_, &context, Name(name), *spec, absl::GetFlag(FLAGS_etag), &updated);
    return status.ok() ? PrintOne(updated) : RpcError(status);
  }

  int Delete(const std::string& name) {
    grpc::ClientContext context;
    PrepareContext(context);
    grpc::Status status = Traits::Delete(*stub_, &context, Name(name), absl::GetFlag(FLAGS_etag));
    if (!status.ok()) return RpcError(status);
    std::cout << "deleted " << Name(name) << "\n";
    return kExitOk;
  }
};

using SkeletonCommands = ModelCommands<SkeletonTraits>;

// Arms have one command more: import-urdf (an industrial arm from a URDF file's chain).
class ArmCommands : public ModelCommands<ArmTraits> {
 public:
  using ModelCommands::ModelCommands;

  int Run(const std::string& verb, const Args& args) {
    if (verb == "import-urdf" && args.size() == 2) return ImportUrdf(args[0], args[1]);
    return ModelCommands::Run(verb, args);
  }

 private:
  int ImportUrdf(const std::string& id, const std::string& path) {
    auto urdf = ReadTextFile(path);
    if (!urdf.ok()) return InputError(urdf.status());
    if (absl::GetFlag(FLAGS_base_link).empty() || absl::GetFlag(FLAGS_tip_link).empty()) {
      return UsageError("arms import-urdf needs --base_link and --tip_link");
    }
    v1::ArmSpec spec;
    v1::UrdfChain* chain = spec.mutable_robot()->mutable_urdf();
    chain->set_urdf(*std::move(urdf));
    chain->set_base_link(absl::GetFlag(FLAGS_base_link));
    chain->set_tip_link(absl::GetFlag(FLAGS_tip_link));
    if (!absl::GetFlag(FLAGS_tool).empty()) {
      auto tool = ParseVector3(absl::GetFlag(FLAGS_tool), "--tool");
      if (!tool.ok()) return InputError(tool.status());
      *spec.mutable_robot()->mutable_tool()->mutable_position() = *tool;
    }
    if (absl::Status s = AddMeshes(absl::GetFlag(FLAGS_mesh_dir), *chain); !s.ok()) {
      return InputError(s);
    }
    grpc::ClientContext context;
    PrepareContext(context);
    v1::Arm created;
    grpc::Status status = ArmTraits::Create(*stub_, &context, id, spec, &created);
    if (!status.ok()) return RpcError(status);
    // The mesh contents would be megabytes of base64: printed by name only.
    for (auto& [name, bytes] :
         *created.mutable_spec()->mutable_robot()->mutable_urdf()->mutable_meshes()) {
      bytes.clear();
    }
    return PrintOne(created);
  }

  // Every .stl file of `dir` (none when empty), by its file name.
  static absl::Status AddMeshes(const std::string& dir, v1::UrdfChain& chain) {
    if (dir.empty()) return absl::OkStatus();
    std::error_code error;
    std::filesystem::directory_iterator it(dir, error);
    if (error) return absl::NotFoundError(absl::StrCat("--mesh_dir ", dir, ": ", error.message()));
    for (const auto& entry : it) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || !absl::EndsWithIgnoreCase(name, ".stl")) continue;
      auto bytes = ReadTextFile(entry.path().string());
      if (!bytes.ok()) return bytes.status();
      (*chain.mutable_meshes())[name] = *std::move(bytes);
    }
    return absl::OkStatus();
  }
};

// Scenes have one command more: edit (add, move, remove obstacles atomically).
class SceneCommands : public ModelCommands<SceneTraits> {
 public:
  using ModelCommands::ModelCommands;

  int Run(const std::string& verb, const Args& args) {
    if (verb == "edit" && args.size() == 2) return Edit(args[0], args[1]);
    return ModelCommands::Run(verb, args);
  }

 private:
  int Edit(const std::string& name, const std::string& path) {
    v1::EditSceneRequest request;
    absl::Status loaded = LoadMessageFile(path, &request);
    if (!loaded.ok()) return InputError(loaded);
    request.set_name(Name(name));
    if (!absl::GetFlag(FLAGS_etag).empty()) request.set_etag(absl::GetFlag(FLAGS_etag));
    grpc::ClientContext context;
    PrepareContext(context);
    v1::Scene edited;
    grpc::Status status = stub_->EditScene(&context, request, &edited);
    return status.ok() ? PrintOne(edited) : RpcError(status);
  }
};

}  // namespace

int ModelCommand(std::shared_ptr<grpc::Channel> channel, const std::string& collection,
                 const std::string& verb, const Args& args) {
  if (collection == "arms") return ArmCommands(channel).Run(verb, args);
  if (collection == "scenes") return SceneCommands(channel).Run(verb, args);
  if (collection == "skeletons") return SkeletonCommands(channel).Run(verb, args);
  return UsageError("unknown model collection \"" + collection + "\"");
}

}  // namespace ikd::clients
