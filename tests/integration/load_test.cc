// Load test of the real ikd process (fixtures: tests/testing/integration_fixture.h and
// grpc_clients.h): 100 concurrent clients, each on its own connection, running a mix of
// SolveTrajectory, Track, StepChain, Solve and model reads at once against one ikd with two
// worker threads and room in its queue for all of them. Every call must succeed and every
// result be complete and right. bench/load measures the same mix for latency and memory.
#include <latch>

#include "testing/grpc_clients.h"

namespace ikd::integration {
namespace {

constexpr int kTrajectoryStreams = 30;
constexpr int kTrackStreams = 25;
constexpr int kChainStreams = 20;
constexpr int kSolveClients = 15;
constexpr int kModelClients = 10;
constexpr int kClients =
    kTrajectoryStreams + kTrackStreams + kChainStreams + kSolveClients + kModelClients;
static_assert(kClients == 100);

constexpr int kTrajectorySamples = 51;  // 1 s at 20 ms
constexpr int kTrackTargets = 50;
constexpr int kChainSteps = 500, kChainStride = 10;
constexpr int kSolvesPerClient = 5, kModelRounds = 5;
constexpr auto kTimeout = std::chrono::seconds(120);

bool SameState(const v1::JointState& a, const v1::JointState& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

// 100 concurrent clients of five kinds against --threads=2 --max_queued=256: zero errors;
// every trajectory has 51 samples, all REACHED, bit-identical to the same request served
// alone (a seed fixes the output); every Track stream 50 in-order REACHED states; every chain
// 50 frames to step 500 with limb lengths within 1e-8; every Solve REACHED; every model read
// version 1.
TEST_F(IntegrationTest, HundredConcurrentMixedStreamsAllSucceed) {
  // All clients come from 127.0.0.1: 75 streams at once, within the per-address cap.
  StartServer(":memory:", {"--threads=2", "--max_queued=256", "--max_streams_per_peer=128"});
  Client setup(server_->address());
  AddDemoModels(setup);
  const v1::SolveTrajectoryRequest trajectory_request = DemoTrajectory(1.0, 0.02, 0);
  std::vector<v1::JointState> reference;
  {
    auto context = ContextWithin(kTimeout);
    auto reader = setup.kinematics->SolveTrajectory(context.get(), trajectory_request);
    v1::SolveTrajectoryResponse message;
    while (reader->Read(&message)) {
      if (message.has_sample()) reference.push_back(message.sample());
    }
    ASSERT_TRUE(reader->Finish().ok());
    ASSERT_EQ(reference.size(), static_cast<size_t>(kTrajectorySamples));
  }

  std::mutex mu;
  std::vector<std::string> errors;  // "<kind> <k>: what went wrong"
  auto fail = [&](const std::string& what) {
    std::lock_guard lock(mu);
    errors.push_back(what);
  };
  std::latch start(kClients);
  std::vector<std::thread> clients;
  auto launch = [&](int count, const std::function<void(Client&, int)>& body) {
    for (int k = 0; k < count; ++k) {
      clients.emplace_back([&, k, body] {
        Client client(server_->address());
        client.channel->WaitForConnected(std::chrono::system_clock::now() + kTimeout);
        start.arrive_and_wait();  // every client connected, then all at once
        body(client, k);
      });
    }
  };

  launch(kTrajectoryStreams, [&](Client& client, int k) {
    auto context = ContextWithin(kTimeout);
    auto reader = client.kinematics->SolveTrajectory(context.get(), trajectory_request);
    v1::SolveTrajectoryResponse message;
    std::vector<v1::JointState> samples;
    std::optional<v1::TrajectorySummary> summary;
    while (reader->Read(&message)) {
      if (message.has_sample()) samples.push_back(message.sample());
      if (message.has_summary()) summary = message.summary();
    }
    const grpc::Status status = reader->Finish();
    const std::string who = "trajectory " + std::to_string(k) + ": ";
    if (!status.ok()) return fail(who + status.error_message());
    if (samples.size() != reference.size()) return fail(who + "wrong sample count");
    for (size_t i = 0; i < samples.size(); ++i) {
      if (!SameState(samples[i], reference[i])) return fail(who + "differs from the reference");
    }
    if (!summary || summary->samples() != kTrajectorySamples || summary->fraction_reached() != 1) {
      fail(who + "missing or wrong summary");
    }
  });

  launch(kTrackStreams, [&](Client& client, int k) {
    auto context = ContextWithin(kTimeout);
    TrackResult result = Track(*context, client, kTrackTargets);
    const std::string who = "track " + std::to_string(k) + ": ";
    if (!result.status.ok()) return fail(who + result.status.error_message());
    if (result.states.size() != static_cast<size_t>(kTrackTargets)) return fail(who + "short");
    for (int i = 0; i < kTrackTargets; ++i) {
      const v1::JointState& state = result.states[i];
      if (state.time() != DemoTrackTarget(i, kTrackTargets).target().time() ||
          state.status() != v1::STEP_STATUS_REACHED) {
        return fail(who + "state " + std::to_string(i) + " out of order or not reached");
      }
    }
  });

  launch(kChainStreams, [&](Client& client, int k) {
    auto context = ContextWithin(kTimeout);
    ChainResult result = StepChain(*context, client, HelixChain(20, kChainSteps, kChainStride));
    const std::string who = "chain " + std::to_string(k) + ": ";
    if (!result.status.ok()) return fail(who + result.status.error_message());
    if (result.frames != kChainSteps / kChainStride || result.last_step != kChainSteps ||
        !(result.max_violation < 1e-8)) {
      fail(who + "wrong frames, last step or limb lengths");
    }
  });

  launch(kSolveClients, [&](Client& client, int k) {
    for (int i = 0; i < kSolvesPerClient; ++i) {
      auto context = ContextWithin(kTimeout);
      v1::SolveResponse response;
      const grpc::Status status =
          client.kinematics->Solve(context.get(), DemoSolve(0.2 * i), &response);
      const std::string who = "solve " + std::to_string(k) + "." + std::to_string(i) + ": ";
      if (!status.ok()) return fail(who + status.error_message());
      if (response.state().status() != v1::STEP_STATUS_REACHED) return fail(who + "not reached");
    }
  });

  launch(kModelClients, [&](Client& client, int k) {
    for (int i = 0; i < kModelRounds; ++i) {
      const std::string who = "models " + std::to_string(k) + ": ";
      v1::Arm arm;
      grpc::Status status = FetchArm(client, "arms/demo", &arm);
      if (!status.ok()) return fail(who + status.error_message());
      if (arm.version() != 1 || arm.spec().limbs_size() != 4) return fail(who + "wrong arm");
      auto context = ContextWithin(kTimeout);
      v1::ListScenesRequest request;
      v1::ListScenesResponse scenes;
      status = client.models->ListScenes(context.get(), request, &scenes);
      if (!status.ok()) return fail(who + status.error_message());
      if (scenes.scenes_size() != 1 || scenes.scenes(0).name() != "scenes/demo") {
        return fail(who + "wrong scene list");
      }
    }
  });

  for (auto& t : clients) t.join();
  EXPECT_TRUE(errors.empty()) << errors.size() << " failed, first: " << errors.front();
  EXPECT_EQ(CheckHealth(setup), HealthStatus::SERVING);
}

}  // namespace
}  // namespace ikd::integration
