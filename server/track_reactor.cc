#include "track_reactor.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bidi_stream.h"
#include "errors.h"
#include "ik_conversions.h"
#include "model_refs.h"
#include "ik_problem.h"
#include "ikd/ik/rate_limit.h"
#include "ikd/ik/tracker.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/robot/robot_rate_limit.h"
#include "robot_conversions.h"

namespace ikd::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A continuation whose last solve took less than this is solved on the gRPC thread that read
// its target: a hand-off to a worker and back costs more than such a solve (the 7-link arm's
// 1.5 us, the Panda's 19 us) and, on a loaded machine, queues behind every other stream's
// (docs/service-benchmark.md (e)). Longer solves (the 100-link snake's ~140 us) and a
// stream's first target (admission, restarts) go to the pool, so that no callback thread is
// held long.
constexpr SteadyClock::duration kInlineSolveLimit = std::chrono::microseconds(50);

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
    ReadNext();
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
    ReadNext();
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
    return Dispatch([this, p = *position, t = target.time()] { SolveAndWrite(p, t); });
  }

  absl::Status SubmitRobotSolve(const v1::TrackTarget& target) {
    absl::StatusOr<robot::ToolTarget> tool =
        ToolTargetFromProto(target.position(), "target.position", target.has_orientation(),
                            target.orientation(), "target.orientation");
    if (!tool.ok()) return tool.status();
    // A move's work is bounded by the tracker's own step budget (RobotIkOptions::max_steps).
    last_time_ = target.time();
    return Dispatch([this, tool = *tool, t = target.time()] {
      // The first target as a single pose (restarts included), as in SolveTrajectory; later
      // ones within the joints' rate limits from the last answer (robot_rate_limit.h).
      const SteadyClock::time_point start = SteadyClock::now();
      const robot::RobotIkResult result = robot_tracker_->StepTo(tool, t);
      last_solve_ = SteadyClock::now() - start;
      Write(RobotJointState(*robot_problem_->robot, result, tool, t,
                            solved_ == 0 ? nullptr : &response_.state()));
    });
  }

  // Runs a target's solve-and-write here (a continuation after a short solve) or on the pool.
  // The first target admits the stream to the pool; a running controller is not refused
  // halfway, so later targets are continuations.
  absl::Status Dispatch(std::function<void()> solve) {
    if (solved_ > 0 && last_solve_ < kInlineSolveLimit) {
      solve();
      return absl::OkStatus();
    }
    return SubmitStreamTask(*pool_, solved_ == 0, std::move(solve));
  }

  // On a worker, or inline (Dispatch). The solve's time is taken before Write hands the call
  // to gRPC.
  void SolveAndWrite(const Eigen::Vector3d& target, double time) {
    const SteadyClock::time_point start = SteadyClock::now();
    absl::StatusOr<ik::IkStep> step = tracker_->StepTo(target, time);
    last_solve_ = SteadyClock::now() - start;
    if (!step.ok()) return End(step.status());
    Write(JointStateFromStep(*step, target, solved_ == 0 ? nullptr : &response_.state()));
  }

  // response_ keeps the last answer between writes: the next solve's previous state.
  void Write(absl::StatusOr<v1::JointState> answer) {
    if (!answer.ok()) return End(answer.status());
    v1::JointState& state = *answer;
    RecordIkStep(*metrics_, state);
    response_.Clear();
    if (solved_ == 0) SetJointNames(joint_names_, response_.mutable_joint_names());
    *response_.mutable_state() = std::move(state);
    ++solved_;
    WriteResponse();  // hands the call to gRPC: nothing may follow
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
  SteadyClock::duration last_solve_ = SteadyClock::duration::max();  // the last StepTo's time
};

}  // namespace

grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* NewTrackReactor(
    ModelStore& store, WorkerPool& pool, const ModelLimits& model_limits,
    const KinematicsLimits& limits, Metrics& metrics) {
  return new TrackReactor(&store, &pool, model_limits, limits, &metrics);
}

}  // namespace ikd::server
