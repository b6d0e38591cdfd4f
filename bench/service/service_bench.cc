// Service benchmark (issue 4, "Benchmark (bench/)"): the real ikd server started in this process
// on a loopback port and driven through real gRPC stubs.
//  (a) SolveTrajectory throughput: joint states per second streamed over gRPC against the same
//      solve in process (ikd::ik::SolveTrajectory, same arm, path, options and seed), in
//      interleaved repetitions; the streamed joint positions must equal the in-process ones.
//  (b) Track round-trip latency (Write of a target -> Read of its joint state) with 1, 10 and
//      50 concurrent streams, each sending targets at 1 kHz.
//  (c) Memory: process RSS with K open idle Track streams against none, and across 10,000
//      sequential short Track streams. Client and server share this process, so both are in the
//      figures.
// Prints Markdown tables; every number and ratio is measured in this one run.
//
//   service_bench [--quick] [--samples N] [--repeats R] [--track-seconds S]
//                 [--idle-streams K] [--short-streams N] [--server-threads T]
#include <grpcpp/grpcpp.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <future>
#include <latch>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "ikd/ik/arm.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"
#include "ikd/pose/pose_fitter.h"
#include "ikd/pose/skeleton.h"
#include "ikd/v1/pose_service.grpc.pb.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"

namespace ikd::bench {
namespace {

using Clock = std::chrono::steady_clock;
using TrackStream = grpc::ClientReaderWriter<v1::TrackRequest, v1::TrackResponse>;

// ---------------------------------------------------------------------------------------------
// Configuration

struct Config {
  int trajectory_samples = 2000;  // (a) samples of the circle
  double sample_period = 0.005;   // (a) s between samples
  int repeats = 5;                // (a) timed runs of each side, interleaved
  std::vector<int> concurrency = {1, 10, 50};  // (b) concurrent Track streams
  double track_seconds = 3.0;     // (b) paced targets per stream = track_seconds * 1 kHz
  int idle_streams = 1000;        // (c) open idle streams
  int short_streams = 10000;      // (c) sequential short streams
  int memory_sample_every = 1000; // (c) RSS sample interval of the short streams
  int server_threads = 0;         // the server's solve pool; 0: one per core, as ikd's default
  int pose_frames = 10000;        // (d) Human17 frames streamed through PoseService
  bool quick = false;
  bool help = false;
};

void Usage(std::FILE* out) {
  std::fprintf(out,
      "usage: service_bench [options]\n"
      "  --quick             a smoke run: 400 samples, 2 repeats, 0.3 s streams, 50 idle and\n"
      "                      1000 short streams\n"
      "  --samples N         SolveTrajectory samples (default 2000)\n"
      "  --repeats R         timed SolveTrajectory runs per side (default 5)\n"
      "  --track-seconds S   paced 1 kHz targets per Track stream, seconds (default 3)\n"
      "  --idle-streams K    open idle Track streams for the memory per stream (default 1000)\n"
      "  --pose-frames N     Human17 frames streamed through PoseService (default 10000)\n"
      "  --short-streams N   sequential short Track streams (default 10000, RSS every N/10)\n"
      "  --server-threads T  the server's solve pool threads (default 0: one per core, as ikd)\n");
}

void ApplyQuick(Config& config) {
  config.quick = true;
  config.trajectory_samples = 400;
  config.repeats = 2;
  config.track_seconds = 0.3;
  config.idle_streams = 50;
  config.short_streams = 1000;
  config.pose_frames = 1000;
}

bool ParseArgs(int argc, char** argv, Config& config) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](double lo, double hi, double& out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      out = std::strtod(argv[++i], &end);
      return *end == '\0' && out >= lo && out <= hi;
    };
    double v = 0.0;
    if (a == "--quick") {
      ApplyQuick(config);
    } else if (a == "--samples" && value(2, 100000, v)) {
      config.trajectory_samples = static_cast<int>(v);
    } else if (a == "--repeats" && value(1, 100, v)) {
      config.repeats = static_cast<int>(v);
    } else if (a == "--track-seconds" && value(0.01, 60, v)) {
      config.track_seconds = v;
    } else if (a == "--pose-frames" && value(10, 10000000, v)) {
      config.pose_frames = static_cast<int>(v);
    } else if (a == "--idle-streams" && value(1, 100000, v)) {
      config.idle_streams = static_cast<int>(v);
    } else if (a == "--short-streams" && value(10, 1000000, v)) {
      config.short_streams = static_cast<int>(v);
    } else if (a == "--server-threads" && value(0, 64, v)) {
      config.server_threads = static_cast<int>(v);
    } else {
      config.help = a == "--help" || a == "-h";
      Usage(config.help ? stdout : stderr);
      return config.help;
    }
  }
  config.memory_sample_every = std::max(1, config.short_streams / 10);
  if (config.server_threads == 0) {
    config.server_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  return true;
}

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "service_bench: %s\n", message.c_str());
  std::exit(1);
}

