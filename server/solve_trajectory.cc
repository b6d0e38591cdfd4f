#include "solve_trajectory.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "arm_engine.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ik_problem.h"
#include "ikd/ik/trajectory.h"
#include "model_refs.h"
#include "stream_handoff.h"
#include "write_stream.h"

namespace ikd::server {
namespace {

absl::StatusOr<std::vector<double>> SampleTimes(const ik::Trajectory& trajectory, double period,
                                                int max_samples) {
  if (!std::isfinite(period) || period <= 0) {
    return FieldViolation("sample_period", absl::StrCat("must be finite and > 0, got ", period));
  }
  if (trajectory.duration() / period + 1 > max_samples) {
    return FieldViolation("sample_period",
                          absl::StrCat(period, " gives more than the server's limit of ",
                                       max_samples, " samples for a ", trajectory.duration(),
                                       " s trajectory"));
  }
  absl::StatusOr<std::vector<double>> times = trajectory.SampleTimes(period);
  if (!times.ok()) return AtRequestPath(times.status(), "sample_period");
  return times;
}

constexpr int kMaxSamplesPerMessage = 1000;
// A batch stops growing past this size (gRPC's default limit on a received message is 4 MB).
constexpr size_t kMaxBatchBytes = size_t{1} << 20;

// A SolveTrajectory stream, pipelined one message deep: while gRPC writes sample k, a worker
// solves sample k+1 and parks it; when the write completes the parked message goes out and the
// solve of k+2 starts. So solving and writing overlap (the per-message thread hand-offs no
// longer add to the solve time), and the server is never more than one message ahead of the
// client: a slow reader still slows its own solve. All state changes happen under mu_; the
// gRPC calls that hand the stream on (StartWrite, Finish) and pool submissions are made after
// releasing it. Finish happens exactly once, when neither a write nor a solve is in flight and
// either the summary was written or an error (deadline, cancellation, broken stream, solver
// failure) was recorded; OnDone (delete) comes after it. OnCancel only raises a flag, read by
// the worker before each sample (a cancelled write also fails at once).
class TrajectoryReactor final
    : public PooledWriteStream<TrajectoryReactor, v1::SolveTrajectoryResponse> {
 public:
  TrajectoryReactor(grpc::CallbackServerContext* context, WorkerPool* pool, Metrics* metrics,
                    TrajectoryPlan plan, std::vector<double> times, int samples_per_message)
      : context_(context),
        pool_(pool),
        metrics_(metrics),
        solve_(std::move(plan.solve)),
        complete_summary_(std::move(plan.complete_summary)),
        joint_names_(std::move(plan.joint_names)),
        times_(std::move(times)),
        batch_(samples_per_message) {
    solving_ = true;
    // A new call is admitted only if the pool has room; later samples are continuations.
    if (!pool_->TrySubmit([this] { SolveNext(); })) {
      solving_ = false;
      error_ = PoolFull();
      FinishIfIdle();
    }
  }
  // A call refused before any work.
  explicit TrajectoryReactor(const absl::Status& error) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      RecordError(error);
    }
    FinishIfIdle();
  }

 private:
  friend class PooledWriteStream<TrajectoryReactor, v1::SolveTrajectoryResponse>;

  // What to do once mu_ is released.
  struct Actions {
    bool write = false;        // StartWrite(&writing_message_)
    bool solve = false;        // submit SolveNext
    std::optional<grpc::Status> finish;
  };

  // On a worker: solves the next sample (or builds the summary after the last one) and writes
  // it at once if the stream is free, else parks it for OnWriteDone.
  void SolveNext() {
    absl::StatusOr<v1::SolveTrajectoryResponse> message = NextMessage();
    Actions actions;
    {
      std::lock_guard<std::mutex> lock(mu_);
      solving_ = false;
      if (!message.ok()) {
        RecordError(message.status());
      } else if (!error_) {
        parked_ = *std::move(message);
        if (!writing_) actions = WriteParkedLocked();
      }
      actions.finish = FinishStatusLocked();
    }
    Run(actions);
  }

  // The message for sample next_, or for the batch starting there (or the summary); runs on
  // one worker at a time. A batch cut short by a stop or a solver error goes out first; the
  // error ends the stream with the next message.
  absl::StatusOr<v1::SolveTrajectoryResponse> NextMessage() {
    if (!deferred_.ok()) return deferred_;
    if (absl::Status stop = StopReason(); !stop.ok()) return stop;
    v1::SolveTrajectoryResponse message;
    if (next_ == times_.size()) {
      *message.mutable_summary() = summary_.Summary(solve_seconds_);
      if (complete_summary_) complete_summary_(*message.mutable_summary());
      return message;
    }
    if (next_ == 0) SetJointNames(joint_names_, message.mutable_joint_names());
    if (batch_ <= 1) {
      absl::StatusOr<v1::JointState> state = SolveSample();
      if (!state.ok()) return state.status();
      *message.mutable_sample() = *std::move(state);
      return message;
    }
    size_t bytes = 0;
    while (message.samples_size() < batch_ && next_ < times_.size() && bytes < kMaxBatchBytes) {
      if (message.samples_size() > 0) {
        deferred_ = StopReason();
        if (!deferred_.ok()) break;
      }
      absl::StatusOr<v1::JointState> state = SolveSample();
      if (!state.ok()) {
        if (message.samples_size() == 0) return state.status();
        deferred_ = state.status();
        break;
      }
      bytes += state->ByteSizeLong();
      *message.add_samples() = *std::move(state);
    }
    return message;
  }

