#include "kinematics_service.h"

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
#include "errors.h"
#include "ik_problem.h"
#include "solve_batch.h"
#include "stream_handoff.h"
#include "ik_conversions.h"
#include "ikd/ik/path.h"
#include "ikd/ik/rate_limit.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"
#include "ikd/robot/robot_branches.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/robot/robot_path.h"
#include "ikd/robot/robot_rate_limit.h"
#include "robot_cache.h"
#include "robot_conversions.h"

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


// Solves the trajectory sample at time t; `previous` is the last sample's state (null first).
// Chain arms and industrial arms each bring one (SolveTrajectory below).
using SampleSolver =
    std::function<absl::StatusOr<v1::JointState>(double t, const v1::JointState* previous)>;

// What a TrajectoryReactor runs: the sample solver and the joint names of the first message.
struct TrajectoryPlan {
  SampleSolver solve;
  std::vector<std::string> joint_names;
  // Adds what only the plan knows to the summary (may be empty).
  std::function<void(v1::TrajectorySummary&)> complete_summary;
};

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
class TrajectoryReactor final : public grpc::ServerWriteReactor<v1::SolveTrajectoryResponse> {
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
  explicit TrajectoryReactor(const absl::Status& error) : error_(error) { FinishIfIdle(); }

  void OnWriteDone(bool ok) override {
    TakeFromGrpc(this);
    Actions actions;
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (!ok) RecordError(absl::CancelledError("the stream broke (client gone or cancelled)"));
      if (!error_ && parked_) actions = WriteParkedLocked();
      actions.finish = FinishStatusLocked();
    }
    Run(actions);
  }
  void OnCancel() override { cancelled_.store(true); }
  void OnDone() override {
    TakeFromGrpc(this);
    delete this;
  }

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
  std::atomic<bool> cancelled_{false};

  // std::mutex rather than absl::Mutex: Debian's Abseil is not TSan-instrumented, pthread is.
  std::mutex mu_;
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
               const KinematicsLimits& limits, Metrics* metrics)
      : store_(store),
        pool_(pool),
        model_limits_(model_limits),
        limits_(limits),
        metrics_(metrics) {
    HandToGrpc(this);
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    TakeFromGrpc(this);
    if (!ok) return End(absl::OkStatus());  // the client half-closed (or is gone)
    if (absl::Status status = Handle(); !status.ok()) End(status);
  }
  void OnWriteDone(bool ok) override {
    TakeFromGrpc(this);
    if (!ok) return End(absl::CancelledError("the stream broke (client gone or cancelled)"));
    HandToGrpc(this);
    StartRead(&request_);
  }
  void OnDone() override {
    TakeFromGrpc(this);
    delete this;
  }

 private:
  // Acts on request_ and hands the call on (StartRead or a pool task); an error is returned
  // without handing on, and ends the stream.
  absl::Status Handle() {
    if (tracker_ == nullptr && robot_tracker_ == nullptr) return Configure();
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
    absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(config.arm(), "config.arm", *store_);
    if (!arm.ok()) return arm.status();
    if (arm->spec.has_robot()) return ConfigureRobot(*arm, config);
    absl::StatusOr<std::shared_ptr<IkProblem>> problem =
        MakeProblem(*arm, config.scene(), config.options(), config.initial_positions(), "config",
                    "initial_positions", *store_, model_limits_);
    if (!problem.ok()) return problem.status();
    problem_ = *std::move(problem);
    // Always a scene (maybe empty), so that scene updates have somewhere to go.
    if (problem_->scene == nullptr) {
      absl::StatusOr<ik::Scene> empty = ik::Scene::Create({});
      if (!empty.ok()) return empty.status();
      problem_->scene = std::make_unique<ik::Scene>(*std::move(empty));
    }
    // Live answers keep the arm's servo limits relative to the previous answer (rate_limit.h).
    absl::StatusOr<ik::RateLimitedTracker> tracker = ik::RateLimitedTracker::Create(
        *problem_->arm, problem_->scene.get(), problem_->options, problem_->initial_sites);
    if (!tracker.ok()) return AtRequestPath(tracker.status(), "config.initial_positions");
    tracker_ = std::make_unique<ik::RateLimitedTracker>(*std::move(tracker));
    joint_names_ = JointNames(*problem_->arm);
    stream_scene_ = problem_->scene.get();
    HandToGrpc(this);
    StartRead(&request_);
    return absl::OkStatus();
  }

  absl::Status ConfigureRobot(const ResolvedArmSpec& arm, const v1::TrackConfig& config) {
    absl::StatusOr<std::shared_ptr<RobotProblem>> problem = MakeRobotProblem(
        arm, config.scene(), config.options(), config.initial_positions(), "config",
        "initial_positions", *store_, model_limits_);
    if (!problem.ok()) return problem.status();
    robot_problem_ = *std::move(problem);
    // Always a scene (maybe empty), so that scene updates have somewhere to go.
    if (robot_problem_->scene == nullptr) {
      absl::StatusOr<ik::Scene> empty = ik::Scene::Create({});
      if (!empty.ok()) return empty.status();
      robot_problem_->scene = std::make_unique<ik::Scene>(*std::move(empty));
    }
    stream_scene_ = robot_problem_->scene.get();
    absl::StatusOr<robot::RateLimitedRobotTracker> tracker = robot::RateLimitedRobotTracker::Create(
        *robot_problem_->robot, PathOptions(robot_problem_->options), robot_problem_->initial,
        robot_problem_->scene.get());
    if (!tracker.ok()) return AtRequestPath(tracker.status(), "config");
    robot_tracker_ = std::make_unique<robot::RateLimitedRobotTracker>(*std::move(tracker));
    joint_names_ = RobotJointNames(*robot_problem_->robot);
    HandToGrpc(this);
    StartRead(&request_);
    return absl::OkStatus();
  }

  // Edits the stream's private scene copy; the tracker sees it from the next target on.
  absl::Status UpdateScene() {
    v1::EditSceneRequest edit;
    *edit.mutable_operations() = request_.scene_update().operations();
    absl::Status valid = ValidateOperations(edit, model_limits_);
    if (!valid.ok()) return AtRequestPath(valid, "scene_update");
    ik::Scene edited = *stream_scene_;  // on error the copy is discarded
    absl::Status applied = ApplyOperations(edit, "the stream's scene", model_limits_, edited);
    if (!applied.ok()) return AtRequestPath(applied, "scene_update");
    *stream_scene_ = std::move(edited);
    HandToGrpc(this);
    StartRead(&request_);
    return absl::OkStatus();
  }

  absl::Status SubmitSolve() {
    const v1::TrackTarget& target = request_.target();
    if (!std::isfinite(target.time()) || (solved_ > 0 && target.time() < last_time_)) {
      return FieldViolation("target.time",
                            absl::StrCat("must be finite and >= the previous target's time ",
                                         last_time_, ", got ", target.time()));
    }
    if (robot_tracker_ != nullptr) return SubmitRobotSolve(target);
    if (absl::Status s = CheckNoOrientation(target.has_orientation(), "target.orientation"); !s.ok()) {
      return s;
    }
    absl::StatusOr<Eigen::Vector3d> position =
        TargetFromProto(target.position(), "target.position");
    if (!position.ok()) return position.status();
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

  absl::Status SubmitRobotSolve(const v1::TrackTarget& target) {
    absl::StatusOr<robot::ToolTarget> tool =
        ToolTargetFromProto(target.position(), "target.position", target.has_orientation(),
                            target.orientation(), "target.orientation");
    if (!tool.ok()) return tool.status();
    // A move's work is bounded by the tracker's own step budget (RobotIkOptions::max_steps).
    last_time_ = target.time();
    auto solve = [this, tool = *tool, t = target.time()] {
      // The first target as a single pose (restarts included), as in SolveTrajectory; later
      // ones within the joints' rate limits from the last answer (robot_rate_limit.h).
      const robot::RobotIkResult result = robot_tracker_->StepTo(tool, t);
      Write(RobotJointState(*robot_problem_->robot, result, tool, t,
                            solved_ == 0 ? nullptr : &response_.state()));
    };
    return SubmitStreamTask(*pool_, solved_ == 0, std::move(solve));
  }

  // On a worker.
  void SolveAndWrite(const Eigen::Vector3d& target, double time) {
    absl::StatusOr<ik::IkStep> step = tracker_->StepTo(target, time);
    if (!step.ok()) return End(step.status());
    Write(JointStateFromStep(*step, target, solved_ == 0 ? nullptr : &response_.state()));
  }

  void Write(absl::StatusOr<v1::JointState> answer) {
    if (!answer.ok()) return End(answer.status());
    v1::JointState& state = *answer;
    RecordIkStep(*metrics_, state);
    response_.Clear();
    if (solved_ == 0) SetJointNames(joint_names_, response_.mutable_joint_names());
    *response_.mutable_state() = std::move(state);
    ++solved_;
    HandToGrpc(this);
    StartWrite(&response_);  // hands the call to gRPC: nothing may follow
  }

  void End(const absl::Status& status) {
    if (finished_.exchange(true)) return;  // unreachable by the ownership rule; never twice
    HandToGrpc(this);
    Finish(ToGrpcStatus(status));
  }

  ModelStore* const store_;
  WorkerPool* const pool_;
  const ModelLimits model_limits_;
  const KinematicsLimits limits_;
  Metrics* const metrics_;
  // Configured: either a chain arm (problem_, tracker_) or an industrial arm (robot_*).
  std::shared_ptr<IkProblem> problem_;
  std::unique_ptr<ik::RateLimitedTracker> tracker_;
  std::shared_ptr<RobotProblem> robot_problem_;
  std::unique_ptr<robot::RateLimitedRobotTracker> robot_tracker_;
  std::vector<std::string> joint_names_;
  ik::Scene* stream_scene_ = nullptr;  // the configured arm's private scene copy
  int64_t solved_ = 0;
  double last_time_ = 0.0;
  std::atomic<bool> finished_{false};
  v1::TrackRequest request_;
  v1::TrackResponse response_;  // the message being written (holds the last state)
};


