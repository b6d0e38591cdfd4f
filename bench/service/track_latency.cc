// Track latency as deployed (issue 19): ikd in its own process, and N controllers, each its own
// process with its own connection, paced at 1 kHz with absolute deadlines, each declaring that
// period and a deadline (--deadline_us; issue 35: streams past the server's capacity are
// refused at configuration, answers past the deadline say LATE). Per arm and stream
// count it reports the round trip (target written -> its joint state read) at p50 / p99 /
// p99.9 / max over every answer of every stream, the missed periods (answers later than 1 ms
// after their target was sent, and targets never answered), the CPU that ikd itself used
// (from /proc), and beside it the in-process cost of the same solves.
//
//   track_latency_bench [--ikd=PATH] [--seconds=S] [--streams=1,10,50]
//                       [--arms=planar7,panda,snake100] [--ikd_flags=--threads=2,...]
//
// The controller processes are this program again (--controller, internal), and so is the
// floor (--floor, default on): first, at every stream count, planar7 controllers against an
// echo server (--echo_server, internal) that answers every target at once with a canned
// planar7 answer of the same size, on gRPC's callback API and on its synchronous API
// (--echo_sync): what gRPC and this machine cost before ikd does any work. The lower of the
// two at each percentile is the floor every row's p50 and p99 are divided by (issue 35).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
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
#include <limits>
#include <map>
#include <numbers>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ikd/ik/tracker.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"

ABSL_FLAG(std::string, ikd, "", "the ikd binary (default: ../../server/ikd beside this program)");
ABSL_FLAG(double, seconds, 10.0, "paced 1 kHz targets per stream, seconds");
ABSL_FLAG(std::vector<std::string>, streams, std::vector<std::string>({"1", "10", "50"}),
          "concurrent controllers per run");
ABSL_FLAG(std::vector<std::string>, arms,
          std::vector<std::string>({"planar7", "panda", "snake100"}), "arms to run");
ABSL_FLAG(std::vector<std::string>, ikd_flags, std::vector<std::string>({"--threads=2"}),
          "extra flags for ikd");
// Internal: one controller process.
ABSL_FLAG(bool, controller, false, "run one controller (internal)");
ABSL_FLAG(std::string, address, "", "controller: ikd's address");
ABSL_FLAG(int64_t, start_ns, 0, "controller: steady-clock time of target 0's due time");
ABSL_FLAG(std::string, out, "", "controller: file for its round trips");
ABSL_FLAG(bool, floor, true,
          "first, planar7 controllers against echo servers (no solve) on gRPC's callback and "
          "synchronous APIs: the floor gRPC and this machine set, each row divided by it");
ABSL_FLAG(bool, echo_server, false, "run the echo server (internal)");
ABSL_FLAG(bool, echo_sync, false,
          "echo server: gRPC's synchronous API (a thread blocked on each stream's reads) instead "
          "of the callback API (internal)");
ABSL_FLAG(double, deadline_us, 1000.0,
          "TrackConfig.deadline of every stream (us; 0: none): a target not answered within it "
          "of being sent comes back LATE; every stream declares the 1 ms period");

