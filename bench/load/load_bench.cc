// Load benchmark (issue 7, "Load and faults"): N concurrent clients, each on its own loopback
// connection, run a mix of SolveTrajectory, Track, StepChain, Solve and model reads/writes
// against one ikd process for a warm-up and then a measured run. Reports per-RPC latency
// (p50, p99, max), errors and throughput, and the server's memory (VmRSS, VmHWM from
// /proc/PID/status) at the start, after the warm-up, during (largest sample) and after the
// run; the targets are zero errors and RSS growth under 5% from the warm-up to the
// end. Starts its own ikd (the binary next to this build, a fresh SQLite store in a temporary
// directory) unless --server (and --pid, for the memory figures) name a running one.
//
//   load_bench [--streams N] [--seconds S] [--warmup-seconds W] [--server-threads T]
//              [--ikd PATH | --server HOST:PORT --pid PID] [--quick]
#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <latch>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "ikd/v1/simulation_service.grpc.pb.h"

extern char** environ;

namespace ikd::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  int streams = 100;
  double seconds = 20.0;
  double warmup_seconds = 5.0;
  int server_threads = 2;
  std::string ikd = IKD_BINARY;
  std::string server;  // empty: start ikd
  pid_t pid = 0;
};

void Usage(std::FILE* out) {
  std::fprintf(out,
      "usage: load_bench [options]\n"
      "  --streams N          concurrent clients, a fifth of each kind (default 100)\n"
      "  --seconds S          measured run (default 20)\n"
      "  --warmup-seconds W   warm-up with the same load before the measured run (default 5)\n"
      "  --server-threads T   --threads of the ikd this program starts (default 2)\n"
      "  --ikd PATH           the ikd binary to start (default: this build's)\n"
      "  --server HOST:PORT   use a running ikd instead (its models arms/demo, scenes/demo\n"
      "                       are created if missing); --pid PID for its memory figures\n"
      "  --quick              a smoke run: 20 streams, 3 s, 1 s warm-up\n");
}

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "load_bench: %s\n", message.c_str());
  std::exit(1);
}

bool ParseArgs(int argc, char** argv, Config& config) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    auto number = [&](double lo, double hi) {
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(v >= lo && v <= hi)) {
        Fail(a + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      }
      return v;
    };
    if (a == "--quick") {
      config.streams = 20;
      config.seconds = 3;
      config.warmup_seconds = 1;
    } else if (a == "--streams" && has_value) {
      config.streams = static_cast<int>(number(5, 10000));
    } else if (a == "--seconds" && has_value) {
      config.seconds = number(0.5, 86400);
    } else if (a == "--warmup-seconds" && has_value) {
      config.warmup_seconds = number(0, 3600);
    } else if (a == "--server-threads" && has_value) {
      config.server_threads = static_cast<int>(number(1, 256));
    } else if (a == "--ikd" && has_value) {
      config.ikd = argv[++i];
    } else if (a == "--server" && has_value) {
      config.server = argv[++i];
    } else if (a == "--pid" && has_value) {
      config.pid = static_cast<pid_t>(number(1, 1 << 30));
    } else {
      const bool help = a == "--help" || a == "-h";
      Usage(help ? stdout : stderr);
      std::exit(help ? 0 : 2);
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The server

// VmRSS (with its anonymous and file-backed parts) and VmHWM of `pid` in KiB (0: unknown).
struct Memory {
  int64_t rss_kib = 0;
  int64_t anon_kib = 0;  // heap, stacks: what a leak would grow
  int64_t file_kib = 0;  // mapped code and data of the binary and its libraries
  int64_t hwm_kib = 0;
};

Memory ReadMemory(pid_t pid) {
  Memory memory;
  if (pid <= 0) return memory;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) memory.rss_kib = std::stoll(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) memory.hwm_kib = std::stoll(line.substr(6));
    if (line.rfind("RssAnon:", 0) == 0) memory.anon_kib = std::stoll(line.substr(8));
    if (line.rfind("RssFile:", 0) == 0) memory.file_kib = std::stoll(line.substr(8));
  }
  return memory;
}

