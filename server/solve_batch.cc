#include "solve_batch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "arm_engine.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ik_problem.h"
#include "model_refs.h"
#include "stream_handoff.h"
#include "write_stream.h"

namespace ikd::server {
namespace {

constexpr int kDefaultChunk = 64;
constexpr int kMaxChunk = 1000;

// Chunks are solved on up to this many workers at once per pool thread, and at most as many
// chunks wait solved for their turn to be written: the memory a call holds stays bounded
// whatever its size, and the workers are not idle while a write is in flight.
constexpr int kChunksPerThread = 2;

// The stream of a SolveBatch call. Chunk c holds targets [c * chunk, (c + 1) * chunk); workers
// solve several chunks at once, each parked when done until every earlier one is written, so
// the messages go out in target order. All state changes happen under mu_; StartWrite, Finish
// and pool submissions happen after releasing it. Finish happens exactly once, when no chunk
// is being solved and no write is in flight, and either every chunk was written or an error
// (deadline, cancellation, broken stream, pool stopping) was recorded; a chunk running when
// the call stops ends at its next target.
class BatchReactor final : public PooledWriteStream<BatchReactor, v1::SolveBatchResponse> {
 public:
  BatchReactor(grpc::CallbackServerContext* context, WorkerPool* pool, Metrics* metrics,
               BatchPlan plan, int chunk)
      : context_(context),
        pool_(pool),
        metrics_(metrics),
        plan_(std::move(plan)),
        chunk_(chunk),
        chunks_((plan_.targets + chunk - 1) / chunk),
        max_ahead_(kChunksPerThread * std::max(1, pool->threads())) {
    // The first chunks to solve, counted as being solved before any is submitted: the call
    // cannot finish (and be deleted) until they have all been handed over and have run.
    std::vector<int> initial;
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (next_submit_ < chunks_ && solving_ < max_ahead_) {
        initial.push_back(next_submit_++);
        ++solving_;
      }
    }
    // The call is admitted only if the pool has room for its first chunk; later chunks are
    // continuations of admitted work.
    if (!pool_->TrySubmit([this] { SolveChunk(0); })) {
      Actions refused;
      {
        std::lock_guard<std::mutex> lock(mu_);
        solving_ -= static_cast<int>(initial.size());
        RecordError(PoolFull());
        refused = NextActionsLocked();
      }
      Run(refused);
      return;
    }
    Actions rest;
    rest.submit.assign(initial.begin() + 1, initial.end());
    if (!rest.submit.empty()) Run(rest);  // else chunk 0 may already have finished the call
  }
  // A call refused before any work.
  explicit BatchReactor(const absl::Status& error) : max_ahead_(0) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      RecordError(error);
      finished_ = true;
    }
    HandToGrpc(this);
    Finish(ToGrpcStatus(error));
  }

 private:
  friend class PooledWriteStream<BatchReactor, v1::SolveBatchResponse>;

  // What to do once mu_ is released.
  struct Actions {
    bool write = false;         // StartWrite(&writing_message_)
    std::vector<int> submit;    // chunks to hand to the pool
    std::optional<grpc::Status> finish;
  };

  // On a worker: solves chunk c into a message and parks it.
  void SolveChunk(int c) {
    absl::StatusOr<v1::SolveBatchResponse> message = ChunkMessage(c);
    Actions actions;
    {
      std::lock_guard<std::mutex> lock(mu_);
      --solving_;
      if (!message.ok()) {
        RecordError(message.status());
      } else {
        parked_.emplace(c, *std::move(message));
      }
      actions = NextActionsLocked();
    }
    Run(actions);
  }

  absl::StatusOr<v1::SolveBatchResponse> ChunkMessage(int c) {
    absl::StatusOr<TargetSolver> solve = plan_.new_solver();
    if (!solve.ok()) return solve.status();
    v1::SolveBatchResponse message;
    if (c == 0) SetJointNames(plan_.joint_names, message.mutable_joint_names());
    const int end = std::min(plan_.targets, (c + 1) * chunk_);
    for (int index = c * chunk_; index < end; ++index) {
      if (absl::Status stop = StopReason(index); !stop.ok()) return stop;
      v1::BatchResult* result = message.add_results();
      result->set_index(index);
      const absl::Time start = absl::Now();
      if (absl::Status s = (*solve)(index, *result); !s.ok()) return s;
      result->set_solve_seconds(absl::ToDoubleSeconds(absl::Now() - start));
      RecordIkStep(*metrics_, result->state());
    }
    return message;
  }

  // The next write (the parked chunk whose turn it is), the chunks to start (as far ahead as
  // allowed) and the finish, from the state under mu_.
  Actions NextActionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Actions actions;
    if (error_) {
      parked_.clear();
    } else {
      if (!writing_) {
        if (auto it = parked_.find(next_write_); it != parked_.end()) {
          writing_message_ = std::move(it->second);
          parked_.erase(it);
          ++next_write_;
          writing_ = actions.write = true;
        }
      }
      while (next_submit_ < chunks_ && solving_ + static_cast<int>(parked_.size()) < max_ahead_) {
        actions.submit.push_back(next_submit_++);
        ++solving_;
      }
    }
    if (!finished_ && solving_ == 0 && !writing_ && (error_ || next_write_ == chunks_)) {
      finished_ = true;
      actions.finish = ToGrpcStatus(error_.value_or(absl::OkStatus()));
    }
    return actions;
  }

  Actions ActionsAfterWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return NextActionsLocked();
  }

  // Once the write is started (or the last chunk submitted) the reactor may finish and be
  // deleted on another thread at any moment: nothing of it is read after that. Chunks not yet
  // submitted are counted in solving_, so it lives until the last submission.
  void Run(const Actions& actions) {
    if (actions.finish || actions.write) HandToGrpc(this);
    if (actions.finish) return Finish(*actions.finish);
    WorkerPool* const pool = pool_;
    if (actions.write) StartWrite(&writing_message_);
    for (size_t i = 0; i < actions.submit.size(); ++i) {
      const int c = actions.submit[i];
      if (pool->SubmitContinuation([this, c] { SolveChunk(c); })) continue;
      Actions after;
      {
        std::lock_guard<std::mutex> lock(mu_);
        solving_ -= static_cast<int>(actions.submit.size() - i);
        RecordError(PoolStopping());
        after = NextActionsLocked();
      }
      return Run(after);
    }
  }

  // Why the call must stop before target `index` (OK: carry on).
  absl::Status StopReason(int index) const {
    if (context_->deadline() < std::chrono::system_clock::now()) {
      return absl::DeadlineExceededError(
          absl::StrCat("deadline passed before target ", index, " of ", plan_.targets));
    }
    if (cancelled_.load() || context_->IsCancelled()) {
      return absl::CancelledError(
          absl::StrCat("cancelled before target ", index, " of ", plan_.targets));
    }
    if (failed_.load()) return absl::AbortedError("the call already failed");  // not sent
    return absl::OkStatus();
  }

  grpc::CallbackServerContext* const context_ = nullptr;
  WorkerPool* const pool_ = nullptr;
  Metrics* const metrics_ = nullptr;
  const BatchPlan plan_;
  const int chunk_ = 1;
  const int chunks_ = 0;
  const int max_ahead_;
  int next_submit_ ABSL_GUARDED_BY(mu_) = 0;  // the next chunk to hand to the pool
  int next_write_ ABSL_GUARDED_BY(mu_) = 0;   // the next chunk to write
  int solving_ ABSL_GUARDED_BY(mu_) = 0;      // chunks submitted and not yet done
  std::map<int, v1::SolveBatchResponse> parked_ ABSL_GUARDED_BY(mu_);  // solved, not written
};