namespace ikd::bench {
namespace {

namespace v1 = ikd::v1;
using Clock = std::chrono::steady_clock;
using TrackStream = grpc::ClientReaderWriter<v1::TrackRequest, v1::TrackResponse>;

constexpr double kPeriod = 1e-3;         // s: a 1 kHz controller
constexpr double kMissAfterUs = 1000.0;  // an answer later than one period is a missed cycle
constexpr double kLoopSeconds = 2.0;     // the hand goes once round its circle in 2 s

// The Panda's ready pose (deploy/models/panda.arm.json): elbow bent, tool down.
Eigen::VectorXd PandaReady() {
  Eigen::VectorXd q(7);
  q << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785;
  return q;
}

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "track_latency_bench: %s\n", message.c_str());
  std::exit(1);
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// ---------------------------------------------------------------------------------------------
// The arms and their hand circles

struct ArmCase {
  std::string name;
  v1::ArmRef arm;
  bool full_pose = false;  // targets carry the tool's orientation
  Eigen::Vector3d center;
  double radius = 0.0;
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
};

v1::ArmRef PlanarArm(int limbs, double length, double radius) {
  v1::ArmRef ref;
  v1::ArmSpec* spec = ref.mutable_spec();
  spec->set_planar(true);
  for (int k = 0; k < limbs; ++k) {
    v1::Limb* limb = spec->add_limbs();
    limb->set_length(length / limbs);
    limb->set_radius(radius);
  }
  return ref;
}

// planar7: 7 limbs of 0.2 m on a circle of radius 0.25 m about (0.8, 0.2); snake100: 100
// limbs of 14 mm (the IK benchmark's snake) on the same circle; panda: the preset (stored by
// the orchestrator as arms/panda) holding its ready orientation on a 5 cm circle about its
// ready tool position.
ArmCase MakeCase(const std::string& name) {
  ArmCase c;
  c.name = name;
  if (name == "planar7" || name == "snake100") {
    const bool snake = name == "snake100";
    c.arm = PlanarArm(snake ? 100 : 7, 1.4, snake ? 0.002 : 0.02);
    c.center = {0.8, 0.2, 0.0};
    c.radius = 0.25;
    return c;
  }
  if (name == "panda") {
    const Eigen::Isometry3d ready = robot::ToolPose(robot::presets::Panda(), PandaReady());
    c.arm.set_name("arms/panda");
    c.full_pose = true;
    c.center = ready.translation();
    c.radius = 0.05;
    c.orientation = Eigen::Quaterniond(ready.linear());
    return c;
  }
  Fail("unknown arm " + name + " (planar7, panda, snake100)");
}

Eigen::Vector3d HandAt(const ArmCase& c, double t) {
  const double angle = 2 * std::numbers::pi * t / kLoopSeconds;
  return c.center + c.radius * Eigen::Vector3d(std::cos(angle), std::sin(angle), 0.0);
}

v1::TrackRequest TargetRequest(const ArmCase& c, double t) {
  v1::TrackRequest request;
  v1::TrackTarget* target = request.mutable_target();
  target->set_time(t);
  target->set_sent_unix_us(absl::ToUnixMicros(absl::Now()));
  const Eigen::Vector3d p = HandAt(c, t);
  target->mutable_position()->set_x(p.x());
  target->mutable_position()->set_y(p.y());
  target->mutable_position()->set_z(p.z());
  if (c.full_pose) {
    target->mutable_orientation()->set_w(c.orientation.w());
    target->mutable_orientation()->set_x(c.orientation.x());
    target->mutable_orientation()->set_y(c.orientation.y());
    target->mutable_orientation()->set_z(c.orientation.z());
  }
  return request;
}

v1::TrackRequest ConfigRequest(const ArmCase& c) {
  v1::TrackRequest request;
  *request.mutable_config()->mutable_arm() = c.arm;
  request.mutable_config()->mutable_options()->set_seed(7);
  request.mutable_config()->set_period(kPeriod);
  request.mutable_config()->set_deadline(1e-6 * absl::GetFlag(FLAGS_deadline_us));
  if (c.name == "snake100") request.mutable_config()->mutable_options()->set_safety_margin(0.002);
  return request;
}

// ---------------------------------------------------------------------------------------------
// One controller (its own process)

// A channel with its own connection, as a separate controller has.
std::shared_ptr<grpc::Channel> OwnChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// Configures, answers one target untimed, then from start_ns sends target k at start + k ms
// (absolute deadlines: a late send does not shift the next) and times each answer. Writes
// "sent N status CODE" and per answered target its round trip (us) and 1 where it said LATE,
// in order, to `out`; a stream the server refused at configuration writes "refused".
int RunController(const ArmCase& c, const std::string& address, int64_t start_ns, int n,
                  const std::string& out) {
  auto stub = v1::KinematicsService::NewStub(OwnChannel(address));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(n / 1000 + 120));
  std::unique_ptr<TrackStream> stream = stub->Track(&context);
  v1::TrackResponse response;
  if (!stream->Write(ConfigRequest(c)) || !stream->Write(TargetRequest(c, 0.0)) ||
      !stream->Read(&response)) {
    const grpc::Status status = stream->Finish();
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      std::ofstream(out) << "refused\n";
      return 0;
    }
    Fail(c.name + ": the stream broke while configuring: " + status.error_message());
  }
  std::vector<std::atomic<int64_t>> sent_ns(n + 1);
  std::vector<std::pair<double, bool>> answers;  // round trip (us), LATE
  answers.reserve(n);
  std::thread reader([&] {
    v1::TrackResponse answer;
    while (stream->Read(&answer)) {
      const int64_t received = NowNs();
      const int64_t k = std::llround(answer.state().time() / kPeriod);
      if (k >= 1 && k <= n) {
        answers.emplace_back((received - sent_ns[k].load()) * 1e-3,
                             answer.state().status() == v1::STEP_STATUS_LATE);
      }
    }
  });
  int sent = 0;
  for (int k = 1; k <= n; ++k) {
    const int64_t due = start_ns + static_cast<int64_t>(std::llround(k * kPeriod * 1e9));
    std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(due)));
    sent_ns[k].store(NowNs());
    if (!stream->Write(TargetRequest(c, k * kPeriod))) break;
    ++sent;
  }
  stream->WritesDone();
  reader.join();
  const grpc::Status status = stream->Finish();
  std::ofstream file(out);
  file << "sent " << sent << " status " << status.error_code() << "\n";
  for (const auto& [us, late] : answers) file << us << " " << late << "\n";
  return file ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// The floor: an echo server