// An ikd child on a kernel-chosen loopback port with a fresh store; SIGTERM and reaped at the
// end.
class IkdChild {
 public:
  IkdChild(const Config& config) {
    char pattern[] = "/tmp/ikd-load-XXXXXX";
    if (mkdtemp(pattern) == nullptr) Fail("mkdtemp failed");
    dir_ = pattern;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) Fail("pipe failed");
    std::vector<std::string> argv = {config.ikd, "--listen=127.0.0.1:0",
                                     "--store=" + dir_ + "/models.db",
                                     "--threads=" + std::to_string(config.server_threads),
                                     "--max_queued=" + std::to_string(4 * config.streams),
                                     "--max_streams_per_peer=0"};  // every client is 127.0.0.1
    std::vector<char*> args;
    for (auto& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) {
      Fail("cannot start " + config.ikd);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    out_ = fds[0];
    port_ = ReadPort();
    if (port_ <= 0) Fail("ikd did not report its port");
  }
  ~IkdChild() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    close(out_);
    std::filesystem::remove_all(dir_);
  }
  pid_t pid() const { return pid_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int ReadPort() {
    const std::regex listening("ikd listening on port (\\d+)");
    std::string text;
    std::smatch match;
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (!std::regex_search(text, match, listening)) {
      pollfd descriptor{out_, POLLIN, 0};
      if (Clock::now() > deadline || poll(&descriptor, 1, 100) < 0) return 0;
      if (descriptor.revents == 0) continue;
      char buffer[256];
      const ssize_t n = read(out_, buffer, sizeof buffer);
      if (n <= 0) return 0;
      text.append(buffer, n);
    }
    return std::stoi(match[1]);
  }

  std::string dir_;
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Clients

struct Client {
  explicit Client(const std::string& address) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
    channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    models = v1::ModelService::NewStub(channel);
    kinematics = v1::KinematicsService::NewStub(channel);
    simulation = v1::SimulationService::NewStub(channel);
  }
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::ModelService::Stub> models;
  std::unique_ptr<v1::KinematicsService::Stub> kinematics;
  std::unique_ptr<v1::SimulationService::Stub> simulation;
};

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return context;
}

template <typename Message>
Message FromJsonFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  Message message;
  if (!google::protobuf::util::JsonStringToMessage(text.str(), &message).ok()) {
    Fail("cannot parse " + path);
  }
  return message;
}

// arms/demo and scenes/demo from deploy/models (ALREADY_EXISTS is fine: a running server).
void CreateModels(Client& client) {
  v1::CreateArmRequest arm;
  arm.set_arm_id("demo");
  *arm.mutable_arm() = FromJsonFile<v1::Arm>(std::string(IKD_MODELS_DIR) + "/demo.arm.json");
  v1::Arm arm_out;
  auto context = Context();
  grpc::Status status = client.models->CreateArm(context.get(), arm, &arm_out);
  if (!status.ok() && status.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
    Fail("CreateArm: " + status.error_message());
  }
  v1::CreateSceneRequest scene;
  scene.set_scene_id("demo");
  *scene.mutable_scene() =
      FromJsonFile<v1::Scene>(std::string(IKD_MODELS_DIR) + "/demo.scene.json");
  v1::Scene scene_out;
  context = Context();
  status = client.models->CreateScene(context.get(), scene, &scene_out);
  if (!status.ok() && status.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
    Fail("CreateScene: " + status.error_message());
  }
}

v1::Vector3 LinePoint(double f) {  // the demo arm's line between the demo scene's obstacles
  v1::Vector3 v;
  v.set_x(1.1 - 0.5 * f);
  v.set_y(0.3 + 0.6 * f);
  return v;
}

// ---------------------------------------------------------------------------------------------
// The mix: each client runs one kind of call in a loop.

