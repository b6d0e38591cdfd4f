#include "kinematics_service.h"

#include <atomic>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "conversions.h"
#include "errors.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"

namespace ikd::server {
namespace {

using PositionList = google::protobuf::RepeatedField<double>;

absl::Status Overloaded() {
  return QuotaExceeded("worker pool", "every worker is busy and the queue is full; retry later");
}

// The solver error of `status` at request path `prefix` (+ "." + the solver's field).
absl::Status AtPath(const absl::Status& status, const std::string& prefix) {
  return SolverFieldViolation(status, [&](const std::string& field) {
    return field.empty() ? prefix : absl::StrCat(prefix, ".", field);
  });
}

// Everything one request solves with; the tracker keeps pointers to arm and scene, so they live
// here, on the heap, for the whole call.
struct IkProblem {
  std::unique_ptr<ik::Arm> arm;
  std::unique_ptr<ik::Scene> scene;  // null: free space
  ik::IkOptions options;
  std::optional<Eigen::Matrix3Xd> initial_sites;  // default: home
};

template <class Spec>
absl::StatusOr<Spec> LoadSpec(ModelStore& store, const char* collection, const std::string& name,
                              const std::string& field) {
  absl::StatusOr<std::string> id = IdFromName(name, collection, field);
  if (!id.ok()) return id.status();
  absl::StatusOr<StoredModel> stored = store.Get(collection, *id);
  if (!stored.ok()) return stored.status();
  Spec spec;
  if (!spec.ParseFromString(stored->payload)) {
    return absl::DataLossError(absl::StrCat(name, ": stored model cannot be parsed"));
  }
  return spec;
}

absl::StatusOr<ik::Arm> ResolveArm(const v1::ArmRef& ref, ModelStore& store,
                                   const ModelLimits& limits) {
  switch (ref.arm_case()) {
    case v1::ArmRef::kSpec:
      return ArmFromProto(ref.spec(), "arm.spec", limits);
    case v1::ArmRef::kName: {
      absl::StatusOr<v1::ArmSpec> spec =
          LoadSpec<v1::ArmSpec>(store, "arms", ref.name(), "arm.name");
      if (!spec.ok()) return spec.status();
      return ArmFromProto(*spec, "arm.spec", limits);
    }
    default:
      return FieldViolation("arm", "required: a name (\"arms/{id}\") or an inline spec");
  }
}

// Null when the request names no scene (free space).
absl::StatusOr<std::unique_ptr<ik::Scene>> ResolveScene(const v1::SceneRef& ref,
                                                        ModelStore& store,
                                                        const ModelLimits& limits) {
  absl::StatusOr<ik::Scene> scene = absl::NotFoundError("");
  switch (ref.scene_case()) {
    case v1::SceneRef::kSpec:
      scene = SceneFromProto(ref.spec(), "scene.spec", limits);
      break;
    case v1::SceneRef::kName: {
      absl::StatusOr<v1::SceneSpec> spec =
          LoadSpec<v1::SceneSpec>(store, "scenes", ref.name(), "scene.name");
      if (!spec.ok()) return spec.status();
      scene = SceneFromProto(*spec, "scene.spec", limits);
      break;
    }
    default:
      return std::unique_ptr<ik::Scene>();
  }
  if (!scene.ok()) return scene.status();
  return std::make_unique<ik::Scene>(*std::move(scene));
}

// Zero fields mean the solver's defaults (kinematics_service.proto IkOptions).
absl::StatusOr<ik::IkOptions> OptionsFromProto(const v1::IkOptions& in) {
  ik::IkOptions out;
  if (in.seed() != 0) out.seed = in.seed();
  if (in.no_trials()) {
    out.trials_per_step = 0;
  } else if (in.trials_per_step() != 0) {
    out.trials_per_step = in.trials_per_step();
  }
  if (in.safety_margin() != 0) out.safety_margin = in.safety_margin();
  if (in.max_step_fraction() != 0) out.max_step_fraction = in.max_step_fraction();
  if (in.tolerance() != 0) out.tolerance = in.tolerance();
  out.time_budget_seconds = in.time_budget_seconds();
  if (in.has_weights()) {
    const v1::CostWeights& w = in.weights();
    out.weights = {w.clearance(), w.self_clearance(), w.velocity(),
                   w.acceleration(), w.joint_limit(), w.bending()};
  }
  absl::Status valid = out.Validate();
  if (!valid.ok()) return AtPath(valid, "options");
  return out;
}

// Sites of the joint positions `positions` (empty: the arm's home).
absl::StatusOr<std::optional<Eigen::Matrix3Xd>> SitesOf(const ik::Arm& arm,
                                                        const PositionList& positions,
                                                        const std::string& field) {
  if (positions.empty()) return std::optional<Eigen::Matrix3Xd>();
  if (positions.size() != arm.num_angles()) {
    return FieldViolation(field, absl::StrCat("must hold the arm's ", arm.num_angles(),
                                              " joint positions, got ", positions.size()));
  }
  absl::StatusOr<Eigen::Matrix3Xd> sites =
      arm.SitesFromAngles(std::vector<double>(positions.begin(), positions.end()));
  if (!sites.ok()) return AtPath(sites.status(), field);
  return std::optional<Eigen::Matrix3Xd>(*std::move(sites));
}

absl::StatusOr<std::shared_ptr<IkProblem>> MakeProblem(
    const v1::ArmRef& arm_ref, const v1::SceneRef& scene_ref, const v1::IkOptions& options,
    const PositionList& positions, const std::string& positions_field, ModelStore& store,
    const ModelLimits& limits) {
  auto problem = std::make_shared<IkProblem>();
  absl::StatusOr<ik::Arm> arm = ResolveArm(arm_ref, store, limits);
  if (!arm.ok()) return arm.status();
  problem->arm = std::make_unique<ik::Arm>(*std::move(arm));
  absl::StatusOr<std::unique_ptr<ik::Scene>> scene = ResolveScene(scene_ref, store, limits);
  if (!scene.ok()) return scene.status();
  problem->scene = *std::move(scene);
  absl::StatusOr<ik::IkOptions> ik_options = OptionsFromProto(options);
  if (!ik_options.ok()) return ik_options.status();
  problem->options = *ik_options;
  absl::StatusOr<std::optional<Eigen::Matrix3Xd>> sites =
      SitesOf(*problem->arm, positions, positions_field);
  if (!sites.ok()) return sites.status();
  problem->initial_sites = *std::move(sites);
  return problem;
}

absl::StatusOr<Eigen::Vector3d> FiniteTarget(const v1::Vector3& target, const std::string& field) {
  const Eigen::Vector3d t = FromProto(target);
  if (!t.allFinite()) return FieldViolation(field, "every coordinate must be finite");
  return t;
}

absl::StatusOr<ik::Trajectory> TrajectoryFromProto(const v1::Trajectory& in) {
  absl::StatusOr<ik::Trajectory> out = absl::NotFoundError("");
  std::string prefix = "trajectory";
  switch (in.path_case()) {
    case v1::Trajectory::kLine:
      prefix = "trajectory.line";
      out = ik::Trajectory::Line(FromProto(in.line().from()), FromProto(in.line().to()),
                                 in.line().duration());
      break;
    case v1::Trajectory::kArc:
      prefix = "trajectory.arc";
      out = ik::Trajectory::Arc(FromProto(in.arc().center()), FromProto(in.arc().axis()),
                                FromProto(in.arc().start()), in.arc().angle(),
                                in.arc().duration());
      break;
    case v1::Trajectory::kPolyline: {
      prefix = "trajectory.polyline";
      std::vector<Eigen::Vector3d> points;
      for (const v1::Vector3& p : in.polyline().points()) points.push_back(FromProto(p));
      out = ik::Trajectory::Polyline(std::move(points), in.polyline().speed());
      break;
    }
    case v1::Trajectory::kWaypoints: {
      // The solver names "waypoints[k].time": the request path is below "trajectory".
      const v1::WaypointPath& path = in.waypoints();
      if (path.interpolation() != v1::INTERPOLATION_LINEAR &&
          path.interpolation() != v1::INTERPOLATION_CUBIC) {
        return FieldViolation("trajectory.waypoints.interpolation",
                              "must be INTERPOLATION_LINEAR or INTERPOLATION_CUBIC");
      }
      std::vector<ik::Waypoint> waypoints;
      for (const v1::Waypoint& w : path.waypoints()) {
        waypoints.push_back({w.time(), FromProto(w.position())});
      }
      out = ik::Trajectory::FromWaypoints(std::move(waypoints),
                                          path.interpolation() == v1::INTERPOLATION_CUBIC
                                              ? ik::Interpolation::kCubic
                                              : ik::Interpolation::kLinear);
      break;
    }
    default:
      return FieldViolation("trajectory", "required: waypoints, line, arc or polyline");
  }
  if (!out.ok()) return AtPath(out.status(), prefix);
  return out;
}

absl::StatusOr<std::vector<double>> SampleTimes(const ik::Trajectory& trajectory, double period,
                                                int max_samples) {
  if (!std::isfinite(period) || period <= 0) {
    return FieldViolation("sample_period", absl::StrCat("must be finite and > 0, got ", period));
  }
  if (trajectory.duration() / period + 1 > max_samples) {
    return FieldViolation("sample_period",
                          absl::StrCat("gives more than the server's ", max_samples,
                                       " samples for a ", trajectory.duration(), " s trajectory"));
  }
  absl::StatusOr<std::vector<double>> times = trajectory.SampleTimes(period);
  if (!times.ok()) return AtPath(times.status(), "sample_period");
  return times;
}

v1::StepStatus StatusToProto(ik::StepStatus status) {
  switch (status) {
    case ik::StepStatus::kReached:
      return v1::STEP_STATUS_REACHED;
    case ik::StepStatus::kClampedUnreachable:
      return v1::STEP_STATUS_CLAMPED_UNREACHABLE;
    case ik::StepStatus::kInCollision:
      return v1::STEP_STATUS_IN_COLLISION;
    case ik::StepStatus::kJointLimitBlocked:
      return v1::STEP_STATUS_JOINT_LIMIT_BLOCKED;
  }
  return v1::STEP_STATUS_UNSPECIFIED;
}

void AddJointNames(const ik::Arm& arm, google::protobuf::RepeatedPtrField<std::string>* names) {
  for (int k = 0; k < arm.num_limbs(); ++k) {
    if (arm.planar()) {
      names->Add(absl::StrCat("joint_", k));
    } else {
      names->Add(absl::StrCat("joint_", k, "_bend"));
      names->Add(absl::StrCat("joint_", k, "_azimuth"));
    }
  }
}

// `previous`: the stream's previous state (null on the first), for finite-difference velocities.
void FillJointState(const ik::IkStep& step, const Eigen::Vector3d& target,
                    const v1::JointState* previous, v1::JointState& out) {
  out.Clear();
  out.set_time(step.time);
  const double dt = previous != nullptr ? step.time - previous->time() : 0.0;
  for (size_t k = 0; k < step.angles.size(); ++k) {
    out.add_positions(step.angles[k]);
    const bool has_rate = dt > 0 && static_cast<int>(k) < previous->positions_size();
    out.add_velocities(has_rate ? (step.angles[k] - previous->positions(k)) / dt : 0.0);
  }
  for (int s = 0; s < step.sites.cols(); ++s) {
    *out.add_sites() = ToProto(Eigen::Vector3d(step.sites.col(s)));
  }
  *out.mutable_target() = ToProto(target);
  out.set_hand_error(step.hand_error);
  out.set_clamp_distance(step.clamp_distance);
  if (std::isfinite(step.min_clearance)) out.set_min_clearance(step.min_clearance);
  out.set_constraint_residual(step.constraint_residual);
  out.set_iterations(step.iterations);
  out.set_trials_accepted(step.trials_accepted);
  out.set_status(StatusToProto(step.status));
}

// Running totals of a trajectory for its summary.
void Accumulate(const v1::JointState& state, v1::TrajectorySummary& summary) {
  summary.set_samples(summary.samples() + 1);
  switch (state.status()) {
    case v1::STEP_STATUS_REACHED:
      summary.set_fraction_reached(summary.fraction_reached() + 1);  // a count until the end
      break;
    case v1::STEP_STATUS_CLAMPED_UNREACHABLE:
      summary.set_clamped(summary.clamped() + 1);
      break;
    case v1::STEP_STATUS_IN_COLLISION:
      summary.set_in_collision(summary.in_collision() + 1);
      break;
    default:
      summary.set_limit_blocked(summary.limit_blocked() + 1);
  }
  summary.set_max_hand_error(std::max(summary.max_hand_error(), state.hand_error()));
  summary.set_max_constraint_residual(
      std::max(summary.max_constraint_residual(), state.constraint_residual()));
  if (state.has_min_clearance() &&
      (!summary.has_min_clearance() || state.min_clearance() < summary.min_clearance())) {
    summary.set_min_clearance(state.min_clearance());
  }
}

// A trajectory stream. As in simulation_service.cc, exactly one party owns the call at a time
// (worker task -> StartWrite -> OnWriteDone -> next worker task), and whoever owns it last
// calls Finish as its final action; OnCancel only sets a flag, read before each sample.
class TrajectoryReactor final : public grpc::ServerWriteReactor<v1::SolveTrajectoryResponse> {
 public:
  TrajectoryReactor(WorkerPool* pool, std::shared_ptr<IkProblem> problem, ik::ArmTracker tracker,
                    ik::Trajectory trajectory, std::vector<double> times)
      : pool_(pool),
        problem_(std::move(problem)),
        tracker_(std::move(tracker)),
        trajectory_(std::move(trajectory)),
        times_(std::move(times)) {
    if (!pool_->TrySubmit([this] { ComputeNext(); })) End(Overloaded());
  }
  explicit TrajectoryReactor(const absl::Status& error)
      : pool_(nullptr), tracker_(std::nullopt), trajectory_(std::nullopt) {
    End(error);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return End(absl::CancelledError("the stream broke (client gone)"));
    if (summary_sent_) return End(absl::OkStatus());
    if (!pool_->SubmitContinuation([this] { ComputeNext(); })) {
      End(absl::UnavailableError("the server is shutting down"));
    }
  }
  void OnCancel() override { cancelled_.store(true); }
  void OnDone() override { delete this; }

