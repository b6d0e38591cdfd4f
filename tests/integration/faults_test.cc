// Fault tests of the real ikd process (fixtures: tests/testing/integration_fixture.h and
// grpc_clients.h): clients that cancel, vanish or stop reading mid-stream, deadlines, a SIGTERM
// drain with calls in flight, a frozen client reaped by keepalive, kill -9 during concurrent
// model writes, and a full disk. After each client fault the server must be SERVING, idle (no
// work left behind) and answer fresh calls completely.
#include <sqlite3.h>
#include <sys/resource.h>

#include <atomic>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "testing/grpc_clients.h"

namespace ikd::integration {
namespace {

using ::testing::HasSubstr;

constexpr auto kLong = std::chrono::seconds(60);  // the deadline of streams a test cuts short

// Under ASan (whose quarantine keeps freed memory resident) or TSan (shadow memory) the
// server's RSS says nothing about what it holds: the memory bound is checked in plain builds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kRssMeasuresHeldMemory = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kRssMeasuresHeldMemory = false;
#else
constexpr bool kRssMeasuresHeldMemory = true;
#endif
#else
constexpr bool kRssMeasuresHeldMemory = true;
#endif

// A trajectory of the demo arm that runs for many seconds (20001 samples, 200 trials each).
v1::SolveTrajectoryRequest LongTrajectory() { return DemoTrajectory(20.0, 0.001, 200); }

// True once the server's CPU time grows by less than 0.05 core-seconds over a 0.5 s window,
// within 15 s: nothing is being solved any more. A leaked stream keeps a core busy forever,
// so it never passes; a noisy machine only delays the quiet window.
bool ServerBecomesIdle(pid_t pid) {
  return WaitUntil(
      [&] {
        const double before = CpuSeconds(pid);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        return before >= 0 && CpuSeconds(pid) - before < 0.05;
      },
      std::chrono::seconds(15));
}

// VmRSS of a process in KiB, from /proc/PID/status (-1 if unreadable).
int64_t RssKib(pid_t pid) {
  for (const auto& line : Lines(FileText("/proc/" + std::to_string(pid) + "/status"))) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

class FaultsTest : public IntegrationTest {
 protected:
  // Health SERVING, the server idle, and a fresh trajectory, Track stream and chain served
  // completely and correctly.
  void ExpectHealthyAndServing() {
    Client client(server_->address());
    EXPECT_EQ(CheckHealth(client), HealthStatus::SERVING);
    EXPECT_TRUE(ServerBecomesIdle(server_->child().pid()))
        << "the server keeps computing for clients that are gone";

    TrajectoryResult trajectory =
        SolveTrajectory(client, DemoTrajectory(1.0, 0.05, 0), std::chrono::seconds(30));
    ASSERT_TRUE(trajectory.status.ok()) << trajectory.status.error_message();
    EXPECT_EQ(trajectory.samples, 21);
    ASSERT_TRUE(trajectory.has_summary);
    EXPECT_EQ(trajectory.summary.samples(), 21);
    EXPECT_EQ(trajectory.summary.fraction_reached(), 1.0);

    auto track_context = ContextWithin(std::chrono::seconds(30));
    TrackResult track = Track(*track_context, client, 10);
    ASSERT_TRUE(track.status.ok()) << track.status.error_message();
    ASSERT_EQ(track.states.size(), 10u);
    EXPECT_EQ(track.states.back().status(), v1::STEP_STATUS_REACHED);

    auto chain_context = ContextWithin(std::chrono::seconds(30));
    ChainResult chain = StepChain(*chain_context, client, HelixChain(20, 100, 10));
    ASSERT_TRUE(chain.status.ok()) << chain.status.error_message();
    EXPECT_EQ(chain.frames, 10);
    EXPECT_EQ(chain.last_step, 100);
    EXPECT_LT(chain.max_violation, 1e-8);
  }

  // An ikctl track targets file of 100000 points along the demo line (many seconds of work).
  std::string WriteTrackTargets() {
    std::string targets;
    for (int k = 0; k < 100000; ++k) {
      const v1::Vector3 p = LinePoint(k / 99999.0);
      targets += absl::StrCat(0.01 * k, ",", p.x(), ",", p.y(), ",", p.z(), "\n");
    }
    return WriteFile("targets.csv", targets);
  }

  // `n` concurrent Solve calls, each on its own connection: how many were answered OK and
  // what the others said.
  std::pair<int, std::vector<grpc::Status>> SolveBurst(int n) {
    std::vector<grpc::Status> statuses(n);
    std::vector<std::thread> threads;
    for (int k = 0; k < n; ++k) {
      threads.emplace_back([&, k] {
        Client client(server_->address());
        auto context = ContextWithin(std::chrono::seconds(30));
        // A fresh connection each: a transient connect failure is retried, not counted as a
        // refusal (what is checked is the pool's room, not the listener's backlog).
        context->set_wait_for_ready(true);
        v1::SolveResponse response;
        statuses[k] = client.kinematics->Solve(context.get(), DemoSolve(0.5), &response);
        if (statuses[k].ok() && response.state().status() != v1::STEP_STATUS_REACHED) {
          statuses[k] = grpc::Status(grpc::StatusCode::INTERNAL, "target not reached");
        }
      });
    }
    for (auto& t : threads) t.join();
    std::vector<grpc::Status> failed;
    for (const auto& s : statuses) {
      if (!s.ok()) failed.push_back(s);
    }
    return {n - static_cast<int>(failed.size()), failed};
  }
};

// TryCancel mid-stream on SolveTrajectory, Track and StepChain: each ends CANCELLED after the
// messages already read; then clients that vanish without a word (a dropped channel, killed
// ikctl trajectory, track and chain processes). Afterwards the server is SERVING and idle,
// serves fresh streams completely, and accepts a burst of --max_queued concurrent Solves.
TEST_F(FaultsTest, CancelledAndVanishedClientsLeaveTheServerHealthy) {
  StartServer(":memory:", {"--threads=2", "--max_queued=8"});
  Client client(server_->address());
  AddDemoModels(client);

  {
    auto context = ContextWithin(kLong);
    auto reader = client.kinematics->SolveTrajectory(context.get(), LongTrajectory());
    TrajectoryResult result = ReadTrajectory(*reader, [&](int k) {
      if (k == 5) context->TryCancel();
    });
    EXPECT_EQ(result.status.error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_GE(result.samples, 6);
    EXPECT_FALSE(result.has_summary);
  }
  {
    auto context = ContextWithin(kLong);
    TrackResult result = Track(*context, client, 100000, [&](int k) {
      if (k == 5) context->TryCancel();
    });
    EXPECT_EQ(result.status.error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_GE(result.states.size(), 6u);
    EXPECT_LT(result.states.size(), 100000u);
  }
  {
    auto context = ContextWithin(kLong);
    ChainResult result = StepChain(*context, client, HelixChain(50, 1'000'000, 10), [&](int k) {
      if (k == 5) context->TryCancel();
    });
    EXPECT_EQ(result.status.error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_GE(result.frames, 6);
  }
  {
    // A client that reads a little, then drops its stream, context and channel unfinished.
    auto dropped = std::make_unique<Client>(server_->address());
    auto context = ContextWithin(kLong);
    auto reader = dropped->kinematics->SolveTrajectory(context.get(), LongTrajectory());
    v1::SolveTrajectoryResponse message;
    for (int k = 0; k < 5; ++k) ASSERT_TRUE(reader->Read(&message));
    reader.reset();
    context.reset();
    dropped.reset();
  }

  // Client processes killed mid-stream: their connections drop.
  const std::string targets_file = WriteTrackTargets();
  const std::string server = "--server=" + server_->address();
  const std::vector<std::vector<std::string>> commands = {
      {kIkctl, server, "--timeout=60s", "trajectory", "--arm=demo", "--scene=demo",
       "--line=1.1,0.3,0:0.6,0.9,0", "--duration=20", "--period=0.001", "--trials=200",
       "--explore"},
      {kIkctl, server, "--timeout=60s", "track", "--arm=demo", "--scene=demo",
       "--targets_file=" + targets_file},
      {kIkctl, server, "--timeout=60s", "chain", "--shape=helix", "--sites=50",
       "--steps=1000000", "--stride=10", "--method=rattle", "--format=csv"}};
  for (const auto& command : commands) {
    BackgroundProcess walker(command);
    ASSERT_TRUE(walker.running());
    ASSERT_TRUE(WaitUntil([&] { return Lines(walker.OutputSoFar()).size() > 10; },
                          std::chrono::seconds(20)))
        << command[3] << " never started streaming";
    walker.child().Signal(SIGKILL);
    walker.Finish(std::chrono::seconds(5));
  }

  ExpectHealthyAndServing();
  auto [accepted, refused] = SolveBurst(8);
  EXPECT_EQ(accepted, 8) << "the worker pool did not drain: "
                         << (refused.empty() ? "" : refused.front().error_message());
}

// A client that freezes mid-stream (SIGSTOP: its kernel keeps the TCP connection, nothing
// answers) holds its Track stream, and with --max_streams_per_peer=1 every further stream from
// its address is refused; the server's keepalive PING goes unanswered, the connection is closed
// and the slot is free again. Without keepalive the frozen stream would hold it for good.
TEST_F(FaultsTest, FrozenClientIsReapedByKeepalive) {
  StartServer(":memory:", {"--max_streams_per_peer=1", "--keepalive_time=1s",
                           "--keepalive_timeout=2s"});
  Client client(server_->address());
  AddDemoModels(client);
  BackgroundProcess frozen({kIkctl, "--server=" + server_->address(), "--timeout=60s", "track",
                            "--arm=demo", "--scene=demo", "--targets_file=" + WriteTrackTargets()});
  ASSERT_TRUE(frozen.running());
  ASSERT_TRUE(WaitUntil([&] { return Lines(frozen.OutputSoFar()).size() > 10; },
                        std::chrono::seconds(20)))
      << "ikctl track never started streaming";

  // Alive, it answers the PINGs and keeps its slot.
  auto refused_context = ContextWithin(std::chrono::seconds(30));
  TrackResult refused = Track(*refused_context, client, 1);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.status.error_message();

  frozen.child().Signal(SIGSTOP);
  TrackResult fresh;
  const bool served = WaitUntil(
      [&] {
        auto context = ContextWithin(std::chrono::seconds(30));
        fresh = Track(*context, client, 3);
        if (!fresh.status.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return fresh.status.ok();
      },
      std::chrono::seconds(40));
  EXPECT_TRUE(served) << "the frozen client's stream was never closed: "
                      << fresh.status.error_message();
  EXPECT_EQ(fresh.states.size(), 3u);
  frozen.child().Signal(SIGKILL);
}

// A client that stops reading a long stream of a 40-limb arm (over 1 KB a message, 99001
// messages: over 100 MB in all): the server stops solving (flow control: it goes idle) with
// less than 64 MiB more resident memory (plain builds), and meanwhile serves other clients
// completely; when the reader resumes, the stream goes on in order.
TEST_F(FaultsTest, SlowReaderIsFlowControlledAndOthersAreServed) {
  StartServer(":memory:", {"--threads=2"});
  Client client(server_->address());
  AddDemoModels(client);

  v1::SolveTrajectoryRequest request;
  v1::ArmSpec* arm = request.mutable_arm()->mutable_spec();
  arm->set_planar(true);
  for (int k = 0; k < 40; ++k) {
    v1::Limb* limb = arm->add_limbs();
    limb->set_length(0.05);
    limb->set_radius(0.005);
  }
  v1::ArcPath* arc = request.mutable_trajectory()->mutable_arc();
  *arc->mutable_center() = Vec(0, 0, 0);
  *arc->mutable_axis() = Vec(0, 0, 1);
  *arc->mutable_start() = Vec(1.2, 0, 0);
  arc->set_angle(2 * M_PI);
  arc->set_duration(99.0);
  request.set_sample_period(0.001);
  request.mutable_options()->set_no_trials(true);

  const pid_t pid = server_->child().pid();
  const int64_t rss_before = RssKib(pid);
  auto context = ContextWithin(kLong);
  auto reader = client.kinematics->SolveTrajectory(context.get(), request);
  v1::SolveTrajectoryResponse message;
  double last_time = -1;
  int read = 0;
  for (; read < 200; ++read) {  // a slow reader: 2 ms per message
    ASSERT_TRUE(reader->Read(&message)) << "the stream ended after " << read << ": "
                                        << reader->Finish().error_message();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_GT(message.sample().time(), last_time);
    last_time = message.sample().time();
  }

  // Paused: the server must stop, holding a bounded amount.
  EXPECT_TRUE(ServerBecomesIdle(pid)) << "the server keeps solving for a reader that stopped";
  const int64_t rss_paused = RssKib(pid);
  if (kRssMeasuresHeldMemory) {
    EXPECT_LT(rss_paused - rss_before, 64 * 1024)
        << "server RSS grew from " << rss_before << " to " << rss_paused << " KiB";
  }

  // Others are served meanwhile.
  Client other(server_->address());
  TrajectoryResult trajectory =
      SolveTrajectory(other, DemoTrajectory(1.0, 0.05, 0), std::chrono::seconds(30));
  ASSERT_TRUE(trajectory.status.ok()) << trajectory.status.error_message();
  EXPECT_EQ(trajectory.samples, 21);
  auto [accepted, refused] = SolveBurst(4);
  EXPECT_EQ(accepted, 4);

  // The reader resumes where it stopped.
  for (int k = 0; k < 2000; ++k, ++read) {
    ASSERT_TRUE(reader->Read(&message)) << "the stream ended after " << read;
    ASSERT_TRUE(message.has_sample());
    EXPECT_GT(message.sample().time(), last_time);
    last_time = message.sample().time();
  }
  EXPECT_NEAR(last_time, 0.001 * (read - 1), 1e-9);
  context->TryCancel();
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  ExpectHealthyAndServing();
}

// A 300 ms deadline on long SolveTrajectory, Track and StepChain streams: each ends with
// DEADLINE_EXCEEDED (well before its work was done), and the server is healthy afterwards.
TEST_F(FaultsTest, DeadlinesEndLongStreams) {
  StartServer(":memory:", {"--threads=2"});
  Client client(server_->address());
  AddDemoModels(client);
  constexpr auto kShort = std::chrono::milliseconds(300);

  const auto start = Clock::now();
  TrajectoryResult trajectory = SolveTrajectory(client, LongTrajectory(), kShort);
  EXPECT_EQ(trajectory.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(trajectory.samples, 20001);

  auto track_context = ContextWithin(kShort);
  TrackResult track = Track(*track_context, client, 1'000'000);
  EXPECT_EQ(track.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(track.states.size(), 1'000'000u);

  auto chain_context = ContextWithin(kShort);
  ChainResult chain = StepChain(*chain_context, client, HelixChain(50, 1'000'000, 10));
  EXPECT_EQ(chain.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(chain.last_step, 1'000'000);
  // A hang guard, far above the 3 x 300 ms: the deadlines ended the streams, not their work.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));

  ExpectHealthyAndServing();
}

// SIGTERM with two trajectory streams in flight (201 samples of about 7 ms each: 2 s of work
// in 60 KB, so that they outlast the signal and fit the flow-control window; see
// docs/operations.md on drains of longer streams) and a grace of 150 s (the 2 s of work took
// 38 s under AddressSanitizer on a machine busy with builds, past a 30 s grace; a drain ends
// as soon as its calls do, so a long grace costs nothing): a health Watch reports
// NOT_SERVING, a new call is refused UNAVAILABLE while the streams are still running, both
// streams then finish OK with every sample and the summary, and ikd exits 0.
TEST_F(FaultsTest, SigtermDrainsCallsInFlight) {
  StartServer(":memory:", {"--threads=2", "--grace=150s"});
  Client client(server_->address());
  AddDemoModels(client);
  constexpr auto kDrain = std::chrono::seconds(180);  // beyond the grace

  auto watch_context = ContextWithin(kDrain);
  grpc::health::v1::HealthCheckRequest watch_request;
  auto watch = client.health->Watch(watch_context.get(), watch_request);
  HealthStatus health;
  ASSERT_TRUE(watch->Read(&health));
  EXPECT_EQ(health.status(), HealthStatus::SERVING);

  constexpr int kSamples = 201;
  v1::SolveTrajectoryRequest request = DemoTrajectory(2.0, 0.01, 200);
  request.mutable_options()->set_max_step_fraction(0.0005);  // 0.1 mm sub-steps: slow samples
  // Streamed as solved (a planned path would be solved whole before its first sample), so the
  // streams are still running when the drain starts.
  request.mutable_options()->set_no_path_optimization(true);
  std::atomic<int> read[2] = {0, 0};
  std::vector<TrajectoryResult> results(2);
  std::vector<std::thread> streams;
  for (int s = 0; s < 2; ++s) {
    streams.emplace_back([&, s] {
      Client own(server_->address());
      auto context = ContextWithin(kDrain);
      auto reader = own.kinematics->SolveTrajectory(context.get(), request);
      results[s] = ReadTrajectory(*reader, [&](int) { ++read[s]; });
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return read[0] > 5 && read[1] > 5; }, std::chrono::seconds(30)));
  server_->child().Signal(SIGTERM);

  ASSERT_TRUE(watch->Read(&health)) << "the health watch ended without NOT_SERVING";
  EXPECT_EQ(health.status(), HealthStatus::NOT_SERVING);
  watch_context->TryCancel();  // an open Watch is a call in flight too: it would hold the drain
  // Health turns NOT_SERVING just before the listener closes: a call in between is still
  // served (OK); from then on new calls are refused.
  grpc::Status late_status;
  ASSERT_TRUE(WaitUntil(
      [&] {
        Client late(server_->address());
        auto context = ContextWithin(std::chrono::seconds(5));
        v1::SolveResponse response;
        late_status = late.kinematics->Solve(context.get(), DemoSolve(0.5), &response);
        return !late_status.ok();
      },
      std::chrono::seconds(10)));
  // UNAVAILABLE once the listener is closed; CANCELLED for a call that reached the server as it
  // shut down but before a handler took it (gRPC cancels those; seen under ThreadSanitizer).
  EXPECT_TRUE(late_status.error_code() == grpc::StatusCode::UNAVAILABLE ||
              late_status.error_code() == grpc::StatusCode::CANCELLED)
      << late_status.error_code() << ": " << late_status.error_message();
  EXPECT_TRUE(read[0] < kSamples || read[1] < kSamples)
      << "the streams ended before the refused call: the test did not overlap the drain";

  for (auto& t : streams) t.join();
  for (const auto& result : results) {
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    EXPECT_EQ(result.samples, kSamples);
    EXPECT_TRUE(result.has_summary);
  }
  const auto status = server_->child().Wait(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value()) << "ikd did not exit within 30 s of its last call's end";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;
}

// `PRAGMA integrity_check` of the SQLite file at `path` ("ok" when sound).
std::string IntegrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  std::string result = "cannot open";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    result = "cannot prepare";
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK) {
      result.clear();
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        result += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db);
  return result;
}

// kill -9 while four clients create and update arms as fast as the store acknowledges: the
// file passes PRAGMA integrity_check, and after a restart every acknowledged write is there
// with at least its acknowledged version (a write in flight at the kill may have landed too).
TEST_F(FaultsTest, KillDuringConcurrentWritesLosesNothingAcknowledged) {
  const std::string store = dir_ + "/models.db";
  StartServer(store);
  std::mutex mu;
  std::map<std::string, int64_t> acknowledged;  // arm name -> version
  std::atomic<int> writes{0};
  std::atomic<bool> killed{false};
  std::vector<std::string> failures_before_kill;
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      Client client(server_->address());
      v1::Arm arm = DemoArm();
      for (int i = 0; !killed; ++i) {
        const std::string id = absl::StrCat("w", w, "-", i);
        v1::Arm out;
        grpc::Status status = CreateArm(client, id, arm, &out);
        for (int update = 0; status.ok() && update < 2; ++update) {
          {
            std::lock_guard lock(mu);
            acknowledged[out.name()] = out.version();
          }
          ++writes;
          arm.mutable_spec()->mutable_limbs(0)->set_length(0.4 + 0.001 * (update + 1));
          status = UpdateArm(client, out.name(), arm, &out);
        }
        if (status.ok()) {
          std::lock_guard lock(mu);
          acknowledged[out.name()] = out.version();
          ++writes;
        } else {
          if (!killed) {
            std::lock_guard lock(mu);
            failures_before_kill.push_back(status.error_message());
          }
          return;
        }
      }
    });
  }
  const bool enough = WaitUntil([&] { return writes >= 120; }, std::chrono::seconds(60));
  killed = true;
  server_->child().Signal(SIGKILL);
  ASSERT_TRUE(server_->child().Wait(std::chrono::seconds(5)).has_value());
  for (auto& t : writers) t.join();
  ASSERT_TRUE(enough) << "only " << writes << " writes acknowledged";
  EXPECT_TRUE(failures_before_kill.empty()) << failures_before_kill.front();

  EXPECT_EQ(IntegrityCheck(store), "ok");
  StartServer(store);
  Client client(server_->address());
  for (const auto& [name, version] : acknowledged) {
    v1::Arm arm;
    grpc::Status status = FetchArm(client, name, &arm);
    ASSERT_TRUE(status.ok()) << name << ": " << status.error_message();
    EXPECT_GE(arm.version(), version) << name;
  }
}

// Sets the soft RLIMIT_FSIZE of process `pid` (the hard limit stays).
bool SetFileSizeLimit(pid_t pid, rlim_t bytes) {
  rlimit limit{};
  if (prlimit(pid, RLIMIT_FSIZE, nullptr, &limit) != 0) return false;
  limit.rlim_cur = bytes;
  return prlimit(pid, RLIMIT_FSIZE, &limit, nullptr) == 0;
}

int64_t FileSize(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<int64_t>(size);
}

// A full disk, simulated by lowering ikd's RLIMIT_FSIZE to the store files' current size (its
// writes then fail with EFBIG; ikd ignores SIGXFSZ): creating and updating an arm answer
// RESOURCE_EXHAUSTED saying the store is full, the server stays up and serves the stored
// models and solves with them; once space is back the writes succeed, and after a restart the
// file passes its integrity check with every model intact.
TEST_F(FaultsTest, FullDiskFailsWritesClearlyAndKeepsServing) {
  const std::string store = dir_ + "/models.db";
  StartServer(store);
  Client client(server_->address());
  AddDemoModels(client);
  v1::Arm demo;
  ASSERT_TRUE(FetchArm(client, "arms/demo", &demo).ok());

  // A payload of ~20 KB: more than any slack in the files' last pages.
  v1::Arm big;
  big.mutable_spec()->set_planar(true);
  for (int k = 0; k < 500; ++k) {
    v1::Limb* limb = big.mutable_spec()->add_limbs();
    limb->set_length(0.01 + 1e-6 * k);
    limb->set_radius(0.001);
  }
  const int64_t full = std::max(FileSize(store), FileSize(store + "-wal"));
  ASSERT_TRUE(SetFileSizeLimit(server_->child().pid(), full)) << std::strerror(errno);

  v1::Arm out;
  grpc::Status created = CreateArm(client, "big", big, &out);
  EXPECT_EQ(created.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << created.error_message();
  EXPECT_THAT(created.error_message(), HasSubstr("model store is full"));
  grpc::Status updated = UpdateArm(client, "arms/demo", big, &out);
  EXPECT_EQ(updated.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << updated.error_message();

  EXPECT_EQ(CheckHealth(client), HealthStatus::SERVING);
  v1::Arm after;
  ASSERT_TRUE(FetchArm(client, "arms/demo", &after).ok());
  EXPECT_EQ(after.version(), demo.version());
  EXPECT_EQ(after.etag(), demo.etag());
  EXPECT_EQ(FetchArm(client, "arms/big", &out).error_code(), grpc::StatusCode::NOT_FOUND);
  TrajectoryResult trajectory =
      SolveTrajectory(client, DemoTrajectory(1.0, 0.05, 0), std::chrono::seconds(30));
  ASSERT_TRUE(trajectory.status.ok()) << trajectory.status.error_message();
  EXPECT_EQ(trajectory.samples, 21);

  ASSERT_TRUE(SetFileSizeLimit(server_->child().pid(), RLIM_INFINITY));
  created = CreateArm(client, "big", big, &out);
  ASSERT_TRUE(created.ok()) << created.error_message();
  EXPECT_EQ(out.version(), 1);

  server_->child().Signal(SIGTERM);
  const auto status = server_->child().Wait(std::chrono::seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;
  EXPECT_EQ(IntegrityCheck(store), "ok");
  StartServer(store);
  Client restarted(server_->address());
  ASSERT_TRUE(FetchArm(restarted, "arms/demo", &after).ok());
  EXPECT_EQ(after.etag(), demo.etag());
  ASSERT_TRUE(FetchArm(restarted, "arms/big", &after).ok());
  EXPECT_EQ(after.spec().limbs_size(), 500);
}

}  // namespace
}  // namespace ikd::integration