enum Kind { kTrajectory, kTrack, kTrackTarget, kChain, kSolve, kModelRead, kModelWrite, kKinds };
constexpr const char* kKindNames[kKinds] = {
    "SolveTrajectory (51 samples)", "Track (50 targets)", "Track target round trip",
    "StepChain (50 frames)", "Solve", "GetArm + ListScenes", "UpdateArm (SQLite)"};
constexpr int kClientKinds = 5;  // trajectory, track, chain, solve, models

// Latencies and errors of one kind, per phase.
struct Record {
  std::vector<double> seconds;
  int64_t errors = 0;
  int64_t messages = 0;
  std::string first_error;
};

class Recorder {
 public:
  void Add(Kind kind, double seconds, int64_t messages = 0) {
    std::lock_guard lock(mu_);
    records_[kind].seconds.push_back(seconds);
    records_[kind].messages += messages;
  }
  void Error(Kind kind, const grpc::Status& status) {
    std::lock_guard lock(mu_);
    if (records_[kind].errors++ == 0) {
      records_[kind].first_error =
          std::to_string(status.error_code()) + " " + status.error_message();
    }
  }
  std::vector<Record> Take() {
    std::lock_guard lock(mu_);
    std::vector<Record> out(records_, records_ + kKinds);
    for (auto& r : records_) r = Record();
    return out;
  }

 private:
  std::mutex mu_;
  Record records_[kKinds];
};

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void RunTrajectory(Client& client, Recorder& recorder) {
  v1::SolveTrajectoryRequest request;
  request.mutable_arm()->set_name("arms/demo");
  request.mutable_scene()->set_name("scenes/demo");
  auto* line = request.mutable_trajectory()->mutable_line();
  *line->mutable_from() = LinePoint(0);
  *line->mutable_to() = LinePoint(1);
  line->set_duration(1.0);
  request.set_sample_period(0.02);
  request.mutable_options()->set_seed(7);
  const auto start = Clock::now();
  auto context = Context();
  auto reader = client.kinematics->SolveTrajectory(context.get(), request);
  v1::SolveTrajectoryResponse message;
  int64_t samples = 0;
  bool summary = false;
  while (reader->Read(&message)) {
    samples += message.has_sample();
    summary = summary || message.has_summary();
  }
  grpc::Status status = reader->Finish();
  if (status.ok() && (samples != 51 || !summary)) {
    status = grpc::Status(grpc::StatusCode::DATA_LOSS, "incomplete stream");
  }
  if (!status.ok()) return recorder.Error(kTrajectory, status);
  recorder.Add(kTrajectory, Since(start), samples);
}

void RunTrack(Client& client, Recorder& recorder) {
  constexpr int kTargets = 50;
  const auto start = Clock::now();
  auto context = Context();
  auto stream = client.kinematics->Track(context.get());
  v1::TrackRequest request;
  request.mutable_config()->mutable_arm()->set_name("arms/demo");
  request.mutable_config()->mutable_scene()->set_name("scenes/demo");
  request.mutable_config()->mutable_options()->set_seed(3);
  int answered = 0;
  if (stream->Write(request)) {
    v1::TrackResponse response;
    for (int k = 0; k < kTargets; ++k) {
      request.mutable_target()->set_time(0.01 * k);
      *request.mutable_target()->mutable_position() = LinePoint(k / (kTargets - 1.0));
      const auto sent = Clock::now();
      if (!stream->Write(request) || !stream->Read(&response)) break;
      recorder.Add(kTrackTarget, Since(sent), 1);
      ++answered;
    }
    stream->WritesDone();
  }
  grpc::Status status = stream->Finish();
  if (status.ok() && answered != kTargets) {
    status = grpc::Status(grpc::StatusCode::DATA_LOSS, "incomplete stream");
  }
  if (!status.ok()) return recorder.Error(kTrack, status);
  recorder.Add(kTrack, Since(start), answered);
}