 private:
  void ComputeNext() {
    if (cancelled_.load()) {
      return End(absl::CancelledError(absl::StrCat("cancelled after ", next_, " samples")));
    }
    if (next_ == times_.size()) return WriteSummary();
    const absl::Time start = absl::Now();
    const double t = times_[next_];
    const Eigen::Vector3d target = trajectory_->PositionAt(t);
    absl::StatusOr<ik::IkStep> step = tracker_->StepTo(target, t);
    solve_seconds_ += absl::ToDoubleSeconds(absl::Now() - start);
    if (!step.ok()) return End(step.status());
    const v1::JointState previous = message_.sample();
    message_.Clear();
    if (next_ == 0) AddJointNames(*problem_->arm, message_.mutable_joint_names());
    FillJointState(*step, target, next_ == 0 ? nullptr : &previous, *message_.mutable_sample());
    Accumulate(message_.sample(), summary_);
    ++next_;
    StartWrite(&message_);  // hands the call to gRPC: nothing may follow
  }

  void WriteSummary() {
    v1::TrajectorySummary summary = summary_;
    summary.set_fraction_reached(summary.samples() > 0
                                     ? summary.fraction_reached() / summary.samples()
                                     : 0.0);
    summary.set_solve_seconds(solve_seconds_);
    message_.Clear();
    *message_.mutable_summary() = summary;
    summary_sent_ = true;
    StartWrite(&message_);
  }