// A planar7 answer of the size ikd sends (7 angles and velocities, 8 sites, the target and the
// figures), stamped with each target's time.
v1::TrackResponse CannedAnswer() {
  v1::TrackResponse response;
  v1::JointState* state = response.mutable_state();
  for (int j = 0; j < 7; ++j) {
    state->add_positions(0.1 + 0.01 * j);
    state->add_velocities(0.2 + 0.01 * j);
  }
  for (int s = 0; s <= 7; ++s) {
    v1::Vector3* site = state->add_sites();
    site->set_x(0.2 * s + 0.01);
    site->set_y(0.1 * s + 0.01);
    site->set_z(0.0);
  }
  state->mutable_target()->set_x(0.8);
  state->mutable_target()->set_y(0.45);
  state->set_hand_error(1e-13);
  return response;
}

// Answers every target at once on gRPC's callback thread; the config (the first message) has
// no answer, as in ikd.
class EchoReactor final : public grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse> {
 public:
  EchoReactor() : answer_(CannedAnswer()) { StartRead(&request_); }
  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::OK);
    if (!request_.has_target()) return StartRead(&request_);
    answer_.mutable_state()->set_time(request_.target().time());
    StartWrite(&answer_);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client is gone"));
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  v1::TrackRequest request_;
  v1::TrackResponse answer_;
};

class EchoService final : public v1::KinematicsService::CallbackService {
  grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* Track(
      grpc::CallbackServerContext*) override {
    return new EchoReactor();
  }
};

// The same on gRPC's synchronous API: one server thread per stream, blocked on its reads.
class SyncEchoService final : public v1::KinematicsService::Service {
  grpc::Status Track(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<v1::TrackResponse, v1::TrackRequest>* stream) override {
    v1::TrackRequest request;
    v1::TrackResponse answer = CannedAnswer();
    while (stream->Read(&request)) {
      if (!request.has_target()) continue;
      answer.mutable_state()->set_time(request.target().time());
      if (!stream->Write(answer)) break;
    }
    return grpc::Status::OK;
  }
};

// Serves until SIGTERM; announces its port the way ikd does.
int RunEchoServer() {
  EchoService callback;
  SyncEchoService sync;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  if (absl::GetFlag(FLAGS_echo_sync)) {
    builder.RegisterService(&sync);
  } else {
    builder.RegisterService(&callback);
  }
  const std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) Fail("the echo server did not start");
  std::printf("ikd listening on port %d (the echo server)\n", port);
  std::fflush(stdout);
  server->Wait();
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Processes

pid_t Spawn(const std::vector<std::string>& argv, int stdout_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) Fail("cannot start " + argv[0] + ": " + std::strerror(error));
  return pid;
}

// ikd's user + system CPU time so far (s), from /proc/PID/stat.
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0.0;
  std::vector<std::string> fields = absl::StrSplit(text.substr(close + 2), ' ');
  if (fields.size() < 13) return 0.0;
  // After the command: state is field 3 of stat(5); utime and stime are fields 14 and 15.
  return (std::stod(fields[11]) + std::stod(fields[12])) / sysconf(_SC_CLK_TCK);
}

