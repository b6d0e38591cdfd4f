// KinematicsService.SolveTrajectory: a hand (tool) path sampled in time, answered one message
// per sample (or samples_per_message of them) and a summary. Paths of up to 10,000 samples are
// planned as a whole first (ik::PlanPath, robot::PlanRobotPath); longer ones stream from the
// driver. Pipelined one message deep: a slow reader slows its own solve.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "kinematics_service.h"
#include "metrics.h"
#include "model_store.h"
#include "validation.h"
#include "worker_pool.h"

namespace ikd::server {

// The reactor of one SolveTrajectory call: the request is validated and the path assembled on
// the calling (gRPC) thread; a new call is admitted only if the pool has room.
grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* StartSolveTrajectory(
    grpc::CallbackServerContext* context, const v1::SolveTrajectoryRequest& request,
    WorkerPool& pool, ModelStore& store, const ModelLimits& model_limits,
    const KinematicsLimits& limits, Metrics& metrics);

}  // namespace ikd::server
