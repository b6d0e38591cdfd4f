#include "simulation_service.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "errors.h"
#include "sequential_stream.h"
#include "stream_handoff.h"
#include "ikd/constraints/integrators.h"
#include "ikd/systems/pendulum.h"
#include "ikd/systems/response.h"

namespace ikd::server {

using constraints::BrownianStep;
using constraints::ConstrainedIntegrator;
using constraints::ConstraintModel;
using constraints::ConstraintSolver;
using constraints::MakeConstraintSolver;
using constraints::ProjectionSummary;
using constraints::StepReport;

namespace {

// A projection failure at `step` as the stream's final status: the solver's code (ABORTED,
// FAILED_PRECONDITION, OUT_OF_RANGE) with the step in the message. An InvalidArgument here can
// only come from a state that became non-finite (the request was validated): OUT_OF_RANGE.
absl::Status StepFailure(const absl::Status& status, int64_t step) {
  const absl::StatusCode code = status.code() == absl::StatusCode::kInvalidArgument
                                    ? absl::StatusCode::kOutOfRange
                                    : status.code();
  return absl::Status(code, absl::StrCat("step ", step, ": ", status.message()));
}

absl::Status Cancelled(int64_t step) {
  return absl::CancelledError(absl::StrCat("cancelled by the client after step ", step));
}

// ---------------------------------------------------------------------------------------------
// Streams

// The frames of one run, computed on a worker thread one at a time.
template <class Frame>
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // Advances to the next frame and fills `frame` (true), or reports the run complete (false).
  // Checks `cancelled` between steps. A non-OK status ends the stream.
  virtual absl::StatusOr<bool> Next(const std::atomic<bool>& cancelled, Frame& frame) = 0;
};

// Whether the figures of a frame are numbers: positions or velocities beyond the range of
// doubles show as a non-finite violation or energy.
bool FrameFinite(const v1::ChainFrame& f) {
  return std::isfinite(f.max_relative_violation()) && std::isfinite(f.kinetic_energy()) &&
         std::isfinite(f.potential_energy());
}
bool FrameFinite(const v1::PendulumFrame& f) {
  return std::isfinite(f.max_relative_violation()) && std::isfinite(f.total_energy()) &&
         std::isfinite(f.kinetic_energy()) && std::isfinite(f.potential_energy());
}

// A server-streaming call driven by a FrameSource, one step at a time (sequential_stream.h):
//   worker task (queued or running) -> StartWrite -> OnWriteDone -> next worker task -> ...
// OnCancel runs concurrently with anything and only sets a flag, read between steps.
template <class Frame>
class FrameStreamReactor final : public SequentialStream<grpc::ServerWriteReactor<Frame>> {
 public:
  FrameStreamReactor(WorkerPool* pool, std::unique_ptr<FrameSource<Frame>> source)
      : pool_(pool), source_(std::move(source)) {
    if (!pool_->TrySubmit([this] { ComputeNext(); })) End(PoolFull());
  }

  // A reactor that fails at once (invalid request).
  explicit FrameStreamReactor(const absl::Status& error) : pool_(nullptr) { End(error); }

  void OnWriteDone(bool ok) override {
    TakeFromGrpc(this);
    if (!ok) {
      End(absl::CancelledError("the stream broke (client gone)"));
      return;
    }
    if (!pool_->SubmitContinuation([this] { ComputeNext(); })) {
      End(PoolStopping());
    }
  }
  void OnCancel() override { cancelled_.store(true); }

 private:
  void ComputeNext() {
    Frame& frame = frames_[next_frame_];
    next_frame_ ^= 1;
    absl::StatusOr<bool> more = source_->Next(cancelled_, frame);
    if (!more.ok()) {
      End(more.status());
    } else if (!*more) {
      End(absl::OkStatus());
    } else if (!FrameFinite(frame)) {  // never answered: the state left the range of doubles
      End(absl::OutOfRangeError(absl::StrCat(
          "step ", frame.step(), ": the state is beyond the range of doubles (max relative "
          "violation ", frame.max_relative_violation(), "): use smaller coordinates or links")));
    } else {
      HandToGrpc(this);
      this->StartWrite(&frame);  // hands the call to gRPC: nothing may follow
    }
  }

  using SequentialStream<grpc::ServerWriteReactor<Frame>>::End;