// Single-pose IK of an industrial arm: continuation from the seed with restarts
// (robot::SolveRobotIk), on the pool like the chain arms' Solve; with max_solutions >= 2 also
// the distinct branches (robot::SolveBranches).
grpc::ServerUnaryReactor* SolveRobot(grpc::CallbackServerContext* context,
                                     const v1::SolveRequest& request, const ResolvedArmSpec& arm,
                                     v1::SolveResponse* response, WorkerPool& pool,
                                     ModelStore& store, const ModelLimits& limits,
                                     Metrics& metrics) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<std::shared_ptr<RobotProblem>> problem =
      MakeRobotProblem(arm, request.scene(), request.options(), request.seed_positions(), "",
                       "seed_positions", store, limits);
  absl::StatusOr<robot::ToolTarget> target =
      problem.ok() ? ToolTargetFromProto(request.target(), "target", request.has_target_orientation(),
                                         request.target_orientation(), "target_orientation")
                   : absl::StatusOr<robot::ToolTarget>(problem.status());
  if (!target.ok()) {
    reactor->Finish(ToGrpcStatus(target.status()));
    return reactor;
  }
  absl::StatusOr<std::optional<robot::BranchOptions>> branches =
      BranchOptionsFromProto(request.max_solutions(), request.max_seed_distance());
  if (!branches.ok()) {
    reactor->Finish(ToGrpcStatus(branches.status()));
    return reactor;
  }
  auto solve = [context, reactor, response, &metrics, problem = *problem, target = *target,
                branches = *branches] {
    if (context->IsCancelled()) {
      return reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    absl::StatusOr<robot::RobotTracker> tracker = robot::RobotTracker::Create(
        *problem->robot, problem->options, problem->initial, problem->scene.get());
    if (!tracker.ok()) return reactor->Finish(ToGrpcStatus(tracker.status()));
    SetJointNames(RobotJointNames(*problem->robot), response->mutable_joint_names());
    const absl::Status solved = SolveRobotPose(
        *problem, *tracker, problem->initial, target, branches,
        [context] { return context->IsCancelled(); }, response->mutable_state(),
        response->mutable_solutions());
    if (!solved.ok()) return reactor->Finish(ToGrpcStatus(solved));
    RecordIkStep(metrics, response->state());
    reactor->Finish(grpc::Status::OK);
  };
  if (!pool.TrySubmit(std::move(solve))) reactor->Finish(ToGrpcStatus(PoolFull()));
  return reactor;
}


