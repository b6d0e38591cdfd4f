// PoseService.EstimatePose through the real handler (fuzz_server.h): the input is a sequence of
// length-delimited EstimatePoseRequests (a config - preset, inline skeleton or a stored name -
// then frames of labelled points). Every stream must end with a status (no crash, no hang);
// answered frames must be finite.
#include <cstddef>
#include <cstdint>

#include "fuzz_server.h"

namespace {

constexpr size_t kMaxPoseMessages = 12;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ikd::fuzz::FuzzServer::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  grpc::ClientContext context;
  auto stream = ikd::fuzz::FuzzServer::Get().pose().EstimatePose(&context);
  ikd::fuzz::RunBidiStream(*stream, data, size, kMaxPoseMessages);
  return 0;
}