  void End(const absl::Status& status) { Finish(ToGrpcStatus(status)); }

  WorkerPool* const pool_;
  std::shared_ptr<IkProblem> problem_;
  std::optional<ik::ArmTracker> tracker_;
  std::optional<ik::Trajectory> trajectory_;
  std::vector<double> times_;
  size_t next_ = 0;
  bool summary_sent_ = false;
  double solve_seconds_ = 0.0;
  v1::TrajectorySummary summary_;
  std::atomic<bool> cancelled_{false};
  v1::SolveTrajectoryResponse message_;  // the message being written
};


// A Track stream, strictly one thing at a time: read -> (configure | edit the scene | solve on
// the pool -> write) -> read ... So at most one of a read, a solve and a write is pending, and
// each completion is the only party that may Finish; OnCancel makes the pending read or write
// fail, which finishes the call.
class TrackReactor final : public grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse> {
 public:
  TrackReactor(ModelStore* store, WorkerPool* pool, const ModelLimits& limits)
      : store_(store), pool_(pool), limits_(limits) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::OK);  // the client half-closed (or cancelled)
    absl::Status status = Handle();
    if (!status.ok()) Finish(ToGrpcStatus(status));
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(ToGrpcStatus(absl::CancelledError("the stream broke (client gone)")));
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  // Acts on request_; an error ends the stream with it.
  absl::Status Handle() {
    if (tracker_ == nullptr) return Configure();
    switch (request_.request_case()) {
      case v1::TrackRequest::kTarget:
        return Solve();
      case v1::TrackRequest::kSceneUpdate:
        return UpdateScene();
      default:
        return FieldViolation("request", "after the config: a target or a scene_update");
    }
  }

