#include "kinematics_service.h"

#include <utility>

#include "arm_engine.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ik_problem.h"
#include "model_refs.h"
#include "solve_batch.h"
#include "solve_trajectory.h"
#include "track_reactor.h"

namespace ikd::server {

KinematicsServiceImpl::KinematicsServiceImpl(ModelStore* store, WorkerPool* pool,
                                             ModelLimits model_limits, KinematicsLimits limits,
                                             Metrics* metrics,
                                             const TrackAdmissionOptions& admission)
    : store_(store),
      pool_(pool),
      model_limits_(model_limits),
      limits_(limits),
      metrics_(metrics),
      admission_(admission) {}

grpc::ServerUnaryReactor* KinematicsServiceImpl::Solve(grpc::CallbackServerContext* context,
                                                       const v1::SolveRequest* request,
                                                       v1::SolveResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(request->arm(), "arm", *store_);
  if (!arm.ok()) {
    reactor->Finish(ToGrpcStatus(arm.status()));
    return reactor;
  }
  absl::StatusOr<PoseSolve> solve = NewArmEngine(*std::move(arm), *store_, model_limits_, limits_)
                                        ->PrepareSolve(context, *request);
  if (!solve.ok()) {
    reactor->Finish(ToGrpcStatus(solve.status()));
    return reactor;
  }
  // The default reactor may be finished from any thread, once: by this task or, when the pool
  // refuses it, right below.
  auto task = [context, reactor, response, metrics = metrics_, solve = *std::move(solve)] {
    if (context->IsCancelled()) {
      return reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    if (absl::Status solved = solve(response); !solved.ok()) {
      return reactor->Finish(ToGrpcStatus(solved));
    }
    RecordIkStep(*metrics, response->state());
    reactor->Finish(grpc::Status::OK);
  };
  if (!pool_->TrySubmit(std::move(task))) reactor->Finish(ToGrpcStatus(PoolFull()));
  return reactor;
}

grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* KinematicsServiceImpl::SolveTrajectory(
    grpc::CallbackServerContext* context, const v1::SolveTrajectoryRequest* request) {
  return StartSolveTrajectory(context, *request, *pool_, *store_, model_limits_, limits_,
                              *metrics_);
}

grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* KinematicsServiceImpl::Track(
    grpc::CallbackServerContext* /*context*/) {
  return NewTrackReactor(*store_, *pool_, model_limits_, limits_, *metrics_, admission_);
}

grpc::ServerWriteReactor<v1::SolveBatchResponse>* KinematicsServiceImpl::SolveBatch(
    grpc::CallbackServerContext* context, const v1::SolveBatchRequest* request) {
  return StartSolveBatch(context, *request, *pool_, *store_, model_limits_, limits_, *metrics_);
}

}  // namespace ikd::server