  WorkerPool* const pool_;
  std::unique_ptr<FrameSource<Frame>> source_;
  std::atomic<bool> cancelled_{false};
  // Two frames, filled in turn: the one written last is serialized inside StartWrite, after
  // HandToGrpc, so TSan (blind to gRPC's own ordering) could not see that read end before the
  // next fill; the other frame's last read lies a whole write cycle back, behind the worker
  // pool's lock (a TSan report of CI's tsan stage, FaultsTest, on one frame).
  Frame frames_[2];
  int next_frame_ = 0;
};

// Steps until the next frame: stride steps, fewer at the end.
int64_t FrameEnd(const StreamPlan& plan, int64_t step) {
  return std::min(plan.steps, step + plan.stride);
}

// Constrained dynamics (ConstrainedIntegrator) or a Brownian walk (BrownianStep) of a chain.
class ChainSource final : public FrameSource<v1::ChainFrame> {
 public:
  // Errors: whatever the integrator or solver refuses (the set-up was validated, so none are
  // expected).
  static absl::StatusOr<std::unique_ptr<ChainSource>> Create(ChainSetup setup, Metrics* metrics) {
    std::unique_ptr<ChainSource> source(new ChainSource(std::move(setup), metrics));
    const ChainSetup& s = source->setup_;
    if (s.brownian) {
      auto solver = MakeConstraintSolver(s.method, *s.model, s.projection);
      if (!solver.ok()) return solver.status();
      source->solver_ = *std::move(solver);
      source->rng_.seed(s.brownian->seed);
    } else {
      auto integrator =
          ConstrainedIntegrator::Create(*s.model, s.method, s.projection, s.field.get(), s.plan.dt);
      if (!integrator.ok()) return integrator.status();
      source->integrator_ = std::make_unique<ConstrainedIntegrator>(*std::move(integrator));
    }
    return source;
  }

  absl::StatusOr<bool> Next(const std::atomic<bool>& cancelled, v1::ChainFrame& frame) override {
    if (step_ >= setup_.plan.steps) return false;
    const int64_t end = FrameEnd(setup_.plan, step_);
    int iterations = 0;
    StepReport report;
    while (step_ < end) {
      if (cancelled.load()) return Cancelled(step_);
      absl::Status status = setup_.brownian ? BrownianOnce(iterations) : DynamicsOnce(report);
      if (!status.ok()) return StepFailure(status, step_ + 1);
      iterations = std::max(iterations, report.positions.iterations);
      ++step_;
    }
    Fill(report, iterations, frame);
    return true;
  }

 private:
  ChainSource(ChainSetup setup, Metrics* metrics) : setup_(std::move(setup)), metrics_(metrics) {}

  absl::Status DynamicsOnce(StepReport& report) {
    absl::StatusOr<StepReport> step = integrator_->Step(setup_.state);
    if (!step.ok()) {
      metrics_->RecordNotConverged(SolverKind::kSimulationStep);
      return step.status();
    }
    metrics_->RecordSolverStep(SolverKind::kSimulationStep, step->positions.iterations);
    report = *std::move(step);
    return absl::OkStatus();
  }

  // A step whose projection does not converge is rejected (BrownianStep restores the sites).
  absl::Status BrownianOnce(int& iterations) {
    absl::StatusOr<ProjectionSummary> summary =
        BrownianStep(*setup_.model, *solver_, setup_.brownian->step_sigma,
                     setup_.brownian->planar, rng_, setup_.state.positions);
    if (!summary.ok()) return summary.status();
    metrics_->RecordSolverStep(SolverKind::kSimulationStep, summary->iterations);
    if (!summary->converged()) {
      metrics_->RecordNotConverged(SolverKind::kSimulationStep);
      ++rejected_;
    }
    iterations = std::max(iterations, summary->iterations);
    return absl::OkStatus();
  }

  void Fill(const StepReport& report, int iterations, v1::ChainFrame& frame) const {
    frame.Clear();
    frame.set_step(step_);
    frame.set_time(static_cast<double>(step_) * setup_.plan.dt);
    AppendColumns(setup_.state.positions, frame.mutable_positions());
    if (!setup_.brownian) {
      AppendColumns(setup_.state.velocities, frame.mutable_velocities());
      frame.set_kinetic_energy(report.kinetic_energy);
      frame.set_potential_energy(report.potential_energy);
    }
    frame.set_max_relative_violation(setup_.model->MaxRelativeViolation(setup_.state.positions));
    frame.set_iterations(iterations);
    frame.set_rejected_steps(rejected_);
  }

