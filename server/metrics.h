// What ikd measures and logs: Prometheus metrics (served over HTTP at /metrics when
// ObservabilityOptions::metrics_listen is set) and a JSON access-log line per finished RPC.
// This is the only unit that knows prometheus-cpp; the rest of the server sees this interface.
//
//   auto metrics = Metrics::Create({.metrics_listen = "127.0.0.1:0"});
//   builder.experimental().SetInterceptorCreators(...(*metrics)->NewRpcInterceptorFactory());
//   (*metrics)->ObserveWorkerPool(&pool);                     // gauges read at scrape time
//   (*metrics)->RecordSolverStep(SolverKind::kIkStep, step.iterations);
//
// RPC metrics and the access log come from a gRPC server interceptor: a call's request id is
// the client's `x-request-id` metadata when it is a plausible id (1-128 characters of
// [A-Za-z0-9._:-]), else a generated one, and is sent back in the initial metadata
// `x-request-id`. Everything about a call is recorded when its status is sent, so a client
// that has the status sees the call counted. Metric children are resolved once per method (and
// per status code), never per call. The metric names and the log line are documented in
// docs/operations.md ("Metrics and logs").
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "worker_pool.h"

namespace ikd::server {

// The solver a step belongs to: the `kind` label of the solver metrics.
enum class SolverKind {
  kIkStep,          // one IK sample, target or pose (KinematicsService)
  kSimulationStep,  // one constrained time step or Brownian step (StepChain, StepPendulum)
  kPoseFit,         // one fitted frame (PoseService)
  kShapeFollow,     // one FollowShape run (its most corrections in one step)
};

// Receives one access-log line (JSON, no trailing newline); called from gRPC threads.
using AccessLogSink = std::function<void(std::string_view line)>;

struct ObservabilityOptions {
  // host:port of the Prometheus endpoint (/metrics over HTTP); "" serves none (the metrics are
  // still kept). Port 0 lets the kernel pick one (Metrics::port()).
  std::string metrics_listen;
  // One JSON line per finished RPC: time, request id, method, peer, code, latency, error,
  // messages in and out. Never payloads or metadata other than the request id. Off here, so
  // that tests and benchmarks embedding the server stay quiet; ikd's --access_log is on.
  bool access_log = false;
  // Where access-log lines go; null: stderr, one line each.
  AccessLogSink access_log_sink;
};

class Metrics {
 public:
  // UNAVAILABLE naming the address when metrics_listen cannot be served.
  static absl::StatusOr<std::unique_ptr<Metrics>> Create(const ObservabilityOptions& options);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // The port /metrics is served on; 0 when not served.
  int port() const;

  // For ServerBuilder::experimental().SetInterceptorCreators; this Metrics must outlive the
  // server. Counts, latency, open streams and messages per method; the access log.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  NewRpcInterceptorFactory();

  // Exposes the pool's threads, queue depth, busy workers and refused submissions, read at
  // scrape time: `pool` must stay alive until StopServing (or the destructor).
  void ObserveWorkerPool(const WorkerPool* pool);

  // Stops the HTTP endpoint (no scrape runs after it returns); recording goes on.
  void StopServing();

  // A solver step that ran with `iterations` constraint-solver iterations.
  void RecordSolverStep(SolverKind kind, int iterations);
  // A solver step that did not converge (an iteration cap, a singular system, a non-finite
  // state, or constraints that could not be restored).
  void RecordNotConverged(SolverKind kind);

  struct Impl;  // metrics.cc only (public so that its interceptor can name it)

 private:
  explicit Metrics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

namespace internal {
// `text` as a JSON string (quotes included), at most `max_bytes` of it; control characters and
// bytes that are not well-formed UTF-8 escaped as \u00XX. For the access log; tested alone.
void AppendJsonString(std::string& out, std::string_view text, size_t max_bytes);
}  // namespace internal

}  // namespace ikd::server