void Progress(const std::string& message) {
  std::fprintf(stderr, "service_bench: %s\n", message.c_str());
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CLOCK_PROCESS_CPUTIME_ID (every thread) or CLOCK_THREAD_CPUTIME_ID (the caller's).
double CpuSeconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

// ---------------------------------------------------------------------------------------------
// The problem: issue 4's planar 7-link arm on a hand circle inside its reach shell (0.55-1.05 m
// from the base; the arm reaches 1.4 m), free space, default tracker options with a fixed seed.

constexpr int kLimbs = 7;
constexpr double kLimbLength = 0.2;
constexpr double kLimbRadius = 0.02;
constexpr double kCircleX = 0.8, kCircleY = 0.2, kCircleRadius = 0.25;
constexpr uint64_t kSeed = 7;
constexpr int kBatch = 100;  // samples per message of the batched throughput run
constexpr double kTrackPeriod = 1e-3;      // 1 kHz targets
constexpr double kTrackLoopSeconds = 2.0;  // Track hand: one loop per 2 s, 0.79 mm per target

Eigen::Vector3d CircleCenter() { return {kCircleX, kCircleY, 0.0}; }
Eigen::Vector3d CircleStart() { return {kCircleX + kCircleRadius, kCircleY, 0.0}; }

// The Track hand position at time t (same circle, counter-clockwise from CircleStart).
Eigen::Vector3d TrackTargetAt(double t) {
  const double angle = 2 * std::numbers::pi * t / kTrackLoopSeconds;
  return CircleCenter() + kCircleRadius * Eigen::Vector3d(std::cos(angle), std::sin(angle), 0);
}

v1::Vector3 ToProto(const Eigen::Vector3d& p) {
  v1::Vector3 out;
  out.set_x(p.x());
  out.set_y(p.y());
  out.set_z(p.z());
  return out;
}

v1::ArmSpec ArmSpecProto() {
  v1::ArmSpec spec;
  spec.set_planar(true);
  for (int k = 0; k < kLimbs; ++k) {
    v1::Limb* limb = spec.add_limbs();
    limb->set_length(kLimbLength);
    limb->set_radius(kLimbRadius);
  }
  return spec;
}

// The same arm as ArmSpecProto, built directly (base at the origin, identity orientation).
ik::ArmSpec ArmSpecSolver() {
  ik::ArmSpec spec;
  spec.planar = true;
  for (int k = 0; k < kLimbs; ++k) spec.limbs.push_back({kLimbLength, kLimbRadius});
  return spec;
}

// The tracker's default 24 stochastic trials per sub-step, or none (plain projection: a
// diagnostic that leaves little besides the per-message cost of the service).
enum class Trials { kDefault, kNone };

// Zero proto fields mean the solver defaults, so only the seed (and the trials) differ.
v1::IkOptions OptionsProto(Trials trials = Trials::kDefault) {
  v1::IkOptions options;
  options.set_seed(kSeed);
  options.set_no_trials(trials == Trials::kNone);
  return options;
}

ik::IkOptions SolverOptions(Trials trials = Trials::kDefault) {
  ik::IkOptions options;
  options.seed = kSeed;
  if (trials == Trials::kNone) options.trials_per_step = 0;
  return options;
}

ik::Arm MakeArm() {
  absl::StatusOr<ik::Arm> arm = ik::Arm::Create(ArmSpecSolver());
  if (!arm.ok()) Fail("arm: " + arm.status().ToString());
  return *std::move(arm);
}

// Samples at 0, period, ..., duration: exactly config.trajectory_samples of them.
double TrajectoryDuration(const Config& config) {
  return (config.trajectory_samples - 1) * config.sample_period;
}

v1::SolveTrajectoryRequest TrajectoryRequest(const Config& config, Trials trials, int batch) {
  v1::SolveTrajectoryRequest request;
  request.set_samples_per_message(batch);
  *request.mutable_arm()->mutable_spec() = ArmSpecProto();
  v1::ArcPath* arc = request.mutable_trajectory()->mutable_arc();
  *arc->mutable_center() = ToProto(CircleCenter());
  *arc->mutable_axis() = ToProto(Eigen::Vector3d::UnitZ());
  *arc->mutable_start() = ToProto(CircleStart());
  arc->set_angle(2 * std::numbers::pi);
  arc->set_duration(TrajectoryDuration(config));
  request.set_sample_period(config.sample_period);
  *request.mutable_options() = OptionsProto(trials);
  return request;
}

void SetDeadline(grpc::ClientContext& context, double seconds) {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)));
}

// ---------------------------------------------------------------------------------------------
// Statistics

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * values.size()));  // nearest rank
  return values[std::max<size_t>(rank, 1) - 1];
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double Mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return values.empty() ? 0.0 : sum / values.size();
}

// ---------------------------------------------------------------------------------------------
// (a) SolveTrajectory throughput

using JointPath = std::vector<std::vector<double>>;  // joint positions per sample

struct TrajectoryRun {
  double seconds = 0.0;              // client wall time of the whole solve
  // gRPC: CPU time of the whole process (client, gRPC and server threads); in process: the
  // solving thread's.
  double cpu_seconds = 0.0;
  double client_cpu_seconds = 0.0;   // gRPC: the calling (reading) thread's CPU time
  double server_solve_seconds = 0.0; // gRPC: the summary's solve time (0 in process)
  JointPath positions;
};

// Call to Finish, including the client's parsing of every message.
TrajectoryRun SolveOverGrpc(v1::KinematicsService::Stub& stub,
                            const v1::SolveTrajectoryRequest& request) {
  TrajectoryRun run;
  run.positions.reserve(static_cast<size_t>(
      request.trajectory().arc().duration() / request.sample_period() + 2));
  const Clock::time_point start = Clock::now();
  const double cpu_start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  const double client_cpu_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  grpc::ClientContext context;
  SetDeadline(context, 300);
  auto reader = stub.SolveTrajectory(&context, request);
  v1::SolveTrajectoryResponse response;
  while (reader->Read(&response)) {
    if (response.has_summary()) {
      run.server_solve_seconds = response.summary().solve_seconds();
    } else if (response.has_sample()) {
      const auto& p = response.sample().positions();
      run.positions.emplace_back(p.begin(), p.end());
    }
    for (const v1::JointState& state : response.samples()) {  // a batch
      run.positions.emplace_back(state.positions().begin(), state.positions().end());
    }
  }
  const grpc::Status status = reader->Finish();
  run.seconds = SecondsSince(start);
  run.cpu_seconds = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
  run.client_cpu_seconds = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - client_cpu_start;
  if (!status.ok()) Fail("SolveTrajectory: " + status.error_message());
  return run;
}