// The server under test in its own process: ikd, or this program's echo server (the floor).
class Ikd {
 public:
  Ikd(const std::string& binary, const std::vector<std::string>& flags)
      : Ikd([&] {
          std::vector<std::string> argv = {binary, "--listen=127.0.0.1:0", "--store=:memory:",
                                           "--access_log=false"};
          argv.insert(argv.end(), flags.begin(), flags.end());
          return argv;
        }()) {}
  explicit Ikd(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) Fail("pipe");
    pid_ = Spawn(argv, fds[1]);
    close(fds[1]);
    ReadPort(fds[0]);
    close(fds[0]);
  }
  ~Ikd() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }

 private:
  void ReadPort(int fd) {
    const std::regex listening("ikd listening on port (\\d+)");
    std::string text;
    std::smatch match;
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (!std::regex_search(text, match, listening)) {
      pollfd p{fd, POLLIN, 0};
      if (Clock::now() > deadline || poll(&p, 1, 1000) < 0) Fail("ikd did not start");
      char buffer[256];
      const ssize_t got = read(fd, buffer, sizeof buffer);
      if (got == 0) Fail("ikd exited before listening");
      if (got > 0) text.append(buffer, got);
    }
    port_ = std::stoi(match[1]);
  }
  pid_t pid_ = -1;
  int port_ = 0;
};

void StorePanda(const std::string& address) {
  auto stub = v1::ModelService::NewStub(OwnChannel(address));
  grpc::ClientContext context;
  v1::CreateArmRequest request;
  request.set_arm_id("panda");
  v1::RobotSpec* robot = request.mutable_arm()->mutable_spec()->mutable_robot();
  robot->set_preset(v1::ROBOT_PRESET_PANDA);
  for (const double q : PandaReady()) robot->add_home_positions(q);
  v1::Arm arm;
  const grpc::Status status = stub->CreateArm(&context, request, &arm);
  if (!status.ok()) Fail("CreateArm panda: " + status.error_message());
}

// ---------------------------------------------------------------------------------------------
// Runs and figures

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * v.size()));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

struct Run {
  int streams = 0, sent = 0, answered = 0, missed = 0, failed_streams = 0;
  int refused_streams = 0;  // RESOURCE_EXHAUSTED at configuration (admission control)
  int late = 0;             // answers that said LATE
  int late_unsaid = 0;      // answers past the deadline (round trip) that did not
  std::vector<double> round_trip_us;
  double ikd_cores = 0.0;         // ikd's CPU time over the paced window's wall time
  double controller_cores = 0.0;  // the controllers' CPU time (configuring included) over it
};

// User + system CPU time (s) of this process's reaped children.
double ReapedChildrenCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

Run RunStreams(const ArmCase& c, const Ikd& ikd, const std::string& self, int streams, int n) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("track_latency_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // Every controller configures first; the paced window starts when all had time to, with
  // their phases spread over the period.
  const int64_t start = NowNs() + static_cast<int64_t>(2e9 + streams * 40e6);
  std::vector<pid_t> pids;
  for (int i = 0; i < streams; ++i) {
    const int64_t phase = static_cast<int64_t>(i * kPeriod * 1e9 / streams);
    pids.push_back(Spawn(
        {self, "--controller", "--arms=" + c.name, "--address=" + ikd.address(),
         "--start_ns=" + std::to_string(start + phase), "--seconds=" + std::to_string(n * kPeriod),
         "--out=" + (dir / std::to_string(i)).string(),
         "--deadline_us=" + std::to_string(absl::GetFlag(FLAGS_deadline_us))},
        -1));
  }
  std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(start)));
  const double cpu_before = ProcessCpuSeconds(ikd.pid());
  const double controllers_before = ReapedChildrenCpuSeconds();
  const int64_t wall_before = NowNs();
  Run run;
  run.streams = streams;
  for (const pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++run.failed_streams;
  }
  const double wall = (NowNs() - wall_before) * 1e-9;
  run.ikd_cores = (ProcessCpuSeconds(ikd.pid()) - cpu_before) / wall;
  run.controller_cores = (ReapedChildrenCpuSeconds() - controllers_before) / wall;
  for (int i = 0; i < streams; ++i) {
    std::ifstream file(dir / std::to_string(i));
    std::string word;
    int sent = 0, code = 0;
    if (!(file >> word)) {
      ++run.failed_streams;
      continue;
    }
    if (word == "refused") {
      ++run.refused_streams;
      continue;
    }
    if (!(file >> sent >> word >> code)) {
      ++run.failed_streams;
      continue;
    }
    run.sent += sent;
    int answered = 0;
    const double deadline_us = absl::GetFlag(FLAGS_deadline_us);
    int late = 0;
    for (double us; file >> us >> late; ++answered) {
      run.round_trip_us.push_back(us);
      if (us > kMissAfterUs) ++run.missed;
      run.late += late;
      if (deadline_us > 0.0 && us > deadline_us && !late) ++run.late_unsaid;
    }
    run.answered += answered;
    run.missed += sent - answered;
  }
  std::filesystem::remove_all(dir);
  return run;
}