  // Solves sample next_ and counts it in.
  absl::StatusOr<v1::JointState> SolveSample() {
    const absl::Time start = absl::Now();
    absl::StatusOr<v1::JointState> state = solve_(times_[next_], next_ == 0 ? nullptr : &previous_);
    solve_seconds_ += absl::ToDoubleSeconds(absl::Now() - start);
    if (!state.ok()) return state.status();
    RecordIkStep(*metrics_, *state);
    summary_.Add(*state);
    previous_ = *state;
    ++next_;
    return state;
  }

  // Moves the parked message into the write slot and, unless it is the summary, starts the
  // solve of the one after (one message ahead at most).
  Actions WriteParkedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Actions actions;
    writing_message_ = *std::move(parked_);
    parked_.reset();
    writing_ = actions.write = true;
    summary_written_ = writing_message_.has_summary();
    if (!summary_written_ && !solving_) solving_ = actions.solve = true;
    return actions;
  }

  // After a write: the parked message goes out next, else the call may finish.
  Actions ActionsAfterWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Actions actions;
    if (!error_ && parked_) actions = WriteParkedLocked();
    actions.finish = FinishStatusLocked();
    return actions;
  }

  // The status to Finish with, once nothing is in flight; nothing if the stream goes on.
  std::optional<grpc::Status> FinishStatusLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (solving_ || writing_ || finished_) return std::nullopt;
    if (!error_ && !summary_written_) return std::nullopt;
    finished_ = true;
    return ToGrpcStatus(error_.value_or(absl::OkStatus()));
  }

  void FinishIfIdle() {
    std::optional<grpc::Status> status;
    {
      std::lock_guard<std::mutex> lock(mu_);
      status = FinishStatusLocked();
    }
    if (status) {
      HandToGrpc(this);
      Finish(*status);
    }
  }

  void Run(const Actions& actions) {
    if (actions.finish || actions.write) HandToGrpc(this);
    if (actions.finish) return Finish(*actions.finish);
    if (actions.write) StartWrite(&writing_message_);
    if (actions.solve && !pool_->SubmitContinuation([this] { SolveNext(); })) {
      Actions after;
      {
        std::lock_guard<std::mutex> lock(mu_);
        solving_ = false;
        RecordError(PoolStopping());
        after.finish = FinishStatusLocked();
      }
      if (after.finish) {
        HandToGrpc(this);
        Finish(*after.finish);
      }
    }
  }

  // Why the stream must stop now (OK: carry on).
  absl::Status StopReason() const {
    if (context_->deadline() < std::chrono::system_clock::now()) {
      return absl::DeadlineExceededError(absl::StrCat("deadline passed after ", next_, " samples"));
    }
    if (cancelled_.load() || context_->IsCancelled()) {
      return absl::CancelledError(absl::StrCat("cancelled after ", next_, " samples"));
    }
    return absl::OkStatus();
  }

  grpc::CallbackServerContext* const context_ = nullptr;
  WorkerPool* const pool_ = nullptr;
  Metrics* const metrics_ = nullptr;
  // Touched only by the one SolveNext in flight.
  SampleSolver solve_;
  std::function<void(v1::TrajectorySummary&)> complete_summary_;
  std::vector<std::string> joint_names_;
  std::vector<double> times_;
  const int batch_ = 1;       // samples per message
  absl::Status deferred_;     // ends the stream after the batch it cut short
  size_t next_ = 0;  // the sample to solve next
  double solve_seconds_ = 0.0;
  SummaryBuilder summary_;
  v1::JointState previous_;  // the last sample solved, for finite-difference velocities

  bool solving_ ABSL_GUARDED_BY(mu_) = false;
  bool summary_written_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<v1::SolveTrajectoryResponse> parked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* StartSolveTrajectory(
    grpc::CallbackServerContext* context, const v1::SolveTrajectoryRequest& request,
    WorkerPool& pool, ModelStore& store, const ModelLimits& model_limits,
    const KinematicsLimits& limits, Metrics& metrics) {
  absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(request.arm(), "arm", store);
  if (!arm.ok()) return new TrajectoryReactor(arm.status());
  absl::StatusOr<ik::Trajectory> trajectory =
      TrajectoryFromProto(request.trajectory(), "trajectory");
  if (!trajectory.ok()) return new TrajectoryReactor(trajectory.status());
  absl::StatusOr<std::vector<double>> times =
      SampleTimes(*trajectory, request.sample_period(), limits.max_samples);
  if (!times.ok()) return new TrajectoryReactor(times.status());
  if (request.samples_per_message() < 0 || request.samples_per_message() > kMaxSamplesPerMessage) {
    return new TrajectoryReactor(FieldViolation(
        "samples_per_message", absl::StrCat("must be in [0, ", kMaxSamplesPerMessage, "], got ",
                                            request.samples_per_message())));
  }
  absl::StatusOr<TrajectoryPlan> plan =
      NewArmEngine(*std::move(arm), store, model_limits, limits)
          ->PlanTrajectory(context, request, *std::move(trajectory), *times);
  if (!plan.ok()) return new TrajectoryReactor(plan.status());
  return new TrajectoryReactor(context, &pool, &metrics, std::move(*plan), *std::move(times),
                               request.samples_per_message());
}

}  // namespace ikd::server
