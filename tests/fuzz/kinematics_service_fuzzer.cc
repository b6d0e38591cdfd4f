// KinematicsService requests through the real handlers (fuzz_server.h): the first byte picks the
// RPC, the rest is the request - a SolveRequest, a SolveTrajectoryRequest, or for Track a
// sequence of length-delimited TrackRequests (config, then targets and scene updates). Arms and
// scenes come inline or by the demo models' names (arms/planar7, arms/ur5, scenes/pillars, ...).
// Every call must end with a status (no crash, no hang); answered states must be finite.
#include <cstddef>
#include <cstdint>

#include "fuzz_server.h"

namespace {

using ikd::fuzz::CheckFinite;
using ikd::fuzz::FuzzServer;
using ikd::fuzz::ParseInput;
namespace v1 = ikd::v1;

constexpr size_t kMaxTrackMessages = 12;

void FuzzSolve(std::string_view bytes) {
  v1::SolveRequest request;
  if (!ParseInput(bytes, request)) return;
  grpc::ClientContext context;
  v1::SolveResponse response;
  if (FuzzServer::Get().kinematics().Solve(&context, request, &response).ok()) {
    CheckFinite(response);
  }
}

void FuzzSolveTrajectory(std::string_view bytes) {
  v1::SolveTrajectoryRequest request;
  if (!ParseInput(bytes, request)) return;
  grpc::ClientContext context;
  auto reader = FuzzServer::Get().kinematics().SolveTrajectory(&context, request);
  v1::SolveTrajectoryResponse response;
  while (reader->Read(&response)) CheckFinite(response);
  reader->Finish().ok();
}

void FuzzTrack(const uint8_t* data, size_t size) {
  grpc::ClientContext context;
  auto stream = FuzzServer::Get().kinematics().Track(&context);
  ikd::fuzz::RunBidiStream(*stream, data, size, kMaxTrackMessages);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FuzzServer::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: FuzzSolve(rest); break;
    case 1: FuzzSolveTrajectory(rest); break;
    case 2: FuzzTrack(data + 1, size - 1); break;
  }
  return 0;
}
