// PoseService.EstimatePose through the real handler (fuzz_server.h): the input is a sequence of
// length-delimited EstimatePoseRequests (a config - preset, inline skeleton or a stored name -
// then frames of labelled points). Every stream must end with a status (no crash, no hang);
// answered frames must be finite (a REJECTED frame only echoes the client's timestamp).
#include <cstddef>
#include <cstdint>

#include "fuzz_server.h"

namespace {

constexpr size_t kMaxPoseMessages = 12;

// A REJECTED frame echoes the client's timestamp, which may be the NaN it was rejected for.
bool MustBeFinite(const ikd::v1::EstimatePoseResponse& response) {
  return response.frame().outcome() != ikd::v1::FRAME_OUTCOME_REJECTED;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ikd::fuzz::FuzzServer::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  grpc::ClientContext context;
  auto stream = ikd::fuzz::FuzzServer::Get().pose().EstimatePose(&context);
  ikd::fuzz::RunBidiStream(*stream, data, size, kMaxPoseMessages, &MustBeFinite);
  return 0;
}