// What the server does for the request, without gRPC: build the arm and the path, solve.
TrajectoryRun SolveInProcess(const Config& config, Trials trials) {
  const ik::ArmSpec spec = ArmSpecSolver();
  const ik::IkOptions options = SolverOptions(trials);
  const Clock::time_point start = Clock::now();
  const double cpu_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  absl::StatusOr<ik::Arm> arm = ik::Arm::Create(spec);
  if (!arm.ok()) Fail("arm: " + arm.status().ToString());
  absl::StatusOr<ik::Trajectory> path =
      ik::Trajectory::Arc(CircleCenter(), Eigen::Vector3d::UnitZ(), CircleStart(),
                          2 * std::numbers::pi, TrajectoryDuration(config));
  if (!path.ok()) Fail("path: " + path.status().ToString());
  absl::StatusOr<std::vector<ik::IkResult>> steps =
      ik::SolveTrajectory(*arm, nullptr, *path, config.sample_period, options);
  TrajectoryRun run;
  run.seconds = SecondsSince(start);
  run.cpu_seconds = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
  if (!steps.ok()) Fail("in-process solve: " + steps.status().ToString());
  for (const ik::IkResult& step : *steps) run.positions.push_back(step.angles);
  return run;
}

struct OutputComparison {
  int64_t values = 0;
  int64_t bit_differences = 0;
  double max_abs_difference = 0.0;
};

// Fails unless both runs produced the same joint path (same sample count, every position
// within 1e-12 rad): only then is the timing a comparison of the same work.
OutputComparison CompareOrFail(const JointPath& grpc_path, const JointPath& local_path) {
  if (grpc_path.size() != local_path.size()) {
    Fail("gRPC returned " + std::to_string(grpc_path.size()) + " samples, in process " +
         std::to_string(local_path.size()));
  }
  OutputComparison c;
  for (size_t s = 0; s < grpc_path.size(); ++s) {
    if (grpc_path[s].size() != local_path[s].size()) Fail("joint counts differ");
    for (size_t j = 0; j < grpc_path[s].size(); ++j) {
      const double a = grpc_path[s][j], b = local_path[s][j];
      ++c.values;
      if (std::bit_cast<uint64_t>(a) != std::bit_cast<uint64_t>(b)) ++c.bit_differences;
      c.max_abs_difference = std::max(c.max_abs_difference, std::abs(a - b));
    }
  }
  if (!(c.max_abs_difference <= 1e-12)) {
    Fail("gRPC and in-process joint positions differ by up to " +
         std::to_string(c.max_abs_difference) + " rad: not the same work");
  }
  return c;
}

struct ThroughputResult {
  Trials trials = Trials::kDefault;
  int batch = 1;  // samples per message
  int samples = 0;
  std::vector<double> grpc_seconds, local_seconds, server_solve_seconds;
  std::vector<double> grpc_cpu_seconds, grpc_client_cpu_seconds, local_cpu_seconds;
  OutputComparison comparison;  // summed over every checked pair
};

void Accumulate(OutputComparison& total, const OutputComparison& c) {
  total.values += c.values;
  total.bit_differences += c.bit_differences;
  total.max_abs_difference = std::max(total.max_abs_difference, c.max_abs_difference);
}

// An untimed pair first (connection set-up, warm caches), then `repeats` timed pairs whose
// order alternates so that drift of the machine's load hits both sides alike.
ThroughputResult MeasureThroughput(v1::KinematicsService::Stub& stub, const Config& config,
                                   Trials trials, int batch = 1) {
  const v1::SolveTrajectoryRequest request = TrajectoryRequest(config, trials, batch);
  const JointPath reference = SolveInProcess(config, trials).positions;
  ThroughputResult result;
  result.trials = trials;
  result.batch = batch;
  result.samples = static_cast<int>(reference.size());
  Accumulate(result.comparison, CompareOrFail(SolveOverGrpc(stub, request).positions, reference));
  for (int r = 0; r < config.repeats; ++r) {
    TrajectoryRun grpc_run, local_run;
    if (r % 2 == 0) {
      grpc_run = SolveOverGrpc(stub, request);
      local_run = SolveInProcess(config, trials);
    } else {
      local_run = SolveInProcess(config, trials);
      grpc_run = SolveOverGrpc(stub, request);
    }
    Accumulate(result.comparison, CompareOrFail(grpc_run.positions, local_run.positions));
    result.grpc_seconds.push_back(grpc_run.seconds);
    result.local_seconds.push_back(local_run.seconds);
    result.server_solve_seconds.push_back(grpc_run.server_solve_seconds);
    result.grpc_cpu_seconds.push_back(grpc_run.cpu_seconds);
    result.grpc_client_cpu_seconds.push_back(grpc_run.client_cpu_seconds);
    result.local_cpu_seconds.push_back(local_run.cpu_seconds);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Track streams

v1::TrackRequest TrackConfigRequest() {
  v1::TrackRequest request;
  *request.mutable_config()->mutable_arm()->mutable_spec() = ArmSpecProto();
  *request.mutable_config()->mutable_options() = OptionsProto();
  return request;
}

v1::TrackRequest TargetRequest(double time, const Eigen::Vector3d& position) {
  v1::TrackRequest request;
  request.mutable_target()->set_time(time);
  *request.mutable_target()->mutable_position() = ToProto(position);
  return request;
}

// Sends the config and one target and reads its joint state: the stream is then configured
// on the server, with its tracker built and one solve done.
void ConfigureAndAnswerOne(TrackStream& stream, const Eigen::Vector3d& target) {
  v1::TrackResponse response;
  if (!stream.Write(TrackConfigRequest()) || !stream.Write(TargetRequest(0.0, target)) ||
      !stream.Read(&response)) {
    Fail("Track: the stream broke while configuring: " + stream.Finish().error_message());
  }
}

void CloseOrFail(TrackStream& stream) {
  v1::TrackResponse extra;
  stream.WritesDone();
  if (stream.Read(&extra)) Fail("Track: an answer nobody asked for");
  const grpc::Status status = stream.Finish();
  if (!status.ok()) Fail("Track: " + status.error_message());
}

// ---------------------------------------------------------------------------------------------
// (b) Track latency at 1 kHz

struct StreamLatencies {
  std::vector<double> round_trip_us;  // per answered target
  int sent = 0;
  int out_of_order = 0;     // answers whose time is not the next target's
  double max_send_lag_us = 0.0;  // how late a Write started against the 1 kHz schedule
  double last_answer_s = 0.0;    // when the last answer arrived, s after target 0's due time
  double writer_cpu_s = 0.0, reader_cpu_s = 0.0;  // the client threads' own CPU time
};

// A channel with its own connection, as separate controllers would have (channels to one
// address otherwise share a subchannel).
std::shared_ptr<grpc::Channel> OwnChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// Process CPU time (every thread: client and server) against wall time since construction.
class CpuClock {
 public:
  CpuClock() : wall_(Clock::now()), cpu_(CpuSeconds(CLOCK_PROCESS_CPUTIME_ID)) {}
  double WallSeconds() const { return SecondsSince(wall_); }
  double CoresUsed() const {
    return (CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_) / WallSeconds();
  }

 private:
  Clock::time_point wall_;
  double cpu_;
};

int64_t NanosSince(Clock::time_point origin) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin).count();
}