absl::Status CheckBatchSize(const v1::SolveBatchRequest& request, const KinematicsLimits& limits) {
  if (request.targets_size() < 1 || request.targets_size() > limits.max_batch_targets) {
    return FieldViolation("targets",
                          absl::StrCat("needs 1 to ", limits.max_batch_targets,
                                       " targets (--max_batch_targets), got ",
                                       request.targets_size()));
  }
  if (request.chunk_size() < 0 || request.chunk_size() > kMaxChunk) {
    return FieldViolation("chunk_size", absl::StrCat("must be between 0 (default ", kDefaultChunk,
                                                     ") and ", kMaxChunk, ", got ",
                                                     request.chunk_size()));
  }
  return absl::OkStatus();
}

}  // namespace

grpc::ServerWriteReactor<v1::SolveBatchResponse>* StartSolveBatch(
    grpc::CallbackServerContext* context, const v1::SolveBatchRequest& request, WorkerPool& pool,
    ModelStore& store, const ModelLimits& model_limits, const KinematicsLimits& limits,
    Metrics& metrics) {
  if (absl::Status s = CheckBatchSize(request, limits); !s.ok()) return new BatchReactor(s);
  absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(request.arm(), "arm", store);
  if (!arm.ok()) return new BatchReactor(arm.status());
  absl::StatusOr<BatchPlan> plan =
      NewArmEngine(*std::move(arm), store, model_limits, limits)->PlanBatch(context, request);
  if (!plan.ok()) return new BatchReactor(plan.status());
  const int chunk = request.chunk_size() == 0 ? kDefaultChunk : request.chunk_size();
  return new BatchReactor(context, &pool, &metrics, *std::move(plan), chunk);
}

}  // namespace ikd::server
