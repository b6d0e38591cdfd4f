#include "kinematics_service.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"

namespace ikd::server {
namespace {

std::string Below(const std::string& prefix, const std::string& field) {
  return prefix.empty() ? field : absl::StrCat(prefix, ".", field);
}

// Everything one call solves with. The tracker keeps pointers to arm and scene, so they live
// here, on the heap, for the whole call.
struct IkProblem {
  std::unique_ptr<ik::Arm> arm;
  std::unique_ptr<ik::Scene> scene;  // null: free space
  ik::IkOptions options;
  std::optional<Eigen::Matrix3Xd> initial_sites;  // null: home

  Eigen::Vector3d InitialHand() const {
    if (initial_sites) return initial_sites->col(arm->hand());
    return arm->HomeSites().col(arm->hand());
  }
};

// The fields every request has (Solve, SolveTrajectory, TrackConfig), at request path
// `prefix` ("" or "config").
absl::StatusOr<std::shared_ptr<IkProblem>> MakeProblem(
    const v1::ArmRef& arm_ref, const v1::SceneRef& scene_ref, const v1::IkOptions& options,
    const PositionList& positions, const std::string& prefix, const std::string& positions_field,
    ModelStore& store, const ModelLimits& limits) {
  auto problem = std::make_shared<IkProblem>();
  absl::StatusOr<ik::Arm> arm = ArmFromRef(arm_ref, Below(prefix, "arm"), store, limits);
  if (!arm.ok()) return arm.status();
  problem->arm = std::make_unique<ik::Arm>(*std::move(arm));
  absl::StatusOr<std::unique_ptr<ik::Scene>> scene =
      SceneFromRef(scene_ref, Below(prefix, "scene"), store, limits);
  if (!scene.ok()) return scene.status();
  problem->scene = *std::move(scene);
  absl::StatusOr<ik::IkOptions> ik_options = IkOptionsFromProto(options, Below(prefix, "options"));
  if (!ik_options.ok()) return ik_options.status();
  problem->options = *ik_options;
  const std::string positions_path = Below(prefix, positions_field);
  absl::StatusOr<std::optional<Eigen::Matrix3Xd>> sites =
      SitesFromPositions(*problem->arm, positions, positions_path);
  if (!sites.ok()) return sites.status();
  problem->initial_sites = *std::move(sites);
  return problem;
}

absl::StatusOr<ik::ArmTracker> NewTracker(const IkProblem& problem,
                                          const std::string& positions_path) {
  absl::StatusOr<ik::ArmTracker> tracker = ik::ArmTracker::Create(
      *problem.arm, problem.scene.get(), problem.options, problem.initial_sites);
  if (!tracker.ok()) return AtRequestPath(tracker.status(), positions_path);
  return tracker;
}

// A sample runs to its end once started (cancellation is checked between samples), so the hand
// sub-steps of one move are bounded.
absl::Status CheckSubSteps(const IkProblem& problem, const Eigen::Vector3d& from,
                           const Eigen::Vector3d& to, int64_t limit,
                           const std::string& options_path) {
  const int64_t substeps = SubStepsForMove(*problem.arm, problem.options, from, to);
  if (substeps <= limit) return absl::OkStatus();
  return FieldViolation(
      Below(options_path, "max_step_fraction"),
      absl::StrCat(problem.options.max_step_fraction, " needs ", substeps,
                   " hand sub-steps for a move of ", (to - from).norm(),
                   " m; the server allows at most ", limit,
                   " per sample: raise it (or sample the trajectory more finely)"));
}

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

// The longest hand move between consecutive samples (from the start configuration to the
// first sample, then sample to sample) against the sub-step limit.
absl::Status CheckTrajectorySubSteps(const IkProblem& problem, const ik::Trajectory& trajectory,
                                     const std::vector<double>& times, int64_t limit) {
  Eigen::Vector3d from = problem.InitialHand();
  for (double t : times) {
    const Eigen::Vector3d to = trajectory.PositionAt(t);
    if (absl::Status s = CheckSubSteps(problem, from, to, limit, "options"); !s.ok()) return s;
    from = to;
  }
  return absl::OkStatus();
}

void SetJointNames(const ik::Arm& arm, google::protobuf::RepeatedPtrField<std::string>* out) {
  for (std::string& name : JointNames(arm)) out->Add(std::move(name));
}

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
class TrajectoryReactor final : public grpc::ServerWriteReactor<v1::SolveTrajectoryResponse> {
 public:
  TrajectoryReactor(grpc::CallbackServerContext* context, WorkerPool* pool,
                    std::shared_ptr<IkProblem> problem, ik::ArmTracker tracker,
                    ik::Trajectory trajectory, std::vector<double> times)
      : context_(context),
        pool_(pool),
        problem_(std::move(problem)),
        tracker_(std::move(tracker)),
        trajectory_(std::move(trajectory)),
        times_(std::move(times)) {
    solving_ = true;
    // A new call is admitted only if the pool has room; later samples are continuations.
    if (!pool_->TrySubmit([this] { SolveNext(); })) {
      solving_ = false;
      error_ = PoolFull();
      FinishIfIdle();
    }
  }
  // A call refused before any work.
  explicit TrajectoryReactor(const absl::Status& error) : error_(error) { FinishIfIdle(); }

