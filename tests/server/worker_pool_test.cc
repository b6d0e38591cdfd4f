#include "worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace ikd::server {
namespace {

TEST(WorkerPoolTest, RunsEveryAcceptedTask) {
  std::atomic<int> done{0};
  {
    WorkerPool pool({.threads = 2, .max_queued = 1000});
    for (int i = 0; i < 500; ++i) ASSERT_TRUE(pool.TrySubmit([&] { ++done; }));
  }  // the destructor drains the queue
  EXPECT_EQ(done.load(), 500);
}

TEST(WorkerPoolTest, FullQueueRefusesButContinuationsAreAdmitted) {
  WorkerPool pool({.threads = 1, .max_queued = 2});
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  // `gate` by value: the worker may still be inside wait() when this test's locals go (found by
  // AddressSanitizer), and the copy keeps the shared state alive until the pool has joined.
  ASSERT_TRUE(pool.TrySubmit([&started, gate] { started.set_value(); gate.wait(); }));
  started.get_future().wait();  // the only thread is now busy
  EXPECT_TRUE(pool.TrySubmit([] {}));
  EXPECT_TRUE(pool.TrySubmit([] {}));
  EXPECT_FALSE(pool.TrySubmit([] {}));  // queue holds max_queued = 2
  EXPECT_EQ(pool.queued(), 2);
  EXPECT_TRUE(pool.SubmitContinuation([] {}));
  EXPECT_EQ(pool.queued(), 3);
  release.set_value();
}

// busy() counts the threads inside a task; rejected() counts TrySubmit refusals for a full
// queue only (continuations are never refused for it).
TEST(WorkerPoolTest, BusyAndRejectedCountsForMetrics) {
  WorkerPool pool({.threads = 1, .max_queued = 1});
  EXPECT_EQ(pool.busy(), 0);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  ASSERT_TRUE(pool.TrySubmit([&started, gate] { started.set_value(); gate.wait(); }));
  started.get_future().wait();
  EXPECT_EQ(pool.busy(), 1);
  EXPECT_TRUE(pool.TrySubmit([] {}));
  EXPECT_FALSE(pool.TrySubmit([] {}));
  EXPECT_FALSE(pool.TrySubmit([] {}));
  EXPECT_TRUE(pool.SubmitContinuation([] {}));
  EXPECT_EQ(pool.rejected(), 2);
  release.set_value();
}

TEST(WorkerPoolTest, NonPositiveSizesAreRaisedToOne) {
  WorkerPool pool({.threads = 0, .max_queued = 0});
  EXPECT_EQ(pool.threads(), 1);
  std::promise<int> result;
  ASSERT_TRUE(pool.TrySubmit([&] { result.set_value(7); }));
  EXPECT_EQ(result.get_future().get(), 7);
}

}  // namespace
}  // namespace ikd::server
