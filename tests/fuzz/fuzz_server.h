// Shared by the RPC fuzz targets (tests/fuzz/*_fuzzer.cc) and make_fuzz_seeds: the real ikd
// services in process, built once per fuzzer process, with limits low enough that one input
// runs in milliseconds, and the demo models of deploy/models stored under their usual names.
//
// Why the real server rather than the conversion functions: a request then goes through
// exactly what a client's does - protobuf parsing, the handler's validation and model
// resolution, the worker pool, the solve and the streaming state machine (Track and
// EstimatePose reactors included) - and an in-process channel costs tens of microseconds per
// call, small beside the solves, so the execution rate stays within a factor of about two of
// calling the conversions directly.
//
//   FuzzServer& server = FuzzServer::Get();          // in LLVMFuzzerInitialize
//   grpc::ClientContext context;
//   server.kinematics().Solve(&context, request, &response);
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "google/protobuf/message.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "ikd/v1/pose_service.grpc.pb.h"
#include "ikd/v1/simulation_service.grpc.pb.h"
#include "server.h"

namespace ikd::fuzz {

// The server's limits in the fuzzers: every size and step bound of ServerOptions set low.
server::ServerOptions FuzzServerOptions();

// Fields no server limit bounds whose values only make a solve slower (iteration caps, random
// trials per sub-step): clamped in every fuzz input so that a slow input means a bound is
// missing somewhere else. Found by name anywhere in `message` (reflection).
void ClampUnboundedWork(google::protobuf::Message& message);

class FuzzServer {
 public:
  // Built on first use; aborts when it cannot start or the demo models do not load.
  static FuzzServer& Get();

  v1::ModelService::Stub& models() { return *models_; }
  v1::KinematicsService::Stub& kinematics() { return *kinematics_; }
  v1::SimulationService::Stub& simulation() { return *simulation_; }
  v1::PoseService::Stub& pose() { return *pose_; }

 private:
  FuzzServer();
  // One solve of the named industrial arm, so that its per-arm caches exist.
  void WarmUp(const std::string& arm_name);

  std::unique_ptr<server::ModelStore> store_;
  std::unique_ptr<server::Metrics> metrics_;  // before the services, which record into it
  std::unique_ptr<server::WorkerPool> pool_;
  std::unique_ptr<server::ModelServiceImpl> model_service_;
  std::unique_ptr<server::SimulationServiceImpl> simulation_service_;
  std::unique_ptr<server::KinematicsServiceImpl> kinematics_service_;
  std::unique_ptr<server::PoseServiceImpl> pose_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ModelService::Stub> models_;
  std::unique_ptr<v1::KinematicsService::Stub> kinematics_;
  std::unique_ptr<v1::SimulationService::Stub> simulation_;
  std::unique_ptr<v1::PoseService::Stub> pose_;
};

// The demo models of deploy/models (IKD_MODELS_DIR): arm and scene specs by id ("planar7",
// "pillars"), plus "ur5" from ur5.urdf (base_link to ee_link, as deploy/run.sh imports it).
struct DemoModels {
  std::vector<std::pair<std::string, v1::ArmSpec>> arms;
  std::vector<std::pair<std::string, v1::SceneSpec>> scenes;
};
DemoModels LoadDemoModels();

// Stream inputs (Track, EstimatePose): a sequence of messages, each preceded by its length as a
// protobuf varint. Parsing stops at the first truncated entry or after `max_messages`.
std::vector<std::string_view> SplitDelimited(const uint8_t* data, size_t size, size_t max_messages);
std::string JoinDelimited(const std::vector<std::string>& messages);

// Seed corpora: one file per seed, named by the hash of its content (as libFuzzer names them).
void WriteSeed(const std::string& dir, const std::string& bytes);

}  // namespace ikd::fuzz

namespace ikd::fuzz {

// Traps (a crash libFuzzer reports) when an answered message holds a NaN or infinity: the
// service promises finite output on OK (bad numbers are INVALID_ARGUMENT, numerical failures
// statuses).
void CheckFinite(const google::protobuf::Message& message);

// Parses `bytes` into `message` and clamps it (ClampUnboundedWork); false when unparsable.
bool ParseInput(std::string_view bytes, google::protobuf::Message& message);

// A bidirectional stream fed with the length-delimited requests of `data` (at most
// `max_messages`; parsing stops at the first bad one) while another thread reads every response
// and checks it (CheckFinite; only those `must_be_finite` accepts when it is given). Reading concurrently matters: the in-process transport does not
// buffer, so a client that wrote everything before reading would wait for a server waiting for
// its reader.
template <typename Request, typename Response>
void RunBidiStream(grpc::ClientReaderWriter<Request, Response>& stream, const uint8_t* data,
                   size_t size, size_t max_messages,
                   bool (*must_be_finite)(const Response&) = nullptr) {
  std::thread reader([&stream, must_be_finite] {
    Response response;
    while (stream.Read(&response)) {
      if (must_be_finite == nullptr || must_be_finite(response)) CheckFinite(response);
    }
  });
  for (std::string_view bytes : SplitDelimited(data, size, max_messages)) {
    Request request;
    if (!ParseInput(bytes, request)) break;
    if (!stream.Write(request)) break;  // the server ended the stream
  }
  stream.WritesDone();
  reader.join();
  stream.Finish().ok();
}

}  // namespace ikd::fuzz
