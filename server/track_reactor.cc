#include "track_reactor.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
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

// A Track stream (bidi_stream.h): read -> (configure | edit the scene | solve on the pool, or
// inline when short (Dispatch) -> write) -> read ... A solve running when the call is cancelled
// is one target's worth of work.
class TrackReactor final : public BidiStreamReactor<v1::TrackRequest, v1::TrackResponse> {
 public:
  TrackReactor(ModelStore* store, WorkerPool* pool, const ModelLimits& model_limits,
               const KinematicsLimits& limits, Metrics* metrics)
      : store_(store),
        pool_(pool),
        model_limits_(model_limits),
        limits_(limits),
        metrics_(metrics) {
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
    absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(config.arm(), "config.arm", *store_);
    if (!arm.ok()) return arm.status();
    absl::StatusOr<std::unique_ptr<TrackEngine>> engine =
        NewArmEngine(*std::move(arm), *store_, model_limits_, limits_)->StartTrack(config);
    if (!engine.ok()) return engine.status();
    engine_ = *std::move(engine);
    ReadNext();
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
    const v1::TrackTarget& target = request_.target();
    if (!std::isfinite(target.time()) || (solved_ > 0 && target.time() < last_time_)) {
      return FieldViolation("target.time",
                            absl::StrCat("must be finite and >= the previous target's time ",
                                         last_time_, ", got ", target.time()));
    }
    absl::StatusOr<PoseTarget> pose = engine_->CheckTarget(target);
    if (!pose.ok()) return pose.status();
    last_time_ = target.time();
    const bool short_move = engine_->StepsTo(*pose) <= kInlineSteps;
    return Dispatch(short_move,
                    [this, pose = *std::move(pose), t = target.time()] { SolveAndWrite(pose, t); });
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

  // On a worker, or inline (Dispatch). The solve's time is taken before Write hands the call
  // to gRPC.
  void SolveAndWrite(const PoseTarget& target, double time) {
    const SteadyClock::time_point start = SteadyClock::now();
    absl::Status step = engine_->StepTo(target, time);
    last_solve_ = SteadyClock::now() - start;
    if (!step.ok()) return End(step);
    Write(engine_->Answer(solved_ == 0 ? nullptr : &response_.state()));
  }

  // response_ keeps the last answer between writes: the next solve's previous state.
  void Write(absl::StatusOr<v1::JointState> answer) {
    if (!answer.ok()) return End(answer.status());
    v1::JointState& state = *answer;
    RecordIkStep(*metrics_, state);
    response_.Clear();
    if (solved_ == 0) SetJointNames(engine_->joint_names(), response_.mutable_joint_names());
    *response_.mutable_state() = std::move(state);
    ++solved_;
    WriteResponse();  // hands the call to gRPC: nothing may follow
  }

  ModelStore* const store_;
  WorkerPool* const pool_;
  const ModelLimits model_limits_;
  const KinematicsLimits limits_;
  Metrics* const metrics_;
  std::unique_ptr<TrackEngine> engine_;  // configured by the first message
  int64_t solved_ = 0;
  double last_time_ = 0.0;
  SteadyClock::duration last_solve_ = SteadyClock::duration::max();  // the last StepTo's time
};

}  // namespace

grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* NewTrackReactor(
    ModelStore& store, WorkerPool& pool, const ModelLimits& model_limits,
    const KinematicsLimits& limits, Metrics& metrics) {
  return new TrackReactor(&store, &pool, model_limits, limits, &metrics);
}

}  // namespace ikd::server
