// ikd: the gRPC server. Serves ModelService, KinematicsService, SimulationService, health and
// server reflection; models live in a SQLite store (--store) that survives restarts, or in a
// PostgreSQL database shared by several replicas (--store=postgresql://...).
// SIGTERM / SIGINT: health goes NOT_SERVING, running calls get --grace to finish, exit 0.
//
//   ikd --listen=127.0.0.1:50051 --store=/var/lib/ikd/models.db
//   ikd --listen=0.0.0.0:50051 --tls_cert=server.pem --tls_key=server.key
//       --tokens_file=/etc/ikd/tokens        (TLS and bearer tokens: docs/operations.md)
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <memory>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "model_store.h"
#include "postgres_model_store.h"
#include "server.h"
#include "store_config.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "host:port to serve on (port 0: any free port)");
ABSL_FLAG(std::string, store, "ikd-models.db",
          "model store: a SQLite file (created if missing), \":memory:\" (models in memory only), "
          "or a PostgreSQL URI postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?PARAMS] shared by "
          "several replicas");
ABSL_FLAG(std::string, store_from_env, "",
          "read the --store value from this environment variable (keeps a database password "
          "off the command line)");
ABSL_FLAG(std::string, store_from_file, "",
          "read the --store value from this file (e.g. a mounted Secret or systemd credential)");