void RunChain(Client& client, Recorder& recorder) {
  v1::StepChainRequest request;
  auto* chain = request.mutable_generated();
  chain->set_shape(v1::GeneratedChain::SHAPE_HELIX);
  chain->set_num_sites(20);
  chain->set_link(0.1);
  chain->set_radius(0.2);
  chain->set_pitch(0.05);
  request.mutable_potentials()->mutable_gravity()->set_z(-9.81);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_RATTLE);
  request.set_dt(1e-3);
  request.set_steps(500);
  request.set_stride(10);
  const auto start = Clock::now();
  auto context = Context();
  auto reader = client.simulation->StepChain(context.get(), request);
  v1::ChainFrame frame;
  int64_t frames = 0;
  while (reader->Read(&frame)) ++frames;
  grpc::Status status = reader->Finish();
  if (status.ok() && frames != 50) {
    status = grpc::Status(grpc::StatusCode::DATA_LOSS, "incomplete stream");
  }
  if (!status.ok()) return recorder.Error(kChain, status);
  recorder.Add(kChain, Since(start), frames);
}

void RunSolve(Client& client, Recorder& recorder, int round) {
  v1::SolveRequest request;
  request.mutable_arm()->set_name("arms/demo");
  request.mutable_scene()->set_name("scenes/demo");
  *request.mutable_target() = LinePoint((round % 5) * 0.25);
  request.mutable_options()->set_seed(5);
  const auto start = Clock::now();
  auto context = Context();
  v1::SolveResponse response;
  const grpc::Status status = client.kinematics->Solve(context.get(), request, &response);
  if (!status.ok()) return recorder.Error(kSolve, status);
  recorder.Add(kSolve, Since(start), 1);
}

// Reads the demo models; every 10th round also rewrites this client's own arm.
void RunModels(Client& client, Recorder& recorder, const std::string& own_arm, int round) {
  auto start = Clock::now();
  auto context = Context();
  v1::GetArmRequest get;
  get.set_name("arms/demo");
  v1::Arm arm;
  grpc::Status status = client.models->GetArm(context.get(), get, &arm);
  if (status.ok()) {
    context = Context();
    v1::ListScenesResponse scenes;
    status = client.models->ListScenes(context.get(), v1::ListScenesRequest(), &scenes);
  }
  if (!status.ok()) return recorder.Error(kModelRead, status);
  recorder.Add(kModelRead, Since(start), 2);
  if (round % 10 != 0) return;

  start = Clock::now();
  context = Context();
  v1::UpdateArmRequest update;
  *update.mutable_arm() = arm;
  update.mutable_arm()->set_name(own_arm);
  update.mutable_arm()->clear_etag();
  v1::Arm updated;
  status = client.models->UpdateArm(context.get(), update, &updated);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {  // the first time
    context = Context();
    v1::CreateArmRequest create;
    create.set_arm_id(own_arm.substr(own_arm.find('/') + 1));
    *create.mutable_arm() = arm;
    status = client.models->CreateArm(context.get(), create, &updated);
  }
  if (!status.ok()) return recorder.Error(kModelWrite, status);
  recorder.Add(kModelWrite, Since(start), 1);
}

// ---------------------------------------------------------------------------------------------
// Report

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * v.size())) - 1);
  return v[i];
}

void PrintLatencies(const std::vector<Record>& records, double seconds) {
  std::printf("| call | calls | errors | p50 ms | p99 ms | max ms | calls/s | messages/s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int k = 0; k < kKinds; ++k) {
    const Record& r = records[k];
    const double max = r.seconds.empty() ? NAN : *std::max_element(r.seconds.begin(), r.seconds.end());
    std::printf("| %s | %zu | %lld | %.2f | %.2f | %.2f | %.1f | %.0f |\n", kKindNames[k],
                r.seconds.size(), static_cast<long long>(r.errors),
                1e3 * Percentile(r.seconds, 0.5), 1e3 * Percentile(r.seconds, 0.99), 1e3 * max,
                r.seconds.size() / seconds, r.messages / seconds);
  }
}

