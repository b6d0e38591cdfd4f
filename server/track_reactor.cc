#include "track_reactor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "arm_engine.h"
#include "bidi_stream.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ik_problem.h"
#include "model_refs.h"

namespace ikd::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A continuation whose last solve took less than this, and whose move takes no more of the
// tracker's steps than kInlineSteps, is solved on the gRPC thread that read its target: a
// hand-off to a worker and back costs more than such a solve (the 7-link arm's 1.5 us, the
// Panda's 19 us) and, on a loaded machine, queues behind every other stream's
// (docs/service-benchmark.md (e)). Longer solves (the 100-link snake's ~140 us), long moves,
// the first target after a scene edit and a stream's first target (admission, restarts) go
// to the pool, so that no callback thread is held long.
constexpr SteadyClock::duration kInlineSolveLimit = std::chrono::microseconds(50);
constexpr int64_t kInlineSteps = 2;

// A controller's cycle where the config gives none: 1 kHz, the fastest common one.
constexpr double kDefaultPeriod = 1e-3;  // s

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// A target as read: its pose, time, and how old it already was when read (TrackTarget.
// sent_unix_us) at `received`.
struct ReadTarget {
  PoseTarget pose;
  double time = 0.0;
  double age_on_arrival = 0.0;  // s
  SteadyClock::time_point received;
};

// A Track stream (bidi_stream.h): read -> (configure | edit the scene | solve on the pool, or
// inline when short (Dispatch) -> write) -> read ... A solve running when the call is cancelled
// is one target's worth of work.
class TrackReactor final : public BidiStreamReactor<v1::TrackRequest, v1::TrackResponse> {
 public:
  TrackReactor(ModelStore* store, WorkerPool* pool, const ModelLimits& model_limits,
               const KinematicsLimits& limits, Metrics* metrics, TrackAdmission* admission)
      : store_(store),
        pool_(pool),
        model_limits_(model_limits),
        limits_(limits),
        metrics_(metrics),
        admission_(admission) {
    ReadNext();
  }

 private:
  // The first message configures; then targets and scene edits, in order.
  absl::Status OnMessage() override {
    if (engine_ == nullptr) return Configure();
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
    if (absl::Status s = CheckTiming(config); !s.ok()) return s;
    absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(config.arm(), "config.arm", *store_);
    if (!arm.ok()) return arm.status();
    absl::StatusOr<std::unique_ptr<TrackEngine>> engine =
        NewArmEngine(*std::move(arm), *store_, model_limits_, limits_)->StartTrack(config);
    if (!engine.ok()) return engine.status();
    // Admission by the stream's demand: its solve measured on a scratch tracker (not when
    // admission is off: it costs a few solves).
    const double period = config.period() > 0.0 ? config.period() : kDefaultPeriod;
    absl::StatusOr<std::unique_ptr<TrackAdmission::Ticket>> ticket =
        admission_->Admit(period, admission_->enabled() ? (*engine)->MeasureSolveSeconds() : 0.0);
    if (!ticket.ok()) return ticket.status();
    ticket_ = *std::move(ticket);
    engine_ = *std::move(engine);
    deadline_ = config.deadline();
    ReadNext();
    return absl::OkStatus();
  }

  static absl::Status CheckTiming(const v1::TrackConfig& config) {
    if (!std::isfinite(config.deadline()) || config.deadline() < 0.0) {
      return FieldViolation(
          "config.deadline",
          absl::StrCat("must be finite and >= 0 s (0: none), got ", config.deadline()));
    }
    if (!std::isfinite(config.period()) || config.period() < 0.0) {
      return FieldViolation("config.period",
                            absl::StrCat("must be finite and >= 0 s (0: ", kDefaultPeriod,
                                         " s), got ", config.period()));
    }
    return absl::OkStatus();
  }

  // Edits the stream's private scene copy; the tracker sees it from the next target on.
  absl::Status UpdateScene() {
    v1::EditSceneRequest edit;
    *edit.mutable_operations() = request_.scene_update().operations();
    absl::Status valid = ValidateOperations(edit, model_limits_);
    if (!valid.ok()) return AtRequestPath(valid, "scene_update");
    planning::Scene edited = engine_->scene();   // on error the copy is discarded
    last_solve_ = SteadyClock::duration::max();  // new obstacles: the next solve's cost unknown
    absl::Status applied = ApplyOperations(edit, "the stream's scene", model_limits_, edited);
    if (!applied.ok()) return AtRequestPath(applied, "scene_update");
    engine_->scene() = std::move(edited);
    ReadNext();
    return absl::OkStatus();
  }

