// A fixed set of threads with a bounded queue: every solve runs here, never on a gRPC thread
// (callback reactions must return fast). A full queue refuses work instead of growing, so the
// caller answers RESOURCE_EXHAUSTED.
//
//   WorkerPool pool({.threads = 2, .max_queued = 64});
//   if (!pool.TrySubmit([&] { Solve(); })) return Overloaded();
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

 private:
  bool Enqueue(std::function<void()> task, bool bounded);
  void Run();

  const int max_queued_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ikd::server