int Run(const Config& config) {
  std::optional<IkdChild> child;
  std::string address = config.server;
  pid_t pid = config.pid;
  if (address.empty()) {
    child.emplace(config);
    address = child->address();
    pid = child->pid();
  }
  Client setup(address);
  CreateModels(setup);
  const Memory at_start = ReadMemory(pid);
  std::fprintf(stderr, "load_bench: ikd %s (pid %d), %d clients, %.0f s warm-up + %.0f s\n",
               address.c_str(), pid, config.streams, config.warmup_seconds, config.seconds);

  Recorder recorder;
  std::atomic<int> phase{0};  // 0 warm-up, 1 measured, 2 stop
  std::latch connected(config.streams + 1);
  std::vector<std::thread> clients;
  for (int c = 0; c < config.streams; ++c) {
    clients.emplace_back([&, c] {
      Client client(address);
      client.channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(30));
      connected.arrive_and_wait();
      const std::string own_arm = "arms/load-" + std::to_string(c);
      for (int round = 0; phase.load() < 2; ++round) {
        switch (c % kClientKinds) {
          case 0: RunTrajectory(client, recorder); break;
          case 1: RunTrack(client, recorder); break;
          case 2: RunChain(client, recorder); break;
          case 3: RunSolve(client, recorder, round); break;
          default: RunModels(client, recorder, own_arm, round); break;
        }
      }
    });
  }
  connected.arrive_and_wait();
  std::this_thread::sleep_for(std::chrono::duration<double>(config.warmup_seconds));
  const std::vector<Record> warmup = recorder.Take();
  const Memory after_warmup = ReadMemory(pid);
  phase = 1;
  const auto measured_start = Clock::now();
  Memory during;
  while (Since(measured_start) < config.seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const Memory now = ReadMemory(pid);
    if (now.rss_kib > during.rss_kib) during = now;
    during.hwm_kib = std::max(during.hwm_kib, now.hwm_kib);
  }
  phase = 2;
  for (auto& t : clients) t.join();
  const double measured_seconds = Since(measured_start);  // includes the calls finishing
  const std::vector<Record> measured = recorder.Take();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const Memory after = ReadMemory(pid);

  int64_t errors = 0, warmup_errors = 0;
  for (const auto& r : measured) errors += r.errors;
  for (const auto& r : warmup) warmup_errors += r.errors;
  std::printf("%d concurrent clients (a fifth each: SolveTrajectory, Track, StepChain, Solve, "
              "model reads with an UpdateArm every 10th round), each on its own connection, "
              "against one ikd (--threads=%d); %.0f s warm-up, then %.1f s measured:\n\n",
              config.streams, config.server_threads, config.warmup_seconds, measured_seconds);
  PrintLatencies(measured, measured_seconds);
  std::printf("\n| server memory | VmRSS MiB | of it anonymous | of it file-backed | VmHWM MiB |\n"
              "|---|---:|---:|---:|---:|\n");
  auto row = [](const char* what, const Memory& m) {
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f |\n", what, m.rss_kib / 1024.0,
                m.anon_kib / 1024.0, m.file_kib / 1024.0, m.hwm_kib / 1024.0);
  };
  row("start (models created, idle)", at_start);
  row("after the warm-up", after_warmup);
  row("during the run (largest sample)", during);
  row("after the run (idle 1 s)", after);
  const double growth =
      after_warmup.rss_kib > 0 ? 100.0 * (after.rss_kib - after_warmup.rss_kib) / after_warmup.rss_kib
                               : NAN;
  std::printf("\nErrors: %lld in the measured run (target 0), %lld in the warm-up. RSS growth from "
              "the warm-up to the end: %+.1f%% (target < 5%%).\n",
              static_cast<long long>(errors), static_cast<long long>(warmup_errors), growth);
  for (int k = 0; k < kKinds; ++k) {
    if (!measured[k].first_error.empty()) {
      std::printf("First %s error: %s\n", kKindNames[k], measured[k].first_error.c_str());
    }
  }
  return errors == 0 && warmup_errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ikd::bench

int main(int argc, char** argv) {
  ikd::bench::Config config;
  ikd::bench::ParseArgs(argc, argv, config);
  return ikd::bench::Run(config);
}