// Target k (1..n) goes out at origin + k ms; its Write start time is published for the reader.
void WritePacedTargets(TrackStream& stream, Clock::time_point origin, int n,
                       std::vector<std::atomic<int64_t>>& sent_ns, StreamLatencies& out) {
  const double cpu_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  for (int k = 1; k <= n; ++k) {
    const auto due = origin + std::chrono::nanoseconds(std::llround(k * kTrackPeriod * 1e9));
    std::this_thread::sleep_until(due);
    const int64_t now_ns = NanosSince(origin);
    sent_ns[k].store(now_ns, std::memory_order_release);
    const double lag_us = (now_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        due - origin).count()) * 1e-3;
    out.max_send_lag_us = std::max(out.max_send_lag_us, lag_us);
    if (!stream.Write(TargetRequest(k * kTrackPeriod, TrackTargetAt(k * kTrackPeriod)))) break;
    ++out.sent;
  }
  stream.WritesDone();
  out.writer_cpu_s = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
}

// Reads every answer; each is matched to its target by time (a target's time is k ms).
void ReadAnswers(TrackStream& stream, Clock::time_point origin, int n,
                 const std::vector<std::atomic<int64_t>>& sent_ns, StreamLatencies& out) {
  out.round_trip_us.reserve(n);
  const double cpu_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  v1::TrackResponse response;
  for (int expected = 1; stream.Read(&response); ++expected) {
    const int64_t received_ns = NanosSince(origin);
    const int64_t k = std::llround(response.state().time() / kTrackPeriod);
    out.last_answer_s = received_ns * 1e-9;
    if (k != expected) ++out.out_of_order;
    if (k < 1 || k > n) continue;
    out.round_trip_us.push_back((received_ns - sent_ns[k].load(std::memory_order_acquire)) * 1e-3);
  }
  out.reader_cpu_s = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
}

// One controller: configure and answer one target (untimed), wait for the others, then send
// n paced targets and time each answer.
StreamLatencies RunPacedStream(const std::string& address, Clock::duration phase, int n,
                               double deadline_seconds, std::latch& primed,
                               std::shared_future<Clock::time_point> start) {
  auto stub = v1::KinematicsService::NewStub(OwnChannel(address));
  grpc::ClientContext context;
  SetDeadline(context, deadline_seconds);
  auto stream = stub->Track(&context);
  ConfigureAndAnswerOne(*stream, TrackTargetAt(0.0));
  primed.count_down();
  const Clock::time_point origin = start.get() + phase;
  std::vector<std::atomic<int64_t>> sent_ns(n + 1);
  StreamLatencies out;
  std::thread reader([&] { ReadAnswers(*stream, origin, n, sent_ns, out); });
  WritePacedTargets(*stream, origin, n, sent_ns, out);
  reader.join();
  const grpc::Status status = stream->Finish();
  if (!status.ok()) Fail("Track: " + status.error_message());
  return out;
}

struct LatencyRow {
  std::string label;
  int streams = 0;
  int sent = 0, answered = 0, out_of_order = 0;
  double p50_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
  double answers_per_second_per_stream = 0;  // answered / (target 0 due .. last answer)
  double cpu_cores = 0;  // process CPU time (user + system) / wall time of the measurement
  double client_cpu_s = 0;     // the writer and reader threads' own CPU time
  double client_cpu_cores = 0; // client_cpu_s / wall time of the measurement
  double max_send_lag_us = 0;
  bool over_grpc = true;
  bool all_in_order() const { return out_of_order == 0 && answered == sent; }
};

LatencyRow Summarize(const std::string& label, int streams,
                     const std::vector<StreamLatencies>& per_stream) {
  LatencyRow row{.label = label, .streams = streams};
  std::vector<double> all;
  for (const StreamLatencies& s : per_stream) {
    all.insert(all.end(), s.round_trip_us.begin(), s.round_trip_us.end());
    row.sent += s.sent;
    row.out_of_order += s.out_of_order;
    row.max_send_lag_us = std::max(row.max_send_lag_us, s.max_send_lag_us);
    row.client_cpu_s += s.writer_cpu_s + s.reader_cpu_s;
    row.answers_per_second_per_stream +=
        s.last_answer_s > 0 ? s.round_trip_us.size() / s.last_answer_s / streams : 0.0;
  }
  row.answered = static_cast<int>(all.size());
  row.p50_us = Percentile(all, 0.50);
  row.p99_us = Percentile(all, 0.99);
  row.max_us = Percentile(all, 1.0);
  row.mean_us = Mean(all);
  return row;
}

