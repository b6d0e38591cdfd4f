#include "worker_pool.h"

#include <algorithm>
#include <utility>

#include "errors.h"

namespace ikd::server {

WorkerPool::WorkerPool(const WorkerPoolOptions& options)
    : max_queued_(std::max(1, options.max_queued)) {
  const int n = std::max(1, options.threads);
  threads_.reserve(n);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::TrySubmit(std::function<void()> task) { return Enqueue(std::move(task), true); }

bool WorkerPool::SubmitContinuation(std::function<void()> task) {
  return Enqueue(std::move(task), false);
}

int WorkerPool::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(tasks_.size());
}

bool WorkerPool::Enqueue(std::function<void()> task, bool bounded) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    if (bounded && static_cast<int>(tasks_.size()) >= max_queued_) {
      rejected_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
  return true;
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    busy_.fetch_add(1, std::memory_order_relaxed);
    task();
    busy_.fetch_sub(1, std::memory_order_relaxed);
  }
}

absl::Status PoolFull() {
  return QuotaExceeded("worker pool", "every worker is busy and the queue is full; retry later");
}

absl::Status PoolStopping() { return absl::UnavailableError("the server is shutting down"); }

absl::Status SubmitStreamTask(WorkerPool& pool, bool first, std::function<void()> task) {
  if (first) return pool.TrySubmit(std::move(task)) ? absl::OkStatus() : PoolFull();
  return pool.SubmitContinuation(std::move(task)) ? absl::OkStatus() : PoolStopping();
}

}  // namespace ikd::server