// A chain arm's path of up to this many samples is planned as a whole (ik::PlanPath: the
// driver, then the path-level optimizer and the rate check) on the worker that solves the
// first sample; a longer one, or one asked for without optimization, streams from the driver
// sample by sample as each is solved (no rate statuses), so that the memory held and the
// first sample's delay stay bounded (a 10,000-sample plan of a 7-link arm: about 2 s, 3 MB).
constexpr size_t kMaxPlannedSamples = 10000;

// The rate fields of a planned path's summary: ik::PathSummary (chain arms) or
// robot::RobotPathSummary (industrial arms), which name them alike.
template <class Summary>
void SetRateSummary(const Summary& s, v1::TrajectorySummary& summary) {
  summary.set_feasible_time_scaling(s.feasible_time_scaling);
  summary.set_max_velocity_ratio(s.max_velocity_ratio);
  summary.set_max_acceleration_ratio(s.max_acceleration_ratio);
}

struct PlannedArmPath {
  std::optional<ik::PathResult> result;
  size_t next = 0;  // the sample to answer next (the reactor asks in order, one at a time)
};

// The plan's sample solver: the whole path on the first call, then one step per call.
SampleSolver PlannedSamples(grpc::CallbackServerContext* context,
                            std::shared_ptr<IkProblem> problem,
                            std::shared_ptr<ik::Trajectory> path, std::vector<double> times,
                            std::shared_ptr<PlannedArmPath> planned) {
  return [context, problem, planned, path, times = std::move(times)](
             double t, const v1::JointState* previous) -> absl::StatusOr<v1::JointState> {
    if (!planned->result) {
      const ik::StopCheck stop = [context] {
        return context->IsCancelled() || context->deadline() < std::chrono::system_clock::now();
      };
      absl::StatusOr<ik::PathResult> result =
          ik::PlanPath(*problem->arm, problem->scene.get(), *path, times, problem->options,
                       problem->initial_sites, stop);
      if (!result.ok()) return result.status();
      planned->result = *std::move(result);
    }
    const ik::IkStep& step = planned->result->steps.at(planned->next++);
    return JointStateFromStep(step, path->PositionAt(t), previous);
  };
}