ABSL_FLAG(int, max_request_bytes, 4 << 20, "larger requests fail with RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_models, 10000, "maximum arms, and maximum scenes, in the store");
ABSL_FLAG(int, max_limbs, 1000, "maximum limbs per arm");
ABSL_FLAG(int, max_samples, 100000, "maximum samples of one SolveTrajectory");
ABSL_FLAG(int, max_batch_targets, 10000, "maximum targets of one SolveBatch");
ABSL_FLAG(int, max_obstacles, 10000, "maximum obstacles per scene (at most 10000)");
ABSL_FLAG(int, max_trials_per_step, 10000,
          "maximum IkOptions.trials_per_step (stochastic trials of one IK sub-step)");
ABSL_FLAG(int, max_projection_iterations, 100000,
          "maximum projection.max_iterations of StepChain / StepPendulum (corrections per step)");
ABSL_FLAG(int, threads, 0, "worker threads for solves and simulations (0: one per CPU core)");
ABSL_FLAG(int, max_queued, 256,
          "calls waiting for a worker; beyond it new calls get RESOURCE_EXHAUSTED");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificate(s): require client certificates signed by them (mutual TLS)");
ABSL_FLAG(std::string, tokens_file, "",
          "bearer tokens, one \"read-write TOKEN\" or \"read-only TOKEN\" per line: every call "
          "but health and reflection then needs \"authorization: Bearer TOKEN\"");
ABSL_FLAG(bool, allow_insecure_tokens, false,
          "accept --tokens_file on a plaintext non-loopback --listen (only behind a TLS proxy)");
ABSL_FLAG(int, max_streams_per_peer, 128,
          "streaming calls open at once per client IP address; beyond: RESOURCE_EXHAUSTED "
          "(0: no limit)");
ABSL_FLAG(int, max_live_streams, 0,
          "live streams (Track, EstimatePose) open at once on the server; beyond: "
          "RESOURCE_EXHAUSTED (0: no limit; docs/service-benchmark.md (e) measures the capacity)");
ABSL_FLAG(double, track_utilisation, 0.6,
          "Track admission: the share of the CPUs that admitted Track streams may demand, by "
          "their measured solve and answer costs and their periods; a stream past it gets "
          "RESOURCE_EXHAUSTED at once (0: no admission control; docs/operations.md)");
ABSL_FLAG(int, track_cpus, 0,
          "Track admission: the CPUs counted (0: those this process may run on)");
ABSL_FLAG(absl::Duration, default_deadline, absl::Minutes(5),
          "deadline of unary and server-streaming calls sent without one (bidirectional streams "
          "exempt; inf: none)");
ABSL_FLAG(absl::Duration, keepalive_time, absl::Minutes(1),
          "HTTP/2 PING to a client after this long without a frame from it, while it has a call "
          "open (inf: none)");
ABSL_FLAG(absl::Duration, keepalive_timeout, absl::Seconds(20),
          "close a connection, cancelling its calls, when its client does not answer a PING "
          "within this long (a frozen or vanished client)");
ABSL_FLAG(absl::Duration, grace, absl::Seconds(5),
          "on SIGTERM, how long running calls may take before they are cancelled");
ABSL_FLAG(std::string, metrics_listen, "",
          "host:port serving Prometheus metrics at /metrics over HTTP (port 0: any free port, "
          "printed at start); empty: no endpoint");
ABSL_FLAG(bool, access_log, true, "one JSON line per finished RPC on stderr");

namespace {

absl::StatusOr<std::unique_ptr<ikd::server::ModelStore>> OpenStore(const std::string& spec,
                                                                   int64_t max_models) {
  ikd::server::StoreOptions options;
  options.max_models_per_collection = max_models;
  return ikd::server::OpenModelStore(spec, options);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("ikd --listen=HOST:PORT --store=FILE: the ikd gRPC server");
  // --help lists ikd's own flags; absl's default keeps only those of a file named like the
  // program (there is none), leaving --help empty.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return !absl::StrContains(file, "absl/");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  // A file-size limit (ulimit -f, systemd LimitFSIZE=) must fail a store write with EFBIG,
  // answered RESOURCE_EXHAUSTED, instead of killing the server with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);

  // Block the stop signals before gRPC starts its threads, then wait for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const auto store_spec = ikd::server::ResolveStoreSpec({absl::GetFlag(FLAGS_store),
                                                         absl::GetFlag(FLAGS_store_from_env),
                                                         absl::GetFlag(FLAGS_store_from_file)});
  if (!store_spec.ok()) {
    std::fprintf(stderr, "ikd: %s\n", store_spec.status().ToString().c_str());
    return EXIT_FAILURE;
  }
  const std::string store_path = ikd::server::RedactPassword(*store_spec);  // for logs only
  auto store = OpenStore(*store_spec, absl::GetFlag(FLAGS_max_models));
  if (!store.ok()) {
    std::fprintf(stderr, "ikd: %s\n",
                 ikd::server::RedactPassword(store.status().ToString()).c_str());
    return EXIT_FAILURE;
  }
  ikd::server::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  options.limits.max_limbs = absl::GetFlag(FLAGS_max_limbs);
  options.limits.max_obstacles = absl::GetFlag(FLAGS_max_obstacles);
  options.limits.max_trials_per_step = absl::GetFlag(FLAGS_max_trials_per_step);
  options.simulation.max_projection_iterations = absl::GetFlag(FLAGS_max_projection_iterations);
  options.kinematics.max_samples = absl::GetFlag(FLAGS_max_samples);
  options.kinematics.max_batch_targets = absl::GetFlag(FLAGS_max_batch_targets);
  options.security.tls = {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
                          absl::GetFlag(FLAGS_tls_client_ca)};
  options.security.allow_insecure_tokens = absl::GetFlag(FLAGS_allow_insecure_tokens);
  if (const std::string tokens_file = absl::GetFlag(FLAGS_tokens_file); !tokens_file.empty()) {
    auto tokens = ikd::server::ReadTokensFile(tokens_file);
    if (!tokens.ok()) {
      std::fprintf(stderr, "ikd: %s\n", std::string(tokens.status().message()).c_str());
      return EXIT_FAILURE;
    }
    options.security.tokens = *std::move(tokens);
  }
  options.calls.max_streams_per_peer = absl::GetFlag(FLAGS_max_streams_per_peer);
  options.calls.max_live_streams = absl::GetFlag(FLAGS_max_live_streams);
  options.calls.default_deadline = absl::GetFlag(FLAGS_default_deadline);
  options.track_admission.utilisation = absl::GetFlag(FLAGS_track_utilisation);
  options.track_admission.cpus = absl::GetFlag(FLAGS_track_cpus);
  options.calls.keepalive_time = absl::GetFlag(FLAGS_keepalive_time);
  options.calls.keepalive_timeout = absl::GetFlag(FLAGS_keepalive_timeout);
  const int threads = absl::GetFlag(FLAGS_threads);
  options.pool.threads =
      threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  options.pool.max_queued = absl::GetFlag(FLAGS_max_queued);
  options.observability.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.observability.access_log = absl::GetFlag(FLAGS_access_log);
  if (threads < 0 || options.pool.max_queued < 1) {
    std::fprintf(stderr, "ikd: --threads must be >= 0 and --max_queued >= 1\n");
    return EXIT_FAILURE;
  }
  auto server = ikd::server::IkdServer::Start(options, store->get());
  if (!server.ok()) {
    std::fprintf(stderr, "ikd: %s\n", server.status().ToString().c_str());
    return EXIT_FAILURE;
  }
  std::printf("ikd listening on port %d (%s, %s%s), store %s\n", (*server)->port(),
              options.listen.c_str(), options.security.tls.enabled() ? "TLS" : "plaintext",
              options.security.tokens.empty() ? "" : ", bearer tokens", store_path.c_str());
  if ((*server)->metrics_port() != 0) {
    std::printf("ikd metrics on port %d (%s), path /metrics\n", (*server)->metrics_port(),
                options.observability.metrics_listen.c_str());
  }
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::printf("ikd: signal %d, draining\n", signal_number);
  std::fflush(stdout);
  (*server)->Shutdown(absl::GetFlag(FLAGS_grace));
  (*server)->Wait();
  return EXIT_SUCCESS;
}