// `streams` controllers at once, their 1 kHz phases spread evenly over the period.
LatencyRow MeasureTrackLatency(const std::string& address, int streams, const Config& config) {
  const int n = static_cast<int>(std::lround(config.track_seconds / kTrackPeriod));
  const double deadline_seconds = config.track_seconds + 150.0;
  std::latch primed(streams);
  std::promise<Clock::time_point> start;
  const std::shared_future<Clock::time_point> started = start.get_future().share();
  std::vector<StreamLatencies> results(streams);
  std::vector<std::thread> threads;
  for (int i = 0; i < streams; ++i) {
    const auto phase = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(kTrackPeriod * i / streams));
    threads.emplace_back([&, i, phase] {
      results[i] = RunPacedStream(address, phase, n, deadline_seconds, primed, started);
    });
  }
  primed.wait();
  const CpuClock cpu;
  start.set_value(Clock::now() + std::chrono::milliseconds(20));
  for (std::thread& t : threads) t.join();
  LatencyRow row = Summarize("gRPC Track", streams, results);
  row.cpu_cores = cpu.CoresUsed();
  row.client_cpu_cores = row.client_cpu_s / cpu.WallSeconds();
  return row;
}

// The solve alone: ArmTracker::StepTo on the same targets, one stream, no gRPC, not paced.
LatencyRow MeasureStepToInProcess(const Config& config) {
  const int n = static_cast<int>(std::lround(config.track_seconds / kTrackPeriod));
  const ik::Arm arm = MakeArm();
  absl::StatusOr<planning::Scene> empty =
      planning::Scene::Create({});  // the server tracks in a scene too
  if (!empty.ok()) Fail("scene: " + empty.status().ToString());
  absl::StatusOr<ik::ArmTracker> tracker = ik::ArmTracker::Create(arm, &*empty, SolverOptions());
  if (!tracker.ok()) Fail("tracker: " + tracker.status().ToString());
  if (!tracker->StepTo(TrackTargetAt(0.0), 0.0).ok()) Fail("in-process StepTo");
  StreamLatencies out;
  for (int k = 1; k <= n; ++k) {
    const Clock::time_point start = Clock::now();
    if (!tracker->StepTo(TrackTargetAt(k * kTrackPeriod), k * kTrackPeriod).ok()) {
      Fail("in-process StepTo");
    }
    out.round_trip_us.push_back(SecondsSince(start) * 1e6);
    ++out.sent;
  }
  LatencyRow row = Summarize("in process StepTo (no gRPC, unpaced)", 1, {out});
  row.over_grpc = false;
  return row;
}

// ---------------------------------------------------------------------------------------------
// (c) Memory

struct MemorySample {
  int64_t streams = 0;     // streams done (short) or open (idle)
  int64_t rss_bytes = 0;   // VmRSS of this process: server and client
  int64_t heap_bytes = 0;  // malloc'd and not freed (glibc mallinfo2: arenas + mmapped chunks)
};

int64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    int64_t kilobytes = 0;
    fields >> kilobytes;
    return kilobytes * 1024;
  }
  Fail("no VmRSS in /proc/self/status");
}

MemorySample SampleMemory(int64_t streams) {
  const struct mallinfo2 heap = mallinfo2();
  return {streams, ResidentBytes(), static_cast<int64_t>(heap.uordblks + heap.hblkhd)};
}

// A hand target 1 mm from the home pose: one real but short solve per stream.
Eigen::Vector3d NearHomeTarget() {
  const ik::Arm arm = MakeArm();
  return arm.HomeSites().col(arm.hand()) + Eigen::Vector3d(0.0, 0.001, 0.0);
}

// Open, configure, one target, close; the RSS every `every` streams.
std::vector<MemorySample> RunShortStreams(v1::KinematicsService::Stub& stub, int count,
                                          int every) {
  const Eigen::Vector3d target = NearHomeTarget();
  std::vector<MemorySample> series;
  for (int i = 1; i <= count; ++i) {
    grpc::ClientContext context;
    SetDeadline(context, 30);
    auto stream = stub.Track(&context);
    ConfigureAndAnswerOne(*stream, target);
    CloseOrFail(*stream);
    if (i % every == 0) series.push_back(SampleMemory(i));
  }
  return series;
}

struct IdleStream {
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<TrackStream> stream;
};

struct IdleMemory {
  MemorySample before, open, after_close;
};

// K configured streams held open without traffic, then closed.
IdleMemory MeasureIdleStreams(v1::KinematicsService::Stub& stub, int count) {
  const Eigen::Vector3d target = NearHomeTarget();
  IdleMemory m;
  m.before = SampleMemory(0);
  std::vector<IdleStream> open(count);
  for (IdleStream& s : open) {
    s.context = std::make_unique<grpc::ClientContext>();
    SetDeadline(*s.context, 300);
    s.stream = stub.Track(s.context.get());
    ConfigureAndAnswerOne(*s.stream, target);
  }
  m.open = SampleMemory(count);
  for (IdleStream& s : open) CloseOrFail(*s.stream);
  open.clear();
  m.after_close = SampleMemory(0);
  return m;
}

// ---------------------------------------------------------------------------------------------
// Report

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

std::string Fixed(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

double Mib(int64_t bytes) { return bytes / (1024.0 * 1024.0); }

void PrintSetup(const Config& config, const std::string& load_before) {
  std::printf(
      "Arm: planar, %d limbs x %.2f m, radius %.0f mm, free space; tracker defaults, seed %llu. "
      "Server in this process on 127.0.0.1 (solve pool: %d threads); %u hardware threads; "
      "load average before the run: %s.%s\n\n",
      kLimbs, kLimbLength, kLimbRadius * 1e3, static_cast<unsigned long long>(kSeed),
      config.server_threads, std::thread::hardware_concurrency(), load_before.c_str(),
      config.quick ? " **--quick: smoke-run sizes, not the issue's.**" : "");
}

const char* TrialsName(Trials trials) {
  return trials == Trials::kDefault ? "default" : "no trials (diagnostic)";
}

// Time the gRPC side spends beyond the server's own solve, per joint state.
double NonSolveMicrosPerState(const ThroughputResult& r) {
  return 1e6 * (Median(r.grpc_seconds) - Median(r.server_solve_seconds)) / r.samples;
}

std::string ThroughputLabel(const ThroughputResult& r) {
  std::string label = TrialsName(r.trials);
  if (r.batch > 1) label += ", " + std::to_string(r.batch) + " samples per message";
  return label;
}

double TimeRatio(const ThroughputResult& r) {
  return Median(r.grpc_seconds) / Median(r.local_seconds);
}

void PrintThroughputRuns(const ThroughputResult& r) {
  for (size_t i = 0; i < r.grpc_seconds.size(); ++i) {
    std::printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                ThroughputLabel(r).c_str(), i + 1, 1e3 * r.local_seconds[i], 1e3 * r.grpc_seconds[i],
                1e3 * r.server_solve_seconds[i], 1e3 * r.local_cpu_seconds[i],
                1e3 * r.grpc_cpu_seconds[i], 1e3 * r.grpc_client_cpu_seconds[i],
                r.grpc_seconds[i] / r.local_seconds[i]);
  }
}