// The driver's sample solver, one sample per call.
absl::StatusOr<SampleSolver> DrivenSamples(std::shared_ptr<IkProblem> problem,
                                           std::shared_ptr<ik::Trajectory> path) {
  absl::StatusOr<ik::PathDriver> driver = ik::PathDriver::Create(
      *problem->arm, problem->scene.get(), *path, problem->options, problem->initial_sites);
  if (!driver.ok()) return AtRequestPath(driver.status(), "initial_positions");
  auto shared_driver = std::make_shared<ik::PathDriver>(*std::move(driver));
  return SampleSolver([problem, path, driver = std::move(shared_driver)](
                          double t, const v1::JointState* previous) -> absl::StatusOr<v1::JointState> {
    absl::StatusOr<ik::IkStep> step = driver->StepTo(t);
    if (!step.ok()) return step.status();
    return JointStateFromStep(*step, path->PositionAt(t), previous);
  });
}

absl::StatusOr<TrajectoryPlan> PlanArmTrajectory(grpc::CallbackServerContext* context,
                                                 const v1::SolveTrajectoryRequest& request,
                                                 const ResolvedArmSpec& arm,
                                                 ik::Trajectory trajectory,
                                                 const std::vector<double>& times,
                                                 ModelStore& store, const ModelLimits& model_limits,
                                                 const KinematicsLimits& limits) {
  if (absl::Status s = CheckNoOrientation(request.has_tool_orientation(), "tool_orientation"); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(arm, request.scene(), request.options(), request.initial_positions(), "",
                  "initial_positions", store, model_limits);
  if (!problem.ok()) return problem.status();
  absl::Status bounded =
      CheckTrajectorySubSteps(**problem, trajectory, times, limits.max_substeps_per_sample);
  if (!bounded.ok()) return bounded;
  // The tracker is made here, so that a bad start configuration is refused up front.
  if (absl::StatusOr<ik::ArmTracker> tracker = NewTracker(**problem, "initial_positions");
      !tracker.ok()) {
    return tracker.status();
  }
  auto path = std::make_shared<ik::Trajectory>(std::move(trajectory));
  const std::vector<std::string> names = JointNames(*(*problem)->arm);
  if (times.size() > kMaxPlannedSamples || !(*problem)->options.optimize_path) {
    absl::StatusOr<SampleSolver> driven = DrivenSamples(*problem, path);
    if (!driven.ok()) return driven.status();
    return TrajectoryPlan{*std::move(driven), names, {}};
  }
  auto planned = std::make_shared<PlannedArmPath>();
  auto complete = [planned](v1::TrajectorySummary& summary) {
    if (planned->result) SetRateSummary(planned->result->summary, summary);
  };
  return TrajectoryPlan{PlannedSamples(context, *problem, path, times, planned), names,
                        std::move(complete)};
}

struct PlannedRobotPath {
  std::optional<robot::RobotPathResult> result;
  size_t next = 0;  // the sample to answer next (the reactor asks in order, one at a time)
};

// The tool target of every sample time, the orientation held throughout (or none).
std::vector<robot::ToolTarget> ToolTargets(const ik::Trajectory& path,
                                           const std::vector<double>& times,
                                           const std::optional<Eigen::Quaterniond>& orientation) {
  std::vector<robot::ToolTarget> targets(times.size());
  for (size_t k = 0; k < times.size(); ++k) {
    targets[k].position = path.PositionAt(times[k]);
    targets[k].orientation = orientation;
  }
  return targets;
}

// An industrial arm's path of up to kMaxPlannedSamples samples is planned as a whole
// (robot::PlanRobotPath: least joint motion per step, then the rate check) on the worker that
// solves the first sample; a longer one, or one asked for without optimization, streams sample
// by sample from the same tracker (no acceleration statuses).
SampleSolver PlannedRobotSamples(grpc::CallbackServerContext* context,
                                 std::shared_ptr<RobotProblem> problem,
                                 std::vector<robot::ToolTarget> targets, std::vector<double> times,
                                 std::shared_ptr<PlannedRobotPath> planned) {
  return [context, problem, planned, targets = std::move(targets), times = std::move(times)](
             double t, const v1::JointState* previous) -> absl::StatusOr<v1::JointState> {
    if (!planned->result) {
      const robot::RobotStopCheck stop = [context] {
        return context->IsCancelled() || context->deadline() < std::chrono::system_clock::now();
      };
      absl::StatusOr<robot::RobotPathResult> result =
          robot::PlanRobotPath(*problem->robot, problem->scene.get(), targets, times,
                               problem->options, problem->initial, stop);
      if (!result.ok()) return result.status();
      planned->result = *std::move(result);
    }
    const size_t k = planned->next++;
    return RobotJointState(*problem->robot, planned->result->samples.at(k), targets.at(k), t,
                           previous);
  };
}

absl::StatusOr<TrajectoryPlan> PlanRobotTrajectory(grpc::CallbackServerContext* context,
                                                   const v1::SolveTrajectoryRequest& request,
                                                   const ResolvedArmSpec& arm,
                                                   ik::Trajectory trajectory,
                                                   const std::vector<double>& times,
                                                   ModelStore& store, const ModelLimits& limits) {
  absl::StatusOr<std::shared_ptr<RobotProblem>> problem =
      MakeRobotProblem(arm, request.scene(), request.options(), request.initial_positions(), "",
                       "initial_positions", store, limits);
  if (!problem.ok()) return problem.status();
  // The orientation is checked once; every sample holds it.
  absl::StatusOr<robot::ToolTarget> start =
      ToolTargetFromProto(v1::Vector3(), "trajectory", request.has_tool_orientation(),
                          request.tool_orientation(), "tool_orientation");
  if (!start.ok()) return start.status();
  // The tracker is made here, so that a bad start configuration is refused up front.
  absl::StatusOr<robot::RobotTracker> tracker = robot::RobotTracker::Create(
      *(*problem)->robot, PathOptions((*problem)->options), (*problem)->initial,
      (*problem)->scene.get());
  if (!tracker.ok()) return tracker.status();
  auto path = std::make_shared<ik::Trajectory>(std::move(trajectory));
  const std::vector<std::string> names = RobotJointNames(*(*problem)->robot);
  if (times.size() <= kMaxPlannedSamples && !request.options().no_path_optimization()) {
    auto planned = std::make_shared<PlannedRobotPath>();
    auto complete = [planned](v1::TrajectorySummary& summary) {
      if (planned->result) SetRateSummary(planned->result->summary, summary);
    };
    return TrajectoryPlan{
        PlannedRobotSamples(context, *problem, ToolTargets(*path, times, start->orientation),
                            times, planned),
        names, std::move(complete)};
  }
  auto shared_tracker = std::make_shared<robot::RobotTracker>(*std::move(tracker));
  SampleSolver solve = [problem = *problem, tracker = shared_tracker, path,
                        orientation = start->orientation](
                           double t, const v1::JointState* previous) -> absl::StatusOr<v1::JointState> {
    robot::ToolTarget target;
    target.position = path->PositionAt(t);
    target.orientation = orientation;
    // As robot::PlanRobotPath: the first target is a single-pose solve, later ones continue.
    const robot::RobotIkResult result =
        previous == nullptr ? tracker->Solve(target)
                            : tracker->MoveTo(target, t - previous->time());
    return RobotJointState(*problem->robot, result, target, t, previous);
  };
  return TrajectoryPlan{std::move(solve), names, {}};
}

}  // namespace