  absl::Status SubmitSolve() {
    ReadTarget read;
    read.received = SteadyClock::now();
    const v1::TrackTarget& target = request_.target();
    if (!std::isfinite(target.time()) || (solved_ > 0 && target.time() < last_time_)) {
      return FieldViolation("target.time",
                            absl::StrCat("must be finite and >= the previous target's time ",
                                         last_time_, ", got ", target.time()));
    }
    if (target.sent_unix_us() < 0) {
      return FieldViolation("target.sent_unix_us", absl::StrCat("must be >= 0 (0: not given), got ",
                                                                target.sent_unix_us()));
    }
    absl::StatusOr<PoseTarget> pose = engine_->CheckTarget(target);
    if (!pose.ok()) return pose.status();
    last_time_ = target.time();
    read.pose = *std::move(pose);
    read.time = target.time();
    if (target.sent_unix_us() > 0) {
      read.age_on_arrival = 1e-6 * static_cast<double>(std::max<int64_t>(
                                       0, absl::ToUnixMicros(absl::Now()) - target.sent_unix_us()));
    }
    // Past its deadline already: braked at once here, never queued behind other streams.
    if (deadline_ > 0.0 && read.age_on_arrival > deadline_) {
      BrakeAndWrite(read);
      return absl::OkStatus();
    }
    const bool short_move = engine_->StepsTo(read.pose) <= kInlineSteps;
    return Dispatch(short_move, [this, read = std::move(read)] { SolveAndWrite(read); });
  }

  // Runs a target's solve-and-write here (a continuation: a short move after a short solve)
  // or on the pool. The first target admits the stream to the pool; a running controller is
  // not refused halfway, so later targets are continuations.
  absl::Status Dispatch(bool short_move, std::function<void()> solve) {
    if (solved_ > 0 && short_move && last_solve_ < kInlineSolveLimit) {
      solve();
      return absl::OkStatus();
    }
    return SubmitStreamTask(*pool_, solved_ == 0, std::move(solve));
  }

  // How long the target has been waiting, s, counted from when it was sent where known.
  static double Waited(const ReadTarget& read) {
    return read.age_on_arrival + Seconds(SteadyClock::now() - read.received);
  }

  // On a worker, or inline (Dispatch). A target whose deadline passed while it waited (behind
  // other streams' solves, or this stream's own slow one) is braked at once; one with time left
  // is solved, and says LATE if the solve ran past the deadline. No prediction of the solve's
  // time: a stream that braked every target it expected to miss would fall further behind
  // with every brake and never solve again. The solve's time is taken before Write hands the
  // call to gRPC.
  void SolveAndWrite(const ReadTarget& read) {
    if (deadline_ > 0.0 && Waited(read) > deadline_) return BrakeAndWrite(read);
    const SteadyClock::time_point start = SteadyClock::now();
    const double cpu_start = ThreadCpuSeconds();
    absl::Status step = engine_->StepTo(read.pose, read.time);
    const double cpu = ThreadCpuSeconds() - cpu_start;
    last_solve_ = SteadyClock::now() - start;
    if (!step.ok()) return End(step);
    Write(read, cpu, deadline_ > 0.0 && Waited(read) > deadline_);
  }

  // The LATE answer: no solve, the arm braked from the last answer.
  void BrakeAndWrite(const ReadTarget& read) {
    engine_->Brake(read.pose, read.time);
    Write(read, 0.0, /*late=*/true);
  }

  // response_ keeps the last answer between writes: the next solve's previous state. A late
  // answer says LATE unless it touches something (IN_COLLISION is the graver news; held_us
  // still says it was late).
  void Write(const ReadTarget& read, double solve_cpu, bool late) {
    absl::StatusOr<v1::JointState> answer =
        engine_->Answer(solved_ == 0 ? nullptr : &response_.state());
    if (!answer.ok()) return End(answer.status());
    v1::JointState& state = *answer;
    if (late && state.status() != v1::STEP_STATUS_IN_COLLISION) {
      state.set_status(v1::STEP_STATUS_LATE);
    }
    RecordIkStep(*metrics_, state);
    ticket_->Answered(solve_cpu);
    response_.Clear();
    if (solved_ == 0) SetJointNames(engine_->joint_names(), response_.mutable_joint_names());
    *response_.mutable_state() = std::move(state);
    ++solved_;
    response_.set_held_us(
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - read.received)
            .count());
    WriteResponse();  // hands the call to gRPC: nothing may follow
  }

  ModelStore* const store_;
  WorkerPool* const pool_;
  const ModelLimits model_limits_;
  const KinematicsLimits limits_;
  Metrics* const metrics_;
  TrackAdmission* const admission_;
  std::unique_ptr<TrackAdmission::Ticket> ticket_;  // the stream's place in the admission ledger
  std::unique_ptr<TrackEngine> engine_;  // configured by the first message
  double deadline_ = 0.0;                // s (0: none)
  int64_t solved_ = 0;
  double last_time_ = 0.0;
  SteadyClock::duration last_solve_ = SteadyClock::duration::max();  // the last StepTo's time
};

}  // namespace

grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* NewTrackReactor(
    ModelStore& store, WorkerPool& pool, const ModelLimits& model_limits,
    const KinematicsLimits& limits, Metrics& metrics, TrackAdmission& admission) {
  return new TrackReactor(&store, &pool, model_limits, limits, &metrics, &admission);
}

}  // namespace ikd::server
