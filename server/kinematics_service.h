// ikd.v1.KinematicsService on the gRPC callback API: the Cartesian IK engine
// (solver/include/ikd/ik/tracker.h) for single poses (Solve), batches of them (SolveBatch:
// solve_batch.h), streamed trajectories (SolveTrajectory) and live tracking (Track: one joint
// state per target, scene edits between targets). Requests are validated and models resolved
// on the gRPC thread; every solve but Track's short continuations (track_reactor.cc) runs on
// the server's WorkerPool (a full queue answers RESOURCE_EXHAUSTED). A trajectory is solved
// one sample at a time, the next only after the previous sample's write completed, so a slow
// reader slows its own solve; cancellation and deadlines stop it at the next sample. Industrial arms (ArmSpec.robot) go to the robot
// library (solver/include/ikd/robot) in the same RPCs: full-pose targets when an orientation
// is given. This class holds the RPC entry points and Solve; each streaming RPC has its file
// (solve_batch.h, solve_trajectory.h, track_reactor.h); the two arm kinds answer every RPC
// through one interface (arm_engine.h), so the reactors do not branch on the kind; problem
// assembly and the single-pose answers live in ik_problem.h; wire <-> solver conversions in
// ik_conversions.h and robot_conversions.h.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>

#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "metrics.h"
#include "model_store.h"
#include "track_admission.h"
#include "validation.h"
#include "worker_pool.h"

namespace ikd::server {

// Server bounds on KinematicsService requests; beyond them INVALID_ARGUMENT names the field
// and the bound.
struct KinematicsLimits {
  int max_samples = 100'000;  // samples of one SolveTrajectory ("sample_period")
  // Hand sub-steps of one sample or target (move / (max_step_fraction * shortest limb)):
  // cancellation is checked between samples, so this bounds how long one sample can run. A
  // full move across a 1000-limb arm at the default fraction takes 20000.
  int64_t max_substeps_per_sample = 100'000;
  int max_batch_targets = 10'000;  // targets of one SolveBatch ("targets")
};

class KinematicsServiceImpl final : public v1::KinematicsService::CallbackService {
 public:
  // `store`, `pool` and `metrics` (solver iterations and non-convergence of every step) must
  // outlive every call. `admission`: Track's admission control (track_admission.h).
  KinematicsServiceImpl(ModelStore* store, WorkerPool* pool, ModelLimits model_limits,
                        KinematicsLimits limits, Metrics* metrics,
                        const TrackAdmissionOptions& admission = {});

  grpc::ServerUnaryReactor* Solve(grpc::CallbackServerContext* context,
                                  const v1::SolveRequest* request,
                                  v1::SolveResponse* response) override;
  grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* SolveTrajectory(
      grpc::CallbackServerContext* context, const v1::SolveTrajectoryRequest* request) override;
  grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* Track(
      grpc::CallbackServerContext* context) override;
  grpc::ServerWriteReactor<v1::SolveBatchResponse>* SolveBatch(
      grpc::CallbackServerContext* context, const v1::SolveBatchRequest* request) override;

 private:
  ModelStore* const store_;
  WorkerPool* const pool_;
  const ModelLimits model_limits_;
  const KinematicsLimits limits_;
  Metrics* const metrics_;
  TrackAdmission admission_;  // outlives the Track calls (as the service does)
};

}  // namespace ikd::server