  absl::Status Configure() {
    if (!request_.has_config()) return FieldViolation("config", "the first message must be a config");
    const v1::TrackConfig& config = request_.config();
    absl::StatusOr<std::shared_ptr<IkProblem>> problem =
        MakeProblem(config.arm(), config.scene(), config.options(), config.initial_positions(),
                    "config.initial_positions", *store_, limits_);
    if (!problem.ok()) return AtPath(problem.status(), "config");
    problem_ = *std::move(problem);
    // Always a scene (maybe empty), so that scene updates have somewhere to go.
    if (problem_->scene == nullptr) problem_->scene = std::make_unique<ik::Scene>(*ik::Scene::Create({}));
    absl::StatusOr<ik::ArmTracker> tracker = ik::ArmTracker::Create(
        *problem_->arm, problem_->scene.get(), problem_->options, problem_->initial_sites);
    if (!tracker.ok()) return AtPath(tracker.status(), "config.initial_positions");
    tracker_ = std::make_unique<ik::ArmTracker>(*std::move(tracker));
    StartRead(&request_);
    return absl::OkStatus();
  }

  absl::Status UpdateScene() {
    v1::EditSceneRequest edit;
    *edit.mutable_operations() = request_.scene_update().operations();
    absl::Status valid = ValidateOperations(edit, limits_);
    if (!valid.ok()) return AtPath(valid, "scene_update");
    ik::Scene edited = *problem_->scene;  // on error the copy is discarded
    absl::Status applied = ApplyOperations(edit, "the stream's scene", limits_, edited);
    if (!applied.ok()) return AtPath(applied, "scene_update");
    *problem_->scene = std::move(edited);
    StartRead(&request_);
    return absl::OkStatus();
  }

