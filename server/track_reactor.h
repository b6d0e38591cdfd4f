// KinematicsService.Track: live tracking for a controller, one joint state per target in order,
// every answer within the arm's rate limits relative to the previous one (ik/rate_limit.h,
// robot/robot_rate_limit.h); scene edits between targets. Every answer says how long the server
// held its target (TrackResponse.held_us); with TrackConfig.deadline a target that cannot be
// answered within it is answered LATE with the arm braked from the last answer, without a
// solve; a new stream is admitted by its CPU demand (track_admission.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "kinematics_service.h"
#include "metrics.h"
#include "model_store.h"
#include "track_admission.h"
#include "validation.h"
#include "worker_pool.h"

namespace ikd::server {

// The reactor of one Track call (strictly one thing at a time: read, then configure, edit or
// solve (on the pool, or inline when short) and write, then read again).
grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* NewTrackReactor(
    ModelStore& store, WorkerPool& pool, const ModelLimits& model_limits,
    const KinematicsLimits& limits, Metrics& metrics, TrackAdmission& admission);

}  // namespace ikd::server
