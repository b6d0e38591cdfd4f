// The skeleton shared by ikd's streams that go one step at a time: the bidirectional ones
// (bidi_stream.h: KinematicsService.Track, PoseService.EstimatePose) and the frame streams of
// SimulationService (StepChain, StepPendulum). Exactly one party owns the call at a time: gRPC
// from a StartRead, StartWrite or Finish until its callback, then that callback or the pool task
// it submits, which hands the call on as its last act. So the reactor needs no lock; OnCancel,
// the one callback that runs beside anything, only sets a flag. Whoever owns the call last
// calls End; after Finish nothing is pending, so OnDone (the only place that deletes) cannot
// race a worker. Every callback of a subclass starts with TakeFromGrpc(this) and every
// hand-off to gRPC is preceded by HandToGrpc(this) (stream_handoff.h).
//
// The streams whose targets are solved in parallel (SolveBatch, SolveTrajectory) share
// write_stream.h instead: several workers there write into one stream under a lock.
#pragma once

#include <atomic>

#include "absl/status/status.h"
#include "errors.h"
#include "stream_handoff.h"

namespace ikd::server {

// GrpcReactor: grpc::ServerBidiReactor<Request, Response> or grpc::ServerWriteReactor<Frame>.
template <class GrpcReactor>
class SequentialStream : public GrpcReactor {
 public:
  void OnDone() final {
    TakeFromGrpc(this);
    delete this;
  }

 protected:
  SequentialStream() = default;

  // Hands the call to gRPC for the last time: nothing may follow.
  void End(const absl::Status& status) {
    if (finished_.exchange(true)) return;  // unreachable by the ownership rule; never twice
    HandToGrpc(this);
    this->Finish(ToGrpcStatus(status));
  }

 private:
  std::atomic<bool> finished_{false};
};

}  // namespace ikd::server