  void OnWriteDone(bool ok) override {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) RecordError(absl::CancelledError("the stream broke (client gone or cancelled)"));
      if (!error_ && parked_) actions = WriteParkedLocked();
      actions.finish = FinishStatusLocked();
    }
    Run(actions);
  }
  void OnCancel() override { cancelled_.store(true); }
  void OnDone() override { delete this; }

 private:
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
      absl::MutexLock lock(&mu_);
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

  // The message for sample next_ (or the summary); runs on one worker at a time.
  absl::StatusOr<v1::SolveTrajectoryResponse> NextMessage() {
    if (absl::Status stop = StopReason(); !stop.ok()) return stop;
    v1::SolveTrajectoryResponse message;
    if (next_ == times_.size()) {
      *message.mutable_summary() = summary_.Summary(solve_seconds_);
      return message;
    }
    const double t = times_[next_];
    const Eigen::Vector3d target = trajectory_->PositionAt(t);
    const absl::Time start = absl::Now();
    absl::StatusOr<ik::IkStep> step = tracker_->StepTo(target, t);
    solve_seconds_ += absl::ToDoubleSeconds(absl::Now() - start);
    if (!step.ok()) return step.status();
    v1::JointState state = JointStateFromStep(*step, target, next_ == 0 ? nullptr : &previous_);
    summary_.Add(state);
    previous_ = state;
    if (next_ == 0) SetJointNames(*problem_->arm, message.mutable_joint_names());
    *message.mutable_sample() = std::move(state);
    ++next_;
    return message;
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

  void RecordError(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!error_) error_ = status;
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
      absl::MutexLock lock(&mu_);
      status = FinishStatusLocked();
    }
    if (status) Finish(*status);
  }

  void Run(const Actions& actions) {
    if (actions.finish) return Finish(*actions.finish);
    if (actions.write) StartWrite(&writing_message_);
    if (actions.solve && !pool_->SubmitContinuation([this] { SolveNext(); })) {
      Actions after;
      {
        absl::MutexLock lock(&mu_);
        solving_ = false;
        RecordError(PoolStopping());
        after.finish = FinishStatusLocked();
      }
      if (after.finish) Finish(*after.finish);
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
  std::shared_ptr<IkProblem> problem_;
  // Touched only by the one SolveNext in flight.
  std::optional<ik::ArmTracker> tracker_;
  std::optional<ik::Trajectory> trajectory_;
  std::vector<double> times_;
  size_t next_ = 0;  // the sample to solve next
  double solve_seconds_ = 0.0;
  SummaryBuilder summary_;
  v1::JointState previous_;  // the last sample solved, for finite-difference velocities
  std::atomic<bool> cancelled_{false};

  absl::Mutex mu_;
  bool solving_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool summary_written_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<absl::Status> error_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::SolveTrajectoryResponse> parked_ ABSL_GUARDED_BY(mu_);
  v1::SolveTrajectoryResponse writing_message_;  // owned by gRPC while writing_
};

// A Track stream, strictly one thing at a time: read -> (configure | edit the scene | solve on
// the pool -> write) -> read ... At most one of a read, a solve and a write is pending, and the
// party completing it is the only one that may go on or Finish (as in TrajectoryReactor). A
// cancellation makes the pending read or write fail, which finishes the call; a solve running
// at that moment is one target's worth of work.
class TrackReactor final : public grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse> {
 public:
  TrackReactor(ModelStore* store, WorkerPool* pool, const ModelLimits& model_limits,
               const KinematicsLimits& limits)
      : store_(store), pool_(pool), model_limits_(model_limits), limits_(limits) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return End(absl::OkStatus());  // the client half-closed (or is gone)
    if (absl::Status status = Handle(); !status.ok()) End(status);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return End(absl::CancelledError("the stream broke (client gone or cancelled)"));
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  // Acts on request_ and hands the call on (StartRead or a pool task); an error is returned
  // without handing on, and ends the stream.
  absl::Status Handle() {
    if (tracker_ == nullptr) return Configure();
    switch (request_.request_case()) {
      case v1::TrackRequest::kTarget:
        return SubmitSolve();
      case v1::TrackRequest::kSceneUpdate:
        return UpdateScene();
      case v1::TrackRequest::kConfig:
        return FieldViolation("config", "only the first message may carry a config");
      default:
        return FieldViolation("request", "after the config: a target or a scene_update");
    }
  }

  absl::Status Configure() {
    if (!request_.has_config()) {
      return FieldViolation("config", "the first message must carry a config");
    }
    const v1::TrackConfig& config = request_.config();
    absl::StatusOr<std::shared_ptr<IkProblem>> problem =
        MakeProblem(config.arm(), config.scene(), config.options(), config.initial_positions(),
                    "config", "initial_positions", *store_, model_limits_);
    if (!problem.ok()) return problem.status();
    problem_ = *std::move(problem);
    // Always a scene (maybe empty), so that scene updates have somewhere to go.
    if (problem_->scene == nullptr) {
      absl::StatusOr<ik::Scene> empty = ik::Scene::Create({});
      if (!empty.ok()) return empty.status();
      problem_->scene = std::make_unique<ik::Scene>(*std::move(empty));
    }
    absl::StatusOr<ik::ArmTracker> tracker = NewTracker(*problem_, "config.initial_positions");
    if (!tracker.ok()) return tracker.status();
    tracker_ = std::make_unique<ik::ArmTracker>(*std::move(tracker));
    StartRead(&request_);
    return absl::OkStatus();
  }

  // Edits the stream's private scene copy; the tracker sees it from the next target on.
  absl::Status UpdateScene() {
    v1::EditSceneRequest edit;
    *edit.mutable_operations() = request_.scene_update().operations();
    absl::Status valid = ValidateOperations(edit, model_limits_);
    if (!valid.ok()) return AtRequestPath(valid, "scene_update");
    ik::Scene edited = *problem_->scene;  // on error the copy is discarded
    absl::Status applied = ApplyOperations(edit, "the stream's scene", model_limits_, edited);
    if (!applied.ok()) return AtRequestPath(applied, "scene_update");
    *problem_->scene = std::move(edited);
    StartRead(&request_);
    return absl::OkStatus();
  }

  absl::Status SubmitSolve() {
    const v1::TrackTarget& target = request_.target();
    absl::StatusOr<Eigen::Vector3d> position =
        TargetFromProto(target.position(), "target.position");
    if (!position.ok()) return position.status();
    if (!std::isfinite(target.time()) || (solved_ > 0 && target.time() < last_time_)) {
      return FieldViolation("target.time",
                            absl::StrCat("must be finite and >= the previous target's time ",
                                         last_time_, ", got ", target.time()));
    }
    // No solve is running (strict sequencing), so the tracker's hand can be read here.
    const Eigen::Vector3d hand = tracker_->sites().col(problem_->arm->hand());
    absl::Status bounded = CheckSubSteps(*problem_, hand, *position,
                                         limits_.max_substeps_per_sample, "config.options");
    if (!bounded.ok()) return bounded;
    last_time_ = target.time();
    auto solve = [this, p = *position, t = target.time()] { SolveAndWrite(p, t); };
    // The first target admits the stream to the pool; a running controller is not refused
    // halfway, so later targets are continuations.
    return SubmitStreamTask(*pool_, solved_ == 0, std::move(solve));
  }

  // On a worker.
  void SolveAndWrite(const Eigen::Vector3d& target, double time) {
    absl::StatusOr<ik::IkStep> step = tracker_->StepTo(target, time);
    if (!step.ok()) return End(step.status());
    v1::JointState state =
        JointStateFromStep(*step, target, solved_ == 0 ? nullptr : &response_.state());
    response_.Clear();
    if (solved_ == 0) SetJointNames(*problem_->arm, response_.mutable_joint_names());
    *response_.mutable_state() = std::move(state);
    ++solved_;
    StartWrite(&response_);  // hands the call to gRPC: nothing may follow
  }

  void End(const absl::Status& status) {
    if (finished_.exchange(true)) return;  // unreachable by the ownership rule; never twice
    Finish(ToGrpcStatus(status));
  }

  ModelStore* const store_;
  WorkerPool* const pool_;
  const ModelLimits model_limits_;
  const KinematicsLimits limits_;
  std::shared_ptr<IkProblem> problem_;
  std::unique_ptr<ik::ArmTracker> tracker_;  // null until configured
  int64_t solved_ = 0;
  double last_time_ = 0.0;
  std::atomic<bool> finished_{false};
  v1::TrackRequest request_;
  v1::TrackResponse response_;  // the message being written (holds the last state)
};

}  // namespace