std::string BitIdentity(const OutputComparison& c) {
  if (c.bit_differences == 0) return "bit-identical";
  return std::to_string(c.bit_differences) + " not bit-identical";
}

void PrintThroughput(const std::vector<ThroughputResult>& results, const Config& config) {
  std::printf(
      "### (a) SolveTrajectory: gRPC streaming vs in process\n\n"
      "Circle r = %.2f m about (%.1f, %.1f, 0), %d samples every %.3f s; %d timed runs per side, "
      "interleaved (order alternating) after one untimed pair. gRPC: client wall time from the "
      "call to Finish, every message parsed; in process: Arm::Create + Trajectory::Arc + "
      "ik::SolveTrajectory on one thread. CPU: gRPC the whole process (client, gRPC and server "
      "threads) and, of it, the client's reading thread; in process the solving thread. Server "
      "solve: the summary's solve_seconds (StepTo calls only).\n\n",
      kCircleRadius, kCircleX, kCircleY, results.front().samples, config.sample_period,
      config.repeats);
  std::printf(
      "| tracker options | in process ms | gRPC ms | in process states/s | gRPC states/s | "
      "**gRPC / in process time** | in process CPU ms | gRPC CPU ms | of which client thread "
      "ms | server solve ms | gRPC µs per state beyond the solve |\n"
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const ThroughputResult& r : results) {
    const double local = Median(r.local_seconds), grpc = Median(r.grpc_seconds);
    std::printf("| %s | %.2f | %.2f | %.0f | %.0f | **%.2f** | %.2f | %.2f | %.2f | %.2f | "
                "%.1f |\n",
                ThroughputLabel(r).c_str(), 1e3 * local, 1e3 * grpc, r.samples / local,
                r.samples / grpc, TimeRatio(r), 1e3 * Median(r.local_cpu_seconds),
                1e3 * Median(r.grpc_cpu_seconds), 1e3 * Median(r.grpc_client_cpu_seconds),
                1e3 * Median(r.server_solve_seconds), NonSolveMicrosPerState(r));
  }
  std::printf("\nMedians of the runs below.\n\n"
              "| tracker options | run | in process ms | gRPC ms | server solve ms | "
              "in process CPU ms | gRPC CPU ms | of which client thread ms | gRPC / in process |\n"
              "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const ThroughputResult& r : results) PrintThroughputRuns(r);
  std::printf("\nSame work: ");
  for (const ThroughputResult& r : results) {
    const OutputComparison& c = r.comparison;
    std::printf("%s: %lld joint positions compared (every sample of %d runs per side), %s, max "
                "|difference| %.1e rad. ", ThroughputLabel(r).c_str(), static_cast<long long>(c.values),
                config.repeats + 1, BitIdentity(c).c_str(), c.max_abs_difference);
  }
  std::printf("\n\n");
}

std::string IfOverGrpc(const LatencyRow& r, const std::string& text) {
  return r.over_grpc ? text : "-";
}

void PrintLatency(const std::vector<LatencyRow>& rows, const Config& config) {
  std::printf(
      "### (b) Track round trip at 1 kHz per stream\n\n"
      "Each stream: its own channel (connection), config + one untimed target, then %.1f s of "
      "targets every 1 ms along a circle (one loop per %.0f s), paced with sleep_until, phases "
      "spread over the millisecond; a writer and a reader thread per stream. Round trip = "
      "start of Write(target) to the return of the Read that carries its joint state. Answers/s: "
      "a stream's answers over the time from its first target's due time to its last answer "
      "(1000 when the server keeps up). Send lag: how late a Write started against the 1 kHz "
      "schedule. CPU: user + system time per wall second, out of %u hardware threads, of the "
      "whole process (server and client) and of the client's writer and reader threads alone.\n\n",
      config.track_seconds, kTrackLoopSeconds, std::thread::hardware_concurrency());
  std::printf(
      "| streams | path | targets sent | answered | all in order | p50 µs | **p99 µs** | max µs | "
      "mean µs | answers/s per stream | max send lag µs | process CPU cores | client threads "
      "CPU cores |\n"
      "|--:|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const LatencyRow& r : rows) {
    std::printf("| %d | %s | %d | %d | %s | %.0f | **%.0f** | %.0f | %.0f | %s | %s | %s | %s |\n",
                r.streams, r.label.c_str(), r.sent, r.answered,
                IfOverGrpc(r, r.all_in_order() ? "yes" : "**no**").c_str(), r.p50_us, r.p99_us,
                r.max_us, r.mean_us,
                IfOverGrpc(r, std::to_string(std::lround(r.answers_per_second_per_stream))).c_str(),
                IfOverGrpc(r, std::to_string(std::lround(r.max_send_lag_us))).c_str(),
                IfOverGrpc(r, Fixed(r.cpu_cores, 2)).c_str(),
                IfOverGrpc(r, Fixed(r.client_cpu_cores, 2)).c_str());
  }
  std::printf("\n");
}

double ShortStreamGrowth(const std::vector<MemorySample>& series) {
  return static_cast<double>(series.back().rss_bytes - series.front().rss_bytes);
}

double ShortStreamHeapGrowth(const std::vector<MemorySample>& series) {
  return static_cast<double>(series.back().heap_bytes - series.front().heap_bytes);
}

void PrintMemory(const IdleMemory& idle, const std::vector<MemorySample>& series,
                 const Config& config) {
  std::printf(
      "### (c) Memory (server and client share this process: the figures hold both sides)\n\n"
      "RSS = VmRSS of /proc/self/status; heap = bytes malloc'd and not freed (glibc "
      "mallinfo2). Measured first in the run, before (a) and (b). Each stream: config + one "
      "target 1 mm from home, answered.\n\n");
  std::printf("| open idle Track streams | RSS MiB | heap MiB |\n|--:|--:|--:|\n");
  std::printf("| 0 | %.1f | %.1f |\n", Mib(idle.before.rss_bytes), Mib(idle.before.heap_bytes));
  std::printf("| %d | %.1f | %.1f |\n", config.idle_streams, Mib(idle.open.rss_bytes),
              Mib(idle.open.heap_bytes));
  std::printf("| 0 (all closed) | %.1f | %.1f |\n\n", Mib(idle.after_close.rss_bytes),
              Mib(idle.after_close.heap_bytes));
  std::printf("Per open stream (client + server): RSS %.0f bytes, heap %.0f bytes.\n\n",
              double(idle.open.rss_bytes - idle.before.rss_bytes) / config.idle_streams,
              double(idle.open.heap_bytes - idle.before.heap_bytes) / config.idle_streams);
  std::printf("| sequential short streams done | RSS KiB | heap KiB |\n|--:|--:|--:|\n");
  for (const MemorySample& s : series) {
    std::printf("| %lld | %lld | %lld |\n", static_cast<long long>(s.streams),
                static_cast<long long>(s.rss_bytes / 1024),
                static_cast<long long>(s.heap_bytes / 1024));
  }
  std::printf("\nGrowth from stream %lld to %lld: RSS %+.0f KiB (%+.1f bytes per stream), "
              "heap %+.0f KiB (%+.1f bytes per stream).\n\n",
              static_cast<long long>(series.front().streams),
              static_cast<long long>(series.back().streams), ShortStreamGrowth(series) / 1024,
              ShortStreamGrowth(series) / (series.back().streams - series.front().streams),
              ShortStreamHeapGrowth(series) / 1024,
              ShortStreamHeapGrowth(series) / (series.back().streams - series.front().streams));
}

const char* Verdict(bool met) { return met ? "met" : "NOT met"; }

// "No growth" judged on RSS with an allowance of 1 MiB over the measured span (~116 bytes per
// stream over 9000 streams): page-granular RSS moves by a few pages without any leak.
constexpr double kGrowthAllowanceBytes = 1024.0 * 1024.0;

// ---------------------------------------------------------------------------------------------
// (d) PoseService: one stream of Human17 frames, each written after the previous answer came
// back (a frame-synchronous client: the latency is the whole round trip), against the same
// frames fitted in process.

struct PoseResult {
  int frames = 0;
  int fitted = 0;  // answered FRAME_OUTCOME_FITTED
  double grpc_seconds = 0;
  double local_seconds = 0;
  std::vector<double> round_trip_us;
};

// The rest pose turning about z at 1 rad/s, observed with 1 cm noise per axis.
std::vector<std::vector<pose::Observation>> PoseFrames(const pose::Skeleton& skeleton, int count) {
  std::mt19937_64 rng(17);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<std::vector<pose::Observation>> frames(count);
  for (int n = 0; n < count; ++n) {
    const Eigen::Matrix3d turn =
        Eigen::AngleAxisd(n / 100.0, Eigen::Vector3d::UnitZ()).toRotationMatrix();
    for (int k = 0; k < skeleton.num_sites(); ++k) {
      const Eigen::Vector3d p = turn * skeleton.rest_pose().col(k);
      frames[n].push_back({skeleton.site_names()[k],
                           p + Eigen::Vector3d(noise(rng), noise(rng), noise(rng)), 1.0});
    }
  }
  return frames;
}

v1::EstimatePoseRequest PoseFrameRequest(const std::vector<pose::Observation>& frame,
                                         double timestamp) {
  v1::EstimatePoseRequest request;
  v1::PoseFrame* out = request.mutable_frame();
  out->set_timestamp(timestamp);
  for (const pose::Observation& o : frame) {
    v1::ObservedPoint* point = out->add_points();
    point->set_label(o.label);
    *point->mutable_position() = ToProto(o.position);
  }
  return request;
}

PoseResult MeasurePoseStream(const std::string& address, int count) {
  const pose::Skeleton skeleton = pose::Skeleton::Human17();
  const auto frames = PoseFrames(skeleton, count);
  PoseResult result;
  result.frames = count;
  auto stub = v1::PoseService::NewStub(OwnChannel(address));
  grpc::ClientContext context;
  SetDeadline(context, 600);
  auto stream = stub->EstimatePose(&context);
  v1::EstimatePoseRequest config;
  config.mutable_config()->set_preset(v1::SKELETON_PRESET_HUMAN17);
  if (!stream->Write(config)) Fail("EstimatePose: config not sent");
  const Clock::time_point start = Clock::now();
  for (int n = 0; n < count; ++n) {
    const v1::EstimatePoseRequest request = PoseFrameRequest(frames[n], n / 100.0);
    const Clock::time_point sent = Clock::now();
    v1::EstimatePoseResponse response;
    if (!stream->Write(request) || !stream->Read(&response)) Fail("EstimatePose: stream broke");
    result.round_trip_us.push_back(SecondsSince(sent) * 1e6);
    result.fitted += response.frame().outcome() == v1::FRAME_OUTCOME_FITTED;
  }
  result.grpc_seconds = SecondsSince(start);
  stream->WritesDone();
  if (grpc::Status status = stream->Finish(); !status.ok()) {
    Fail("EstimatePose: " + status.error_message());
  }
  auto fitter = pose::PoseFitter::Create(skeleton, pose::FitOptions());
  if (!fitter.ok()) Fail("PoseFitter: " + fitter.status().ToString());
  const Clock::time_point local = Clock::now();
  for (int n = 0; n < count; ++n) {
    if (!fitter->Fit(n / 100.0, frames[n]).ok()) Fail("PoseFitter::Fit failed");
  }
  result.local_seconds = SecondsSince(local);
  return result;
}

void PrintPose(const PoseResult& r) {
  std::printf("### (d) PoseService.EstimatePose: one frame-synchronous stream\n\n");
  std::printf("Human17 (17 points per frame, 1 cm noise), %d frames, each written after the "
              "previous answer was read; in process: PoseFitter::Fit on the same frames, one "
              "thread.\n\n", r.frames);
  std::printf("| path | frames/s | p50 µs | **p99 µs** | max µs | fitted |\n"
              "|---|--:|--:|--:|--:|--:|\n");
  std::printf("| in process PoseFitter | %.0f | - | - | - | - |\n", r.frames / r.local_seconds);
  std::printf("| gRPC EstimatePose | %.0f | %.0f | **%.0f** | %.0f | %d of %d |\n\n",
              r.frames / r.grpc_seconds, Percentile(r.round_trip_us, 0.5),
              Percentile(r.round_trip_us, 0.99), Percentile(r.round_trip_us, 1.0), r.fitted,
              r.frames);
}

void PrintPoseTargets(const PoseResult& r) {
  const double rate = r.frames / r.grpc_seconds, p99 = Percentile(r.round_trip_us, 0.99);
  std::printf("- targets: PoseService >= 1000 frames/s per stream with p99 frame latency below "
              "1 ms (issue 6): %.0f frames/s, p99 %.0f µs: **%s**\n\n",
              rate, p99, Verdict(rate >= 1000 && p99 < 1000));
}

void PrintTargets(const ThroughputResult& throughput, const std::vector<LatencyRow>& latency,
                  const std::vector<MemorySample>& series, const Config& config) {
  const double ratio = TimeRatio(throughput);
  std::printf("**Targets**\n\n");
  // The in-process side runs one CPU-bound thread, which other tenants of a shared machine
  // preempt more than the gRPC side's short bursts: its CPU time is the unpreempted solve.
  const double cpu_based = Median(throughput.grpc_seconds) / Median(throughput.local_cpu_seconds);
  std::printf("- targets: gRPC streaming within 2x of in-process solve throughput (7-link arm): "
              "gRPC / in-process time %.2f (gRPC time / in-process CPU time %.2f): **%s**\n",
              ratio, cpu_based, Verdict(ratio <= 2.0));
  for (const LatencyRow& r : latency) {
    if (!r.over_grpc || r.streams != 10) continue;
    const bool met = r.p99_us < 1000.0 && r.all_in_order();
    std::printf("- targets: Track p99 below 1 ms at 10 concurrent 1 kHz streams on %u hardware "
                "threads: p99 %.0f µs%s: **%s**\n", std::thread::hardware_concurrency(),
                r.p99_us,
                r.all_in_order() ? ", every state in order" : ", states missing or out of order",
                Verdict(met));
  }
  const double growth = ShortStreamGrowth(series);
  std::printf("- targets: no growth of server memory across %d streams%s: RSS %+.0f KiB from "
              "stream %lld to %lld (allowance 1 MiB): **%s**\n\n",
              config.short_streams,
              config.quick ? " (quick run: fewer than the issue's 10,000)" : "",
              growth / 1024, static_cast<long long>(series.front().streams),
              static_cast<long long>(series.back().streams),
              Verdict(growth <= kGrowthAllowanceBytes));
}

int Run(const Config& config) {
  const std::string load_before = LoadAverage();
  std::unique_ptr<server::ModelStore> store = server::NewMemoryModelStore();
  server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.pool.threads = config.server_threads;
  // One client address opens every stream here (the idle-stream count above all): no cap.
  options.calls.max_streams_per_peer = 0;
  absl::StatusOr<std::unique_ptr<server::IkdServer>> ikd =
      server::IkdServer::Start(options, store.get());
  if (!ikd.ok()) Fail("server: " + ikd.status().ToString());
  const std::string address = "127.0.0.1:" + std::to_string((*ikd)->port());
  auto stub = v1::KinematicsService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));

  // Memory first: later sections raise the heap's high-water mark, which would hide growth.
  Progress("(c) " + std::to_string(config.short_streams) + " short Track streams");
  const std::vector<MemorySample> series =
      RunShortStreams(*stub, config.short_streams, config.memory_sample_every);
  Progress("(c) " + std::to_string(config.idle_streams) + " idle Track streams");
  const IdleMemory idle = MeasureIdleStreams(*stub, config.idle_streams);

  Progress("(a) SolveTrajectory throughput");
  const std::vector<ThroughputResult> throughput = {
      MeasureThroughput(*stub, config, Trials::kDefault),
      MeasureThroughput(*stub, config, Trials::kDefault, kBatch),
      MeasureThroughput(*stub, config, Trials::kNone)};

  std::vector<LatencyRow> latency = {MeasureStepToInProcess(config)};
  for (int streams : config.concurrency) {
    Progress("(b) Track latency, " + std::to_string(streams) + " streams");
    latency.push_back(MeasureTrackLatency(address, streams, config));
  }

  Progress("(d) PoseService stream");
  const PoseResult pose = MeasurePoseStream(address, config.pose_frames);

  PrintSetup(config, load_before);
  PrintThroughput(throughput, config);
  PrintLatency(latency, config);
  PrintMemory(idle, series, config);
  PrintPose(pose);
  PrintTargets(throughput.front(), latency, series, config);
  PrintPoseTargets(pose);
  std::printf("Load average after the run: %s.\n", LoadAverage().c_str());
  (*ikd)->Shutdown(absl::Seconds(5));
  return 0;
}

}  // namespace
}  // namespace ikd::bench

int main(int argc, char** argv) {
  ikd::bench::Config config;
  if (!ikd::bench::ParseArgs(argc, argv, config)) return 2;
  if (config.help) return 0;
  return ikd::bench::Run(config);
}
