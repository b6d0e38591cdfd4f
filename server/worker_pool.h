// A fixed set of threads with a bounded queue: every solve runs here, not on a gRPC thread
// (callback reactions must return fast), except Track's short continuations, which cost less
// than a hand-off to this pool (track_reactor.cc). A full queue refuses work instead of
// growing, so the caller answers RESOURCE_EXHAUSTED.
//
//   WorkerPool pool({.threads = 2, .max_queued = 64});
//   if (!pool.TrySubmit([&] { Solve(); })) return PoolFull();
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace ikd::server {

struct WorkerPoolOptions {
  int threads = 2;       // >= 1
  int max_queued = 256;  // tasks waiting for a thread, >= 1
};

class WorkerPool {
 public:
  explicit WorkerPool(const WorkerPoolOptions& options);
  // Runs the queued tasks, then joins the threads.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false (task dropped) when the queue is full or the pool is stopping.
  bool TrySubmit(std::function<void()> task);
  // Queues `task` even past max_queued: for continuations of work already admitted (the next
  // chunk of a running stream), which must not be refused halfway. False only when stopping.
  bool SubmitContinuation(std::function<void()> task);

  int threads() const { return static_cast<int>(threads_.size()); }
  int queued() const;
  // Threads running a task now, and TrySubmit calls refused for a full queue (for metrics).
  int busy() const { return busy_.load(std::memory_order_relaxed); }
  int64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }

 private:
  bool Enqueue(std::function<void()> task, bool bounded);
  void Run();

  const int max_queued_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  std::atomic<int> busy_{0};
  std::atomic<int64_t> rejected_{0};
};

// What a refused submission answers: a new call that finds the queue full gets
// RESOURCE_EXHAUSTED (with a google.rpc.QuotaFailure), a running call whose continuation the
// stopping pool refuses gets UNAVAILABLE.
absl::Status PoolFull();
absl::Status PoolStopping();

// Queues the next task of a stream: the first one (`first`) only if the pool has room, later
// ones as continuations, so a running stream is never refused halfway. OK, or the status above
// to end the stream with.
absl::Status SubmitStreamTask(WorkerPool& pool, bool first, std::function<void()> task);

}  // namespace ikd::server