KinematicsServiceImpl::KinematicsServiceImpl(ModelStore* store, WorkerPool* pool,
                                             ModelLimits model_limits, KinematicsLimits limits)
    : store_(store), pool_(pool), model_limits_(model_limits), limits_(limits) {}

grpc::ServerUnaryReactor* KinematicsServiceImpl::Solve(grpc::CallbackServerContext* context,
                                                       const v1::SolveRequest* request,
                                                       v1::SolveResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(request->arm(), request->scene(), request->options(),
                  request->seed_positions(), "", "seed_positions", *store_, model_limits_);
  if (!problem.ok()) {
    reactor->Finish(ToGrpcStatus(problem.status()));
    return reactor;
  }
  absl::StatusOr<Eigen::Vector3d> target = TargetFromProto(request->target(), "target");
  absl::Status valid = target.status();
  if (valid.ok()) {
    valid = CheckSubSteps(**problem, (*problem)->InitialHand(), *target,
                          limits_.max_substeps_per_sample, "options");
  }
  if (!valid.ok()) {
    reactor->Finish(ToGrpcStatus(valid));
    return reactor;
  }
  // The default reactor may be finished from any thread, once: by this task or, when the pool
  // refuses it, right below.
  auto solve = [context, reactor, response, problem = *problem, target = *target] {
    if (context->IsCancelled()) {
      return reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    absl::StatusOr<ik::IkStep> step = ik::SolvePose(*problem->arm, problem->scene.get(), target,
                                                    problem->options, problem->initial_sites);
    if (!step.ok()) return reactor->Finish(ToGrpcStatus(step.status()));
    SetJointNames(*problem->arm, response->mutable_joint_names());
    *response->mutable_state() = JointStateFromStep(*step, target, nullptr);
    reactor->Finish(grpc::Status::OK);
  };
  if (!pool_->TrySubmit(std::move(solve))) reactor->Finish(ToGrpcStatus(PoolFull()));
  return reactor;
}

grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* KinematicsServiceImpl::SolveTrajectory(
    grpc::CallbackServerContext* context, const v1::SolveTrajectoryRequest* request) {
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(request->arm(), request->scene(), request->options(),
                  request->initial_positions(), "", "initial_positions", *store_, model_limits_);
  if (!problem.ok()) return new TrajectoryReactor(problem.status());
  absl::StatusOr<ik::Trajectory> trajectory =
      TrajectoryFromProto(request->trajectory(), "trajectory");
  if (!trajectory.ok()) return new TrajectoryReactor(trajectory.status());
  absl::StatusOr<std::vector<double>> times =
      SampleTimes(*trajectory, request->sample_period(), limits_.max_samples);
  if (!times.ok()) return new TrajectoryReactor(times.status());
  absl::Status bounded =
      CheckTrajectorySubSteps(**problem, *trajectory, *times, limits_.max_substeps_per_sample);
  if (!bounded.ok()) return new TrajectoryReactor(bounded);
  absl::StatusOr<ik::ArmTracker> tracker = NewTracker(**problem, "initial_positions");
  if (!tracker.ok()) return new TrajectoryReactor(tracker.status());
  return new TrajectoryReactor(context, pool_, *std::move(problem), *std::move(tracker),
                               *std::move(trajectory), *std::move(times));
}

grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* KinematicsServiceImpl::Track(
    grpc::CallbackServerContext* /*context*/) {
  return new TrackReactor(store_, pool_, model_limits_, limits_);
}

}  // namespace ikd::server