KinematicsServiceImpl::KinematicsServiceImpl(ModelStore* store, WorkerPool* pool,
                                             ModelLimits model_limits, KinematicsLimits limits,
                                             Metrics* metrics)
    : store_(store),
      pool_(pool),
      model_limits_(model_limits),
      limits_(limits),
      metrics_(metrics) {}

grpc::ServerUnaryReactor* KinematicsServiceImpl::Solve(grpc::CallbackServerContext* context,
                                                       const v1::SolveRequest* request,
                                                       v1::SolveResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(request->arm(), "arm", *store_);
  if (!arm.ok()) {
    reactor->Finish(ToGrpcStatus(arm.status()));
    return reactor;
  }
  if (arm->spec.has_robot()) {
    return SolveRobot(context, *request, *arm, response, *pool_, *store_, model_limits_,
                      *metrics_);
  }
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(*arm, request->scene(), request->options(), request->seed_positions(), "",
                  "seed_positions", *store_, model_limits_);
  if (!problem.ok()) {
    reactor->Finish(ToGrpcStatus(problem.status()));
    return reactor;
  }
  absl::StatusOr<Eigen::Vector3d> target = TargetFromProto(request->target(), "target");
  absl::Status valid = target.status();
  if (valid.ok()) valid = CheckNoOrientation(request->has_target_orientation(), "target_orientation");
  if (valid.ok() && request->max_solutions() > 1) {
    valid = FieldViolation("max_solutions", "more than one solution is for industrial arms "
                                            "(an arm with a robot spec); a chain arm answers one");
  }
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
  auto solve = [context, reactor, response, metrics = metrics_, problem = *problem,
                target = *target] {
    if (context->IsCancelled()) {
      return reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    absl::StatusOr<v1::JointState> state = SolveChainPose(*problem, problem->initial_sites, target);
    if (!state.ok()) return reactor->Finish(ToGrpcStatus(state.status()));
    SetJointNames(JointNames(*problem->arm), response->mutable_joint_names());
    *response->mutable_state() = *std::move(state);
    RecordIkStep(*metrics, response->state());
    reactor->Finish(grpc::Status::OK);
  };
  if (!pool_->TrySubmit(std::move(solve))) reactor->Finish(ToGrpcStatus(PoolFull()));
  return reactor;
}

grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* KinematicsServiceImpl::SolveTrajectory(
    grpc::CallbackServerContext* context, const v1::SolveTrajectoryRequest* request) {
  absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(request->arm(), "arm", *store_);
  if (!arm.ok()) return new TrajectoryReactor(arm.status());
  absl::StatusOr<ik::Trajectory> trajectory =
      TrajectoryFromProto(request->trajectory(), "trajectory");
  if (!trajectory.ok()) return new TrajectoryReactor(trajectory.status());
  absl::StatusOr<std::vector<double>> times =
      SampleTimes(*trajectory, request->sample_period(), limits_.max_samples);
  if (!times.ok()) return new TrajectoryReactor(times.status());
  if (request->samples_per_message() < 0 || request->samples_per_message() > kMaxSamplesPerMessage) {
    return new TrajectoryReactor(FieldViolation(
        "samples_per_message", absl::StrCat("must be in [0, ", kMaxSamplesPerMessage, "], got ",
                                            request->samples_per_message())));
  }
  absl::StatusOr<TrajectoryPlan> plan =
      arm->spec.has_robot()
          ? PlanRobotTrajectory(context, *request, *arm, *std::move(trajectory), *times, *store_,
                                model_limits_)
          : PlanArmTrajectory(context, *request, *arm, *std::move(trajectory), *times, *store_,
                              model_limits_, limits_);
  if (!plan.ok()) return new TrajectoryReactor(plan.status());
  return new TrajectoryReactor(context, pool_, metrics_, std::move(*plan), *std::move(times),
                               request->samples_per_message());
}

grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* KinematicsServiceImpl::Track(
    grpc::CallbackServerContext* /*context*/) {
  return new TrackReactor(store_, pool_, model_limits_, limits_, metrics_);
}

grpc::ServerWriteReactor<v1::SolveBatchResponse>* KinematicsServiceImpl::SolveBatch(
    grpc::CallbackServerContext* context, const v1::SolveBatchRequest* request) {
  return StartSolveBatch(context, *request, *pool_, *store_, model_limits_, limits_, *metrics_);
}

}  // namespace ikd::server
