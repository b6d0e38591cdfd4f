// ikd.v1.SimulationService on the gRPC callback API: chain and pendulum dynamics streamed frame
// by frame, motion on curves and surfaces, and constrained response matrices. Requests are
// validated on the gRPC thread (simulation_conversions.h); every computation runs on the
// server's WorkerPool: a new call is refused with RESOURCE_EXHAUSTED when the pool's queue is
// full, and the next frame of a running stream is queued as a continuation, computed only after
// the previous frame's write completed (one write in flight; a slow reader slows the run).
#pragma once

#include <grpcpp/grpcpp.h>

#include "ikd/v1/simulation_service.grpc.pb.h"
#include "metrics.h"
#include "simulation_conversions.h"
#include "worker_pool.h"

namespace ikd::server {

class SimulationServiceImpl final : public v1::SimulationService::CallbackService {
 public:
  // `pool` and `metrics` (solver iterations and non-convergence of every step) must outlive
  // every call (declare them before the grpc::Server that serves this).
  SimulationServiceImpl(WorkerPool* pool, SimulationLimits limits, Metrics* metrics);

  grpc::ServerWriteReactor<v1::ChainFrame>* StepChain(
      grpc::CallbackServerContext* context, const v1::StepChainRequest* request) override;
  grpc::ServerWriteReactor<v1::PendulumFrame>* StepPendulum(
      grpc::CallbackServerContext* context, const v1::StepPendulumRequest* request) override;
  grpc::ServerUnaryReactor* FollowShape(grpc::CallbackServerContext* context,
                                        const v1::FollowShapeRequest* request,
                                        v1::FollowShapeResponse* response) override;
  grpc::ServerUnaryReactor* ResponseMatrix(grpc::CallbackServerContext* context,
                                           const v1::ResponseMatrixRequest* request,
                                           v1::ResponseMatrixResponse* response) override;

 private:
  WorkerPool* const pool_;
  const SimulationLimits limits_;
  Metrics* const metrics_;
};

}  // namespace ikd::server
