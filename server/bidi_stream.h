// The skeleton shared by ikd's bidirectional streams (KinematicsService.Track,
// PoseService.EstimatePose), on sequential_stream.h: strictly one thing at a time, read -> (act on the message: read
// again, or work on the pool or inline -> write) -> read ... At most one of a read, a task and
// a write is pending, and the party completing it is the only one that may go on or Finish; a
// cancellation fails the pending read or write, which ends the stream.
//
// Every hand-off to gRPC goes through ReadNext, WriteResponse and End, and every callback
// starts with TakeFromGrpc (stream_handoff.h): a subclass never calls StartRead, StartWrite or
// Finish itself, and touches nothing of the reactor after a hand-off.
#pragma once

#include <atomic>

#include <grpcpp/support/server_callback.h>

#include "absl/status/status.h"
#include "errors.h"
#include "parse_errors.h"
#include "sequential_stream.h"
#include "stream_handoff.h"

namespace ikd::server {

template <class Request, class Response>
class BidiStreamReactor
    : public SequentialStream<grpc::ServerBidiReactor<Request, Response>> {
 public:
  void OnReadDone(bool ok) final {
    TakeFromGrpc(this);
    // The client half-closed (or is gone), unless bytes came that did not parse.
    if (!ok) {
      return End(ReadFailedToParse(request_) ? UnparsableStreamMessage(request_)
                                             : absl::OkStatus());
    }
    if (absl::Status status = OnMessage(); !status.ok()) End(status);
  }
  void OnWriteDone(bool ok) final {
    TakeFromGrpc(this);
    if (!ok) return End(absl::CancelledError("the stream broke (client gone or cancelled)"));
    ReadNext();
  }

 protected:
  // The subclass's constructor ends with ReadNext(), once its own members are set.
  BidiStreamReactor() = default;

  // Acts on request_ (just read) and hands the call on: ReadNext(), a pool task, or
  // WriteResponse() (a task may also End). An error is returned without handing on, and ends
  // the stream.
  virtual absl::Status OnMessage() = 0;

  // Every read goes through here: the sentinel tells a failed parse from a half-close. It is
  // written before the call is handed to gRPC (nothing of the reactor is touched after).
  void ReadNext() {
    MarkUnread(request_);
    HandToGrpc(this);
    this->StartRead(&request_);
  }

  // Writes response_, filled by the caller. Hands the call to gRPC: nothing may follow.
  void WriteResponse() {
    HandToGrpc(this);
    this->StartWrite(&response_);
  }

  using SequentialStream<grpc::ServerBidiReactor<Request, Response>>::End;

  // Owned by whichever party holds the call: request_ is stable from OnReadDone until the next
  // ReadNext, response_ from one write's completion until the next WriteResponse.
  Request request_;
  Response response_;
};

}  // namespace ikd::server