  ChainSetup setup_;
  Metrics* const metrics_;
  std::unique_ptr<ConstrainedIntegrator> integrator_;  // dynamics
  std::unique_ptr<ConstraintSolver> solver_;           // Brownian walk
  std::mt19937_64 rng_;
  int64_t step_ = 0;
  int64_t rejected_ = 0;
};

class PendulumSource final : public FrameSource<v1::PendulumFrame> {
 public:
  static absl::StatusOr<std::unique_ptr<PendulumSource>> Create(const PendulumSetup& setup,
                                                                Metrics* metrics) {
    auto pendulum =
        systems::Pendulum::Create(setup.spec, setup.method, setup.projection, setup.plan.dt);
    if (!pendulum.ok()) return pendulum.status();
    return std::unique_ptr<PendulumSource>(
        new PendulumSource(setup.plan, *std::move(pendulum), metrics));
  }

  absl::StatusOr<bool> Next(const std::atomic<bool>& cancelled,
                            v1::PendulumFrame& frame) override {
    if (step_ >= plan_.steps) return false;
    const int64_t end = FrameEnd(plan_, step_);
    int iterations = 0;
    while (step_ < end) {
      if (cancelled.load()) return Cancelled(step_);
      absl::StatusOr<StepReport> report = pendulum_.Step();
      if (!report.ok()) {
        metrics_->RecordNotConverged(SolverKind::kSimulationStep);
        return StepFailure(report.status(), step_ + 1);
      }
      metrics_->RecordSolverStep(SolverKind::kSimulationStep, report->positions.iterations);
      iterations = std::max(iterations, report->positions.iterations);
      ++step_;
    }
    Fill(iterations, frame);
    return true;
  }

 private:
  PendulumSource(const StreamPlan& plan, systems::Pendulum pendulum, Metrics* metrics)
      : plan_(plan), pendulum_(std::move(pendulum)), metrics_(metrics) {}

  void Fill(int iterations, v1::PendulumFrame& frame) const {
    frame.Clear();
    frame.set_step(step_);
    frame.set_time(pendulum_.time());
    for (double angle : pendulum_.Angles()) frame.add_angles(angle);
    for (double rate : pendulum_.AngularVelocities()) frame.add_angular_velocities(rate);
    AppendColumns(pendulum_.positions(), frame.mutable_positions());
    frame.set_kinetic_energy(pendulum_.KineticEnergy());
    frame.set_potential_energy(pendulum_.PotentialEnergy());
    frame.set_total_energy(pendulum_.TotalEnergy());
    frame.set_max_relative_violation(
        pendulum_.model().MaxRelativeViolation(pendulum_.positions()));
    frame.set_iterations(iterations);
  }

