// ikd.v1.PoseService: streaming pose estimation (proto/ikd/v1/pose_service.proto) over
// ikd::pose::PoseFitter. One stream is one fitter: the first message configures it, then every
// frame is fitted on the server's WorkerPool and answered in order, one at a time (read ->
// fit -> write -> read), so a slow reader slows only its own stream. A bad frame is answered
// FRAME_OUTCOME_REJECTED and the stream goes on; a bad configuration ends it with
// INVALID_ARGUMENT naming the field.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ikd/v1/pose_service.grpc.pb.h"
#include "metrics.h"
#include "model_store.h"
#include "validation.h"
#include "worker_pool.h"

namespace ikd::server {

// Server bounds on PoseService requests (skeleton sizes: ModelLimits::max_skeleton_sites).
struct PoseLimits {
  int max_points_per_frame = 10000;  // "frame.points"
};

class PoseServiceImpl final : public v1::PoseService::CallbackService {
 public:
  // `store` (for "skeletons/{id}"), `pool` and `metrics` (iterations and failed projections
  // of every fit) must outlive the service.
  PoseServiceImpl(ModelStore* store, WorkerPool* pool, const ModelLimits& model_limits,
                  const PoseLimits& limits, Metrics* metrics)
      : store_(store),
        pool_(pool),
        model_limits_(model_limits),
        limits_(limits),
        metrics_(metrics) {}

  grpc::ServerBidiReactor<v1::EstimatePoseRequest, v1::EstimatePoseResponse>* EstimatePose(
      grpc::CallbackServerContext* context) override;

 private:
  ModelStore* const store_;
  WorkerPool* const pool_;
  const ModelLimits model_limits_;
  const PoseLimits limits_;
  Metrics* const metrics_;
};

}  // namespace ikd::server
