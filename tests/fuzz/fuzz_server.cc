#include "fuzz_server.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/json_util.h"

namespace ikd::fuzz {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "fuzz set-up: %s\n", message.c_str());
  std::abort();
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) Die(absl::StrCat("cannot read ", path.string()));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// A model file holds either the resource (with "spec") or the bare spec, as ikctl accepts.
template <typename Resource, typename Spec>
Spec ParseModelJson(const std::filesystem::path& path) {
  const std::string json = ReadFile(path);
  Resource resource;
  if (google::protobuf::util::JsonStringToMessage(json, &resource).ok() &&
      resource.has_spec()) {
    return resource.spec();
  }
  Spec spec;
  if (!google::protobuf::util::JsonStringToMessage(json, &spec).ok()) {
    Die(absl::StrCat("not a model file: ", path.string()));
  }
  return spec;
}

// Caps of ClampUnboundedWork (the solver defaults are 24 trials and 1000 iterations).
constexpr int kMaxTrialsPerStep = 16;
constexpr int kMaxIterations = 200;

void ClampInt32Field(google::protobuf::Message& message,
                     const google::protobuf::FieldDescriptor& field, int cap) {
  const google::protobuf::Reflection& reflection = *message.GetReflection();
  const int value = reflection.GetInt32(message, &field);
  if (value > cap) reflection.SetInt32(&message, &field, cap);
}

}  // namespace

server::ServerOptions FuzzServerOptions() {
  server::ServerOptions options;
  options.max_request_bytes = 1 << 20;
  options.pool = {.threads = 1, .max_queued = 16};
  options.limits.max_limbs = 16;
  options.limits.max_obstacles = 16;
  options.limits.max_skeleton_sites = 32;
  options.limits.max_operations = 8;
  options.limits.max_page_size = 8;
  options.simulation.max_sites = 32;
  options.simulation.max_constraints = 96;
  options.simulation.max_steps = 40;
  options.simulation.max_frames = 8;
  options.simulation.max_follow_steps = 200;
  options.simulation.max_follow_frames = 8;
  options.simulation.max_response_sites = 12;
  options.kinematics.max_samples = 5;
  options.kinematics.max_substeps_per_sample = 32;
  options.pose.max_points_per_frame = 48;
  return options;
}

void ClampUnboundedWork(google::protobuf::Message& message) {
  const google::protobuf::Reflection& reflection = *message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int k = 0; k < reflection.FieldSize(message, field); ++k) {
          ClampUnboundedWork(*reflection.MutableRepeatedMessage(&message, field, k));
        }
      } else {
        ClampUnboundedWork(*reflection.MutableMessage(&message, field));
      }
    } else if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_INT32 &&
               !field->is_repeated()) {
      if (field->name() == "trials_per_step") ClampInt32Field(message, *field, kMaxTrialsPerStep);
      if (field->name() == "max_iterations") ClampInt32Field(message, *field, kMaxIterations);
    }
  }
}

FuzzServer& FuzzServer::Get() {
  static FuzzServer* server = new FuzzServer();  // never destroyed: the fuzzer exits instead
  return *server;
}

FuzzServer::FuzzServer() {
  // Protobuf logs every string field with invalid UTF-8 it parses: noise at fuzzing rates.
  google::protobuf::SetLogHandler(nullptr);
  const server::ServerOptions options = FuzzServerOptions();
  store_ = server::NewMemoryModelStore({.max_models_per_collection = 64});
  pool_ = std::make_unique<server::WorkerPool>(options.pool);
  // Metrics without an endpoint (no --metrics_listen): the services' recording paths run too.
  absl::StatusOr<std::unique_ptr<server::Metrics>> metrics = server::Metrics::Create({});
  if (!metrics.ok()) Die("metrics: " + std::string(metrics.status().message()));
  metrics_ = *std::move(metrics);
  model_service_ = std::make_unique<server::ModelServiceImpl>(store_.get(), options.limits);
  simulation_service_ =
      std::make_unique<server::SimulationServiceImpl>(pool_.get(), options.simulation,
                                                      metrics_.get());
  kinematics_service_ = std::make_unique<server::KinematicsServiceImpl>(
      store_.get(), pool_.get(), options.limits, options.kinematics, metrics_.get());
  pose_service_ = std::make_unique<server::PoseServiceImpl>(
      store_.get(), pool_.get(), options.limits, options.pose, metrics_.get());
  // No listening port: the fuzzers talk to the server over its in-process channel only.
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(options.max_request_bytes);
  builder.RegisterService(model_service_.get());
  builder.RegisterService(simulation_service_.get());
  builder.RegisterService(kinematics_service_.get());
  builder.RegisterService(pose_service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) Die("the in-process server did not start");
  std::shared_ptr<grpc::Channel> channel = server_->InProcessChannel(grpc::ChannelArguments());
  models_ = v1::ModelService::NewStub(channel);
  kinematics_ = v1::KinematicsService::NewStub(channel);
  simulation_ = v1::SimulationService::NewStub(channel);
  pose_ = v1::PoseService::NewStub(channel);

  // The demo models, created through the ModelService as deploy/run.sh does, so that requests
  // naming "arms/planar7" or "scenes/pillars" resolve.
  const DemoModels demo = LoadDemoModels();
  for (const auto& [id, spec] : demo.arms) {
    v1::CreateArmRequest request;
    request.set_arm_id(id);
    *request.mutable_arm()->mutable_spec() = spec;
    grpc::ClientContext context;
    v1::Arm arm;
    if (grpc::Status s = models_->CreateArm(&context, request, &arm); !s.ok()) {
      Die(absl::StrCat("arms/", id, ": ", s.error_message()));
    }
    if (spec.has_robot()) WarmUp(arm.name());
  }
  for (const auto& [id, spec] : demo.scenes) {
    v1::CreateSceneRequest request;
    request.set_scene_id(id);
    *request.mutable_scene()->mutable_spec() = spec;
    grpc::ClientContext context;
    v1::Scene scene;
    if (grpc::Status s = models_->CreateScene(&context, request, &scene); !s.ok()) {
      Die(absl::StrCat("scenes/", id, ": ", s.error_message()));
    }
  }
}

