// SimulationService requests through the real handlers (fuzz_server.h): the first byte picks
// the RPC (StepChain, StepPendulum, FollowShape, ResponseMatrix), the rest is its request. Steps,
// frames and sites are capped low by FuzzServerOptions, so a run takes milliseconds. Every call
// must end with a status (no crash, no hang); answered frames must be finite.
#include <cstddef>
#include <cstdint>

#include "fuzz_server.h"

namespace {

using ikd::fuzz::CheckFinite;
using ikd::fuzz::FuzzServer;
using ikd::fuzz::ParseInput;
namespace v1 = ikd::v1;

template <typename Request, typename Frame, typename Call>
void FuzzStream(std::string_view bytes, Call call) {
  Request request;
  if (!ParseInput(bytes, request)) return;
  grpc::ClientContext context;
  auto reader = call(&context, request);
  Frame frame;
  while (reader->Read(&frame)) CheckFinite(frame);
  reader->Finish().ok();
}

template <typename Request, typename Response, typename Call>
void FuzzUnary(std::string_view bytes, Call call) {
  Request request;
  if (!ParseInput(bytes, request)) return;
  grpc::ClientContext context;
  Response response;
  if (call(&context, request, &response).ok()) CheckFinite(response);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FuzzServer::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  v1::SimulationService::Stub& stub = FuzzServer::Get().simulation();
  switch (data[0] % 4) {
    case 0:
      FuzzStream<v1::StepChainRequest, v1::ChainFrame>(rest, [&](auto* c, const auto& r) {
        return stub.StepChain(c, r);
      });
      break;
    case 1:
      FuzzStream<v1::StepPendulumRequest, v1::PendulumFrame>(rest, [&](auto* c, const auto& r) {
        return stub.StepPendulum(c, r);
      });
      break;
    case 2:
      FuzzUnary<v1::FollowShapeRequest, v1::FollowShapeResponse>(
          rest, [&](auto* c, const auto& r, auto* out) { return stub.FollowShape(c, r, out); });
      break;
    case 3:
      FuzzUnary<v1::ResponseMatrixRequest, v1::ResponseMatrixResponse>(
          rest, [&](auto* c, const auto& r, auto* out) { return stub.ResponseMatrix(c, r, out); });
      break;
  }
  return 0;
}
