// KinematicsService.SolveBatch: many single poses of one arm and scene, each answered exactly
// as a Solve with the same pose and seed (ik_problem.h's single-pose answers), solved in chunks
// in parallel on the worker pool and streamed back in target order.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "kinematics_service.h"
#include "metrics.h"
#include "model_store.h"
#include "validation.h"
#include "worker_pool.h"

namespace ikd::server {

// The reactor of one SolveBatch call: the request is validated on the calling (gRPC) thread,
// every target at once (errors name targets[i]'s field), before any work starts; a new call is
// admitted only if the pool has room (else RESOURCE_EXHAUSTED).
grpc::ServerWriteReactor<v1::SolveBatchResponse>* StartSolveBatch(
    grpc::CallbackServerContext* context, const v1::SolveBatchRequest& request, WorkerPool& pool,
    ModelStore& store, const ModelLimits& model_limits, const KinematicsLimits& limits,
    Metrics& metrics);

}  // namespace ikd::server