// An industrial arm's first single-pose solve builds its seed atlas (16384 sampled
// configurations: about 0.1 s in a release build, about 10 s under this build's ASan, UBSan and
// coverage instrumentation). Built here, before the fuzzer times any input, as a long-running
// server has it built by its first request; what a seed input costs is then its own work.
void FuzzServer::WarmUp(const std::string& arm_name) {
  v1::SolveRequest request;
  request.mutable_arm()->set_name(arm_name);
  request.mutable_target()->set_x(0.3);
  request.mutable_target()->set_z(0.4);
  grpc::ClientContext context;
  v1::SolveResponse response;
  // Any answer will do (reached or not): the solve has built the atlas either way.
  if (grpc::Status s = kinematics_->Solve(&context, request, &response); !s.ok()) {
    Die(absl::StrCat(arm_name, " warm-up solve: ", s.error_message()));
  }
}

DemoModels LoadDemoModels() {
  DemoModels demo;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(IKD_MODELS_DIR)) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path& path : files) {
    const std::string name = path.filename().string();
    if (name.ends_with(".arm.json")) {
      demo.arms.emplace_back(name.substr(0, name.size() - 9),
                             ParseModelJson<v1::Arm, v1::ArmSpec>(path));
    } else if (name.ends_with(".scene.json")) {
      demo.scenes.emplace_back(name.substr(0, name.size() - 11),
                               ParseModelJson<v1::Scene, v1::SceneSpec>(path));
    } else if (name.ends_with(".urdf")) {
      v1::ArmSpec spec;
      v1::UrdfChain* urdf = spec.mutable_robot()->mutable_urdf();
      urdf->set_urdf(ReadFile(path));
      urdf->set_base_link("base_link");
      urdf->set_tip_link("ee_link");
      demo.arms.emplace_back(name.substr(0, name.size() - 5), spec);
    }
  }
  if (demo.arms.empty() || demo.scenes.empty()) {
    Die(absl::StrCat("no demo models in ", IKD_MODELS_DIR));
  }
  return demo;
}

std::vector<std::string_view> SplitDelimited(const uint8_t* data, size_t size,
                                             size_t max_messages) {
  std::vector<std::string_view> messages;
  google::protobuf::io::CodedInputStream input(data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
  while (messages.size() < max_messages) {
    uint32_t length = 0;
    if (!input.ReadVarint32(&length)) break;
    const int offset = input.CurrentPosition();
    if (!input.Skip(static_cast<int>(std::min<uint32_t>(length, 1u << 30)))) break;
    messages.emplace_back(reinterpret_cast<const char*>(data) + offset, length);
  }
  return messages;
}

std::string JoinDelimited(const std::vector<std::string>& messages) {
  std::string out;
  for (const std::string& message : messages) {
    uint32_t length = static_cast<uint32_t>(message.size());
    do {  // varint, 7 bits per byte, low first
      const uint8_t byte = length & 0x7f;
      length >>= 7;
      out.push_back(static_cast<char>(length != 0 ? byte | 0x80 : byte));
    } while (length != 0);
    out += message;
  }
  return out;
}

void WriteSeed(const std::string& dir, const std::string& bytes) {
  std::filesystem::create_directories(dir);
  const uint64_t hash = std::hash<std::string>{}(bytes);
  std::ofstream file(std::filesystem::path(dir) / absl::StrFormat("seed-%016x", hash),
                     std::ios::binary);
  file << bytes;
  if (!file) Die(absl::StrCat("cannot write a seed to ", dir));
}

}  // namespace ikd::fuzz

namespace ikd::fuzz {
namespace {

bool FieldsFinite(const google::protobuf::Message& message, std::string* where) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection& reflection = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const int n = field->is_repeated() ? reflection.FieldSize(message, field) : 1;
    for (int k = 0; k < n; ++k) {
      double value = 0.0;
      switch (field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_DOUBLE:
          value = field->is_repeated() ? reflection.GetRepeatedDouble(message, field, k)
                                       : reflection.GetDouble(message, field);
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          value = field->is_repeated() ? reflection.GetRepeatedFloat(message, field, k)
                                       : reflection.GetFloat(message, field);
          break;
        case FieldDescriptor::CPPTYPE_MESSAGE:
          if (!FieldsFinite(field->is_repeated()
                                ? reflection.GetRepeatedMessage(message, field, k)
                                : reflection.GetMessage(message, field),
                            where)) {
            *where = absl::StrCat(field->name(), "[", k, "].", *where);
            return false;
          }
          continue;
        default:
          continue;
      }
      if (!std::isfinite(value)) {
        *where = absl::StrCat(field->name(), "[", k, "] = ", value);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

void CheckFinite(const google::protobuf::Message& message) {
  std::string where;
  if (FieldsFinite(message, &where)) return;
  std::fprintf(stderr, "non-finite value in an answered %s: %s\n%s\n",
               message.GetDescriptor()->full_name().c_str(), where.c_str(),
               message.ShortDebugString().substr(0, 4000).c_str());
  __builtin_trap();
}

bool ParseInput(std::string_view bytes, google::protobuf::Message& message) {
  if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
  ClampUnboundedWork(message);
  return true;
}

}  // namespace ikd::fuzz