// The same targets solved in this process, one after another: the solve's own cost (us).
double InProcessMicroseconds(const ArmCase& c, int n) {
  const auto start = Clock::now();
  if (c.full_pose) {
    auto robot = robot::Robot::Create(robot::presets::Panda());
    if (!robot.ok()) Fail(robot.status().ToString());
    auto tracker = robot::RobotTracker::Create(*robot, robot::RobotIkOptions{}, PandaReady());
    if (!tracker.ok()) Fail(tracker.status().ToString());
    for (int k = 0; k <= n; ++k) {
      tracker->StepTo(robot::ToolTarget{HandAt(c, k * kPeriod), c.orientation});
    }
  } else {
    ik::ArmSpec spec;
    spec.planar = true;
    const int limbs = c.name == "snake100" ? 100 : 7;
    for (int k = 0; k < limbs; ++k)
      spec.limbs.push_back({1.4 / limbs, limbs == 100 ? 0.002 : 0.02});
    auto arm = ik::Arm::Create(spec);
    if (!arm.ok()) Fail(arm.status().ToString());
    ik::IkOptions options;
    options.seed = 7;
    if (limbs == 100) options.safety_margin = 0.002;
    auto tracker = ik::ArmTracker::Create(*arm, nullptr, options);
    if (!tracker.ok()) Fail(tracker.status().ToString());
    for (int k = 0; k <= n; ++k) (void)tracker->StepTo(HandAt(c, k * kPeriod), k * kPeriod);
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / (n + 1);
}

std::string DefaultIkd(const char* argv0) {
  const std::filesystem::path self = std::filesystem::canonical(argv0);
  return (self.parent_path().parent_path().parent_path() / "server" / "ikd").string();
}

// The floor at one stream count: per percentile the lower of the two echo servers'.
struct Floor {
  double p50 = 0.0, p99 = 0.0;
};

void PrintRow(const std::string& name, const Run& run, const std::string& in_process,
              const Floor* floor) {
  const double p50 = Percentile(run.round_trip_us, 0.5), p99 = Percentile(run.round_trip_us, 0.99);
  const std::string ratios =
      floor == nullptr ? "- | -"
                       : absl::StrFormat("%.2f | %.2f", p50 / floor->p50, p99 / floor->p99);
  std::printf(
      "| %s | %d | %d | %d / %d | %.0f | %.0f | %.0f | %.0f | %s | %d | %d | %d | %d | %.2f | "
      "%.2f | %s |\n",
      name.c_str(), run.streams, run.refused_streams, run.answered, run.sent, p50, p99,
      Percentile(run.round_trip_us, 0.999), Percentile(run.round_trip_us, 1.0), ratios.c_str(),
      run.missed, run.late, run.late_unsaid, run.failed_streams, run.ikd_cores,
      run.controller_cores, in_process.c_str());
  std::fflush(stdout);
}

int Orchestrate(const char* argv0) {
  const std::string self = std::filesystem::canonical(argv0).string();
  const std::string binary =
      absl::GetFlag(FLAGS_ikd).empty() ? DefaultIkd(argv0) : absl::GetFlag(FLAGS_ikd);
  const int n = static_cast<int>(std::lround(absl::GetFlag(FLAGS_seconds) / kPeriod));
  std::printf(
      "Track latency, controllers in their own processes (each its own connection, 1 kHz, "
      "absolute deadlines, phases spread over the period), %d targets per stream; ikd %s "
      "started with %s; every stream declares the 1 ms period and a deadline of %g us "
      "(TrackConfig). Refused: streams admission control refused at configuration "
      "(RESOURCE_EXHAUSTED); the other columns count the admitted ones. Round trip: target "
      "written -> its joint state read, over every answer of every admitted stream. Missed: "
      "answers later than 1 ms after their target was sent, plus targets never answered. LATE: "
      "answers that said so; unsaid: answers whose round trip passed the deadline without "
      "saying LATE (the way back to the client is not the server's to see). ikd CPU: its user + "
      "system time over the paced window "
      "(cores); controllers' CPU: theirs (configuring included) over the same window. In process: "
      "the same targets solved one after another in this program. Floor rows: the same planar7 "
      "controllers against an echo server (this program, --echo_server) that answers each target "
      "at once with a canned answer of ikd's size, no solve and no hand-off (its CPU in the ikd "
      "column), on gRPC's callback API (answered on the callback thread) and on its synchronous "
      "API (a server thread blocked on each stream's reads), run first; the floor of a stream "
      "count is the lower of the two at each percentile, and every row's p50 and p99 are divided "
      "by it.\n\n",
      n, binary.c_str(), absl::StrJoin(absl::GetFlag(FLAGS_ikd_flags), " ").c_str(),
      absl::GetFlag(FLAGS_deadline_us));
  std::printf(
      "| arm | streams | refused | answered / sent | p50 (us) | p99 (us) | p99.9 (us) | max (us) "
      "| p50 / floor | p99 / floor | missed | LATE | unsaid | failed streams | ikd CPU (cores) | "
      "controllers' CPU (cores) | in process (us per target) |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  // The floors first, planar7 controllers against each echo server at every stream count.
  std::map<std::string, Floor> floors;
  if (absl::GetFlag(FLAGS_floor)) {
    const ArmCase planar7 = MakeCase("planar7");
    for (const std::string& count : absl::GetFlag(FLAGS_streams)) {
      Floor& floor = floors[count];
      floor.p50 = floor.p99 = std::numeric_limits<double>::infinity();
      for (const bool sync : {false, true}) {
        std::vector<std::string> argv = {self, "--echo_server"};
        if (sync) argv.push_back("--echo_sync");
        const Ikd echo(argv);
        const Run run = RunStreams(planar7, echo, self, std::stoi(count), n);
        PrintRow(sync ? "floor: echo, sync API" : "floor: echo, callback API", run, "-", nullptr);
        floor.p50 = std::min(floor.p50, Percentile(run.round_trip_us, 0.5));
        floor.p99 = std::min(floor.p99, Percentile(run.round_trip_us, 0.99));
      }
    }
  }
  for (const std::string& name : absl::GetFlag(FLAGS_arms)) {
    const ArmCase c = MakeCase(name);
    const double in_process = InProcessMicroseconds(c, 2000);
    for (const std::string& count : absl::GetFlag(FLAGS_streams)) {
      const Ikd ikd(binary, absl::GetFlag(FLAGS_ikd_flags));
      if (c.full_pose) StorePanda(ikd.address());
      const auto floor = floors.find(count);
      PrintRow(name, RunStreams(c, ikd, self, std::stoi(count), n),
               absl::StrFormat("%.1f", in_process),
               floor == floors.end() ? nullptr : &floor->second);
    }
  }
  return 0;
}

}  // namespace
}  // namespace ikd::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  namespace b = ikd::bench;
  if (absl::GetFlag(FLAGS_echo_server)) return b::RunEchoServer();
  if (!absl::GetFlag(FLAGS_controller)) return b::Orchestrate(argv[0]);
  const b::ArmCase c = b::MakeCase(absl::GetFlag(FLAGS_arms).at(0));
  const int n = static_cast<int>(std::lround(absl::GetFlag(FLAGS_seconds) / b::kPeriod));
  return b::RunController(c, absl::GetFlag(FLAGS_address), absl::GetFlag(FLAGS_start_ns), n,
                          absl::GetFlag(FLAGS_out));
}
