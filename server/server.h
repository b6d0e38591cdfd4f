// Assembles the ikd gRPC server: ModelService, KinematicsService, SimulationService and
// PoseService (their solves on a bounded WorkerPool), grpc.health.v1 (a status per service and
// the overall "") and server reflection, on one address.
//
//   auto store = ikd::server::NewMemoryModelStore();
//   auto server = ikd::server::IkdServer::Start({.listen = "127.0.0.1:0"}, store.get());
//   int port = (*server)->port();   // the port the kernel picked
//   (*server)->Shutdown(absl::Seconds(5));
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "authorized_services.h"
#include "call_limits.h"
#include "kinematics_service.h"
#include "metrics.h"
#include "model_service.h"
#include "model_store.h"
#include "pose_service.h"
#include "security.h"
#include "simulation_service.h"
#include "track_admission.h"
#include "validation.h"
#include "worker_pool.h"

namespace ikd::server {

struct ServerOptions {
  // host:port; port 0 lets the kernel pick one (see IkdServer::port()).
  std::string listen = "127.0.0.1:50051";
  // Larger requests fail with RESOURCE_EXHAUSTED before any handler runs.
  int max_request_bytes = 4 << 20;
  ModelLimits limits;
  WorkerPoolOptions pool;         // threads and queue of the solves
  SimulationLimits simulation;    // SimulationService request bounds
  KinematicsLimits kinematics;    // KinematicsService request bounds
  PoseLimits pose;                // PoseService request bounds
  SecurityOptions security;       // TLS and bearer tokens (security.h)
  CallLimits calls;               // streams per client address, default deadline
  TrackAdmissionOptions track_admission;  // Track streams admitted by their CPU demand
  ObservabilityOptions observability;  // /metrics endpoint and access log
};

class IkdServer {
 public:
  // Starts serving; `store` must outlive the server. UNAVAILABLE if the address cannot be
  // bound; INVALID_ARGUMENT naming the flag for unusable security options or call limits.
  static absl::StatusOr<std::unique_ptr<IkdServer>> Start(const ServerOptions& options,
                                                          ModelStore* store);
  ~IkdServer();

  int port() const { return port_; }
  // The port of /metrics (ObservabilityOptions::metrics_listen); 0 when not served.
  int metrics_port() const { return metrics_->port(); }
  // Health NOT_SERVING, then stops accepting calls and waits up to `grace` for running ones
  // before cancelling them. Idempotent.
  void Shutdown(absl::Duration grace);
  // Blocks until Shutdown has completed.
  void Wait();

 private:
  IkdServer() = default;
  // Outlives everything that records into it (the pool's tasks, the server's interceptors).
  std::unique_ptr<Metrics> metrics_;
  // Declared before server_: calls still running during shutdown finish on the pool.
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<ModelServiceImpl> model_service_;
  std::unique_ptr<SimulationServiceImpl> simulation_service_;
  std::unique_ptr<KinematicsServiceImpl> kinematics_service_;
  std::unique_ptr<PoseServiceImpl> pose_service_;
  // Set when tokens are configured: the gates are registered instead of the services.
  std::unique_ptr<TokenAuthenticator> authenticator_;
  std::unique_ptr<AuthorizedServices> authorized_services_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace ikd::server
