// The skeleton shared by ikd's server-streaming calls solved on the worker pool
// (KinematicsService.SolveBatch, SolveTrajectory): one lock over the stream's state, at most one
// write in flight, the first error recorded (the one the call ends with), and the gRPC
// callbacks every such stream handles alike. What to do next stays the subclass's: after a
// write, Derived::ActionsAfterWriteLocked() picks it under the lock and Derived::Run(actions)
// carries it out after releasing it (StartWrite, pool submissions, Finish), so every hand-off
// to gRPC happens outside the lock, and nothing of the reactor is touched after one but what a
// pool submission still pending keeps alive (counted as solving, it holds off Finish).
//
// Derived (CRTP, final) provides:
//   struct Actions;                            // what to do once mu_ is released
//   Actions ActionsAfterWriteLocked();         // under mu_, after writing_ was cleared
//   void Run(const Actions& actions);          // outside mu_, starting with HandToGrpc
// and befriends PooledWriteStream<Derived, Response>.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>

#include <grpcpp/support/server_callback.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "stream_handoff.h"

namespace ikd::server {

template <class Derived, class Response>
class PooledWriteStream : public grpc::ServerWriteReactor<Response> {
 public:
  void OnWriteDone(bool ok) final {
    TakeFromGrpc(&self());  // the address the subclass hands over (HandToGrpc(this))
    typename Derived::Actions actions;
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (!ok) RecordError(absl::CancelledError("the stream broke (client gone or cancelled)"));
      actions = self().ActionsAfterWriteLocked();
    }
    self().Run(actions);
  }
  // Only a flag, read by the workers before each target (a cancelled write also fails at once).
  void OnCancel() final { cancelled_.store(true); }
  void OnDone() final {
    TakeFromGrpc(&self());
    delete &self();
  }

 protected:
  PooledWriteStream() = default;

  // The first error wins; the workers still running stop at their next target.
  void RecordError(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!error_) error_ = status;
    failed_.store(true);
  }

  std::atomic<bool> cancelled_{false};  // by the client (OnCancel)
  std::atomic<bool> failed_{false};     // an error is recorded

  // std::mutex rather than absl::Mutex: Debian's Abseil is not TSan-instrumented, pthread is.
  std::mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;   // a write is in flight
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // Finish was called (exactly once)
  std::optional<absl::Status> error_ ABSL_GUARDED_BY(mu_);
  Response writing_message_;  // owned by gRPC while writing_

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace ikd::server
