// A call of any ikd method with raw request bytes, through gRPC's generic stub (any kind of
// method: unary, server, client or bidirectional streaming): for tests of what the server
// answers regardless of the request's type (authentication, unparsable bytes).
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace ikd::testing_util {

// Calls `method` ("/pkg.Service/Method") with `messages` (each the raw bytes of one request
// message), half-closes, reads every answer and returns the final status (20 s deadline).
inline grpc::Status CallWithBytes(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& method,
                                  const std::vector<std::string>& messages) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue queue;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, method, &queue);
  bool ok = false;
  auto wait = [&queue, &ok] {
    void* tag;
    queue.Next(&tag, &ok);
  };
  call->StartCall(nullptr);
  wait();
  for (const std::string& bytes : messages) {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    call->Write(request, nullptr);
    wait();
  }
  call->WritesDone(nullptr);
  wait();
  do {  // the answers, which Finish waits for
    grpc::ByteBuffer answer;
    call->Read(&answer, nullptr);
    wait();
  } while (ok);
  grpc::Status status;
  call->Finish(&status, nullptr);
  wait();
  queue.Shutdown();
  void* tag;
  while (queue.Next(&tag, &ok)) {
  }
  return status;
}

}  // namespace ikd::testing_util