  absl::Status Solve() {
    const v1::TrackTarget& target = request_.target();
    absl::StatusOr<Eigen::Vector3d> position = FiniteTarget(target.position(), "target.position");
    if (!position.ok()) return position.status();
    if (!std::isfinite(target.time()) || (solved_ > 0 && target.time() < last_time_)) {
      return FieldViolation("target.time", absl::StrCat("must be finite and >= the previous "
                                                        "target's time ", last_time_, ", got ",
                                                        target.time()));
    }
    last_time_ = target.time();
    const bool submitted = pool_->TrySubmit([this, p = *position, t = target.time()] {
      absl::StatusOr<ik::IkStep> step = tracker_->StepTo(p, t);
      if (!step.ok()) return Finish(ToGrpcStatus(step.status()));
      const v1::JointState previous = response_.state();
      response_.Clear();
      if (solved_ == 0) AddJointNames(*problem_->arm, response_.mutable_joint_names());
      FillJointState(*step, p, solved_ == 0 ? nullptr : &previous, *response_.mutable_state());
      ++solved_;
      StartWrite(&response_);
    });
    return submitted ? absl::OkStatus() : Overloaded();
  }

  ModelStore* const store_;
  WorkerPool* const pool_;
  const ModelLimits limits_;
  std::shared_ptr<IkProblem> problem_;
  std::unique_ptr<ik::ArmTracker> tracker_;  // null until configured
  int64_t solved_ = 0;
  double last_time_ = 0.0;
  v1::TrackRequest request_;
  v1::TrackResponse response_;
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
                  request->seed_positions(), "seed_positions", *store_, model_limits_);
  absl::StatusOr<Eigen::Vector3d> target = FiniteTarget(request->target(), "target");
  const absl::Status invalid = !problem.ok() ? problem.status() : target.status();
  if (!invalid.ok()) {
    reactor->Finish(ToGrpcStatus(invalid));
    return reactor;
  }
  auto solve = [context, reactor, response, problem = *problem, target = *target] {
    if (context->IsCancelled()) {
      return reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    absl::StatusOr<ik::IkStep> step = ik::SolvePose(*problem->arm, problem->scene.get(), target,
                                                    problem->options, problem->initial_sites);
    if (!step.ok()) return reactor->Finish(ToGrpcStatus(step.status()));
    AddJointNames(*problem->arm, response->mutable_joint_names());
    FillJointState(*step, target, nullptr, *response->mutable_state());
    reactor->Finish(grpc::Status::OK);
  };
  if (!pool_->TrySubmit(std::move(solve))) reactor->Finish(ToGrpcStatus(Overloaded()));
  return reactor;
}

grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* KinematicsServiceImpl::SolveTrajectory(
    grpc::CallbackServerContext* /*context*/, const v1::SolveTrajectoryRequest* request) {
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(request->arm(), request->scene(), request->options(),
                  request->initial_positions(), "initial_positions", *store_, model_limits_);
  if (!problem.ok()) return new TrajectoryReactor(problem.status());
  absl::StatusOr<ik::Trajectory> trajectory = TrajectoryFromProto(request->trajectory());
  if (!trajectory.ok()) return new TrajectoryReactor(trajectory.status());
  absl::StatusOr<std::vector<double>> times =
      SampleTimes(*trajectory, request->sample_period(), limits_.max_samples);
  if (!times.ok()) return new TrajectoryReactor(times.status());
  const IkProblem& p = **problem;
  absl::StatusOr<ik::ArmTracker> tracker =
      ik::ArmTracker::Create(*p.arm, p.scene.get(), p.options, p.initial_sites);
  if (!tracker.ok()) return new TrajectoryReactor(AtPath(tracker.status(), "initial_positions"));
  return new TrajectoryReactor(pool_, *std::move(problem), *std::move(tracker),
                               *std::move(trajectory), *std::move(times));
}

grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* KinematicsServiceImpl::Track(
    grpc::CallbackServerContext* /*context*/) {
  return new TrackReactor(store_, pool_, model_limits_);
}

}  // namespace ikd::server
