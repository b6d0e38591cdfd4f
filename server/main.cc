// ikd: the gRPC server. Serves ModelService, KinematicsService, SimulationService, health and
// server reflection; models live in a SQLite store (--store) that survives restarts.
// SIGTERM / SIGINT: health goes NOT_SERVING, running calls get --grace to finish, exit 0.
//
//   ikd --listen=127.0.0.1:50051 --store=/var/lib/ikd/models.db
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <memory>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "model_store.h"
#include "server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "host:port to serve on (port 0: any free port)");
ABSL_FLAG(std::string, store, "ikd-models.db",
          "SQLite model store file (created if missing); \":memory:\" keeps models in memory only");
ABSL_FLAG(int, max_request_bytes, 4 << 20, "larger requests fail with RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_models, 10000, "maximum arms, and maximum scenes, in the store");
ABSL_FLAG(int, max_limbs, 1000, "maximum limbs per arm");
ABSL_FLAG(int, max_samples, 100000, "maximum samples of one SolveTrajectory");
ABSL_FLAG(int, max_obstacles, 10000, "maximum obstacles per scene (at most 10000)");
ABSL_FLAG(int, threads, 0, "worker threads for solves and simulations (0: one per CPU core)");
ABSL_FLAG(int, max_queued, 256,
          "calls waiting for a worker; beyond it new calls get RESOURCE_EXHAUSTED");
ABSL_FLAG(absl::Duration, grace, absl::Seconds(5),
          "on SIGTERM, how long running calls may take before they are cancelled");

namespace {

absl::StatusOr<std::unique_ptr<ikd::server::ModelStore>> OpenStore(const std::string& path,
                                                                   int64_t max_models) {
  ikd::server::StoreOptions options;
  options.max_models_per_collection = max_models;
  if (path == ":memory:") return ikd::server::NewMemoryModelStore(options);
  return ikd::server::OpenSqliteModelStore(path, options);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("ikd --listen=HOST:PORT --store=FILE: the ikd gRPC server");
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

  const std::string store_path = absl::GetFlag(FLAGS_store);
  auto store = OpenStore(store_path, absl::GetFlag(FLAGS_max_models));
  if (!store.ok()) {
    std::fprintf(stderr, "ikd: %s\n", store.status().ToString().c_str());
    return EXIT_FAILURE;
  }
  ikd::server::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  options.limits.max_limbs = absl::GetFlag(FLAGS_max_limbs);
  options.limits.max_obstacles = absl::GetFlag(FLAGS_max_obstacles);
  options.kinematics.max_samples = absl::GetFlag(FLAGS_max_samples);
  const int threads = absl::GetFlag(FLAGS_threads);
  options.pool.threads =
      threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  options.pool.max_queued = absl::GetFlag(FLAGS_max_queued);
  if (threads < 0 || options.pool.max_queued < 1) {
    std::fprintf(stderr, "ikd: --threads must be >= 0 and --max_queued >= 1\n");
    return EXIT_FAILURE;
  }
  auto server = ikd::server::IkdServer::Start(options, store->get());
  if (!server.ok()) {
    std::fprintf(stderr, "ikd: %s\n", server.status().ToString().c_str());
    return EXIT_FAILURE;
  }
  std::printf("ikd listening on port %d (%s), store %s\n", (*server)->port(),
              options.listen.c_str(), store_path.c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::printf("ikd: signal %d, draining\n", signal_number);
  std::fflush(stdout);
  (*server)->Shutdown(absl::GetFlag(FLAGS_grace));
  (*server)->Wait();
  return EXIT_SUCCESS;
}