  StreamPlan plan_;
  systems::Pendulum pendulum_;
  Metrics* const metrics_;
  int64_t step_ = 0;
};

// The reactor of a stream whose source is built from a validated set-up, or fails at once.
template <class Frame, class Source>
grpc::ServerWriteReactor<Frame>* StartStream(WorkerPool* pool,
                                             absl::StatusOr<std::unique_ptr<Source>> source) {
  if (!source.ok()) return new FrameStreamReactor<Frame>(source.status());
  return new FrameStreamReactor<Frame>(pool, *std::move(source));
}

// ---------------------------------------------------------------------------------------------
// Unary calls

absl::StatusOr<Eigen::MatrixXd> ComputeResponse(const ResponseSetup& setup) {
  if (setup.kind == v1::RESPONSE_KIND_PROJECTOR) {
    return systems::ConstrainedProjector(setup.positions, setup.constraints, setup.options);
  }
  auto model = ConstraintModel::Create(setup.inverse_masses, setup.constraints);
  if (!model.ok()) return model.status();
  return systems::ConstrainedMobility(*model, setup.positions, setup.options);
}

absl::Status FillResponse(const ResponseSetup& setup, v1::ResponseMatrixResponse& response) {
  absl::StatusOr<Eigen::MatrixXd> matrix = ComputeResponse(setup);
  if (!matrix.ok()) {
    return SolverFieldViolation(matrix.status(), [](const std::string& field) {
      return field.empty() ? std::string("system") : "system." + field;
    });
  }
  absl::StatusOr<Eigen::MatrixXd> isotropic =
      systems::IsotropicResponse(*matrix, setup.options.dimension);
  if (!isotropic.ok()) return isotropic.status();
  *response.mutable_response() = MatrixToProto(*matrix);
  *response.mutable_isotropic() = MatrixToProto(*isotropic);
  return absl::OkStatus();
}

absl::Status FillFollow(const FollowSetup& setup, v1::FollowShapeResponse& response,
                        Metrics& metrics) {
  absl::StatusOr<systems::ConstrainedMotion> run =
      systems::FollowConstraint(*setup.shape, setup.r0, setup.v0, setup.options);
  if (!run.ok()) return SolverFieldViolation(run.status(), FollowFieldPath);
  response = FollowResponse(*run, *setup.shape, setup.stride);
  metrics.RecordSolverStep(SolverKind::kShapeFollow, response.max_iterations_used());
  if (response.outcome() != v1::PROJECTION_OUTCOME_CONVERGED) {
    metrics.RecordNotConverged(SolverKind::kShapeFollow);
  }
  return absl::OkStatus();
}

// Runs `compute` (absl::Status(const Setup&, Response&)) on the pool and finishes `reactor`
// with its status; RESOURCE_EXHAUSTED at once when the pool is full. The call (request,
// response, reactor) stays alive until Finish.
template <class Setup, class Response, class Compute>
grpc::ServerUnaryReactor* RunUnary(WorkerPool* pool, grpc::CallbackServerContext* context,
                                   absl::StatusOr<Setup> setup, Response* response,
                                   Compute compute) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!setup.ok()) {
    reactor->Finish(ToGrpcStatus(setup.status()));
    return reactor;
  }
  // std::function needs a copyable task; the set-up may hold move-only members.
  auto shared = std::make_shared<Setup>(*std::move(setup));
  const bool queued = pool->TrySubmit([reactor, context, response, shared, compute] {
    if (context->IsCancelled()) {
      reactor->Finish(ToGrpcStatus(absl::CancelledError("cancelled before the computation")));
      return;
    }
    reactor->Finish(ToGrpcStatus(compute(*shared, *response)));
  });
  if (!queued) reactor->Finish(ToGrpcStatus(PoolFull()));
  return reactor;
}

}  // namespace

SimulationServiceImpl::SimulationServiceImpl(WorkerPool* pool, SimulationLimits limits,
                                             Metrics* metrics)
    : pool_(pool), limits_(limits), metrics_(metrics) {}

grpc::ServerWriteReactor<v1::ChainFrame>* SimulationServiceImpl::StepChain(
    grpc::CallbackServerContext* /*context*/, const v1::StepChainRequest* request) {
  absl::StatusOr<ChainSetup> setup = ChainSetupFromProto(*request, limits_);
  if (!setup.ok()) return new FrameStreamReactor<v1::ChainFrame>(setup.status());
  return StartStream<v1::ChainFrame>(pool_, ChainSource::Create(*std::move(setup), metrics_));
}

grpc::ServerWriteReactor<v1::PendulumFrame>* SimulationServiceImpl::StepPendulum(
    grpc::CallbackServerContext* /*context*/, const v1::StepPendulumRequest* request) {
  absl::StatusOr<PendulumSetup> setup = PendulumSetupFromProto(*request, limits_);
  if (!setup.ok()) return new FrameStreamReactor<v1::PendulumFrame>(setup.status());
  absl::StatusOr<std::unique_ptr<PendulumSource>> source =
      PendulumSource::Create(*setup, metrics_);
  if (!source.ok()) {
    // Pendulum::Create names the spec's fields, which are the request's.
    source = SolverFieldViolation(source.status(), [](const std::string& field) {
      return field.empty() ? std::string("projection.method") : field;
    });
  }
  return StartStream<v1::PendulumFrame>(pool_, std::move(source));
}

grpc::ServerUnaryReactor* SimulationServiceImpl::FollowShape(
    grpc::CallbackServerContext* context, const v1::FollowShapeRequest* request,
    v1::FollowShapeResponse* response) {
  Metrics* metrics = metrics_;
  return RunUnary(pool_, context, FollowSetupFromProto(*request, limits_), response,
                  [metrics](const FollowSetup& setup, v1::FollowShapeResponse& out) {
                    return FillFollow(setup, out, *metrics);
                  });
}

grpc::ServerUnaryReactor* SimulationServiceImpl::ResponseMatrix(
    grpc::CallbackServerContext* context, const v1::ResponseMatrixRequest* request,
    v1::ResponseMatrixResponse* response) {
  return RunUnary(pool_, context, ResponseSetupFromProto(*request, limits_), response,
                  &FillResponse);
}

}  // namespace ikd::server
