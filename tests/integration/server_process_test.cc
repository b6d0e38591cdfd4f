// Integration tests of the ikd process itself (fixture: tests/testing/integration_fixture.h):
// durability across SIGTERM restarts and kill -9, cancellation and deadlines that stop the work
// at once, and a SIGTERM drain with streams open.
#include "testing/integration_fixture.h"

namespace ikd::integration {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// A trajectory of the demo arm long enough (90001 samples, heavy trials; the server's limit is
// 100000) to be running for seconds: the stream a client can walk away from. 20001 samples were
// planned and streamed in 0.9 s here, inside SIGTERM's 1 s grace: the stream ended OK.
std::vector<std::string> LongTrajectoryArgs(const std::string& address,
                                            const std::string& timeout) {
  return {kIkctl,          "--server=" + address, "--timeout=" + timeout,
          "trajectory",    "--arm=demo",          "--line=1.1,0.3,0:0.6,0.9,0",
          "--duration=90", "--period=0.001",      "--trials=200",
          "--explore"};
}

// True when the server's CPU time grows by less than `idle_fraction` of a core over `window`:
// nothing is being solved any more.
bool ServerGoesIdle(pid_t pid, std::chrono::milliseconds window, double idle_fraction) {
  const double before = CpuSeconds(pid);
  std::this_thread::sleep_for(window);
  const double used = CpuSeconds(pid) - before;
  return before >= 0 && used < idle_fraction * window.count() * 1e-3;
}

// (b) models survive a SIGTERM restart (exit 0 within the grace) and a kill -9, with the same
// version and etag.
TEST_F(IntegrationTest, ModelsSurviveRestartAndKill) {
  const std::string store = dir_ + "/models.db";
  StartServer(store);
  CreateDemoModels();
  const auto before = GetArm("demo");

  server_->child().Signal(SIGTERM);
  const auto status = server_->child().Wait(std::chrono::seconds(5));
  ASSERT_TRUE(status.has_value()) << "ikd did not exit within 5 s of SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;

  StartServer(store);
  const auto after_restart = GetArm("demo");
  EXPECT_EQ(after_restart.version(), before.version());
  EXPECT_EQ(after_restart.etag(), before.etag());

  RunResult update = Ikctl({"arms", "update", "demo", kDemoArm, "--etag=" + before.etag()});
  ASSERT_EQ(update.exit_code, 0) << Describe(update);
  const auto updated = ParseJson<ikd::v1::Arm>(update.out);
  EXPECT_EQ(updated.version(), 2);
  server_->child().Signal(SIGKILL);
  ASSERT_TRUE(server_->child().Wait(std::chrono::seconds(5)).has_value());

  StartServer(store);
  const auto after_kill = GetArm("demo");
  EXPECT_EQ(after_kill.version(), 2);
  EXPECT_EQ(after_kill.etag(), updated.etag());
  RunResult scenes = Ikctl({"scenes", "list", "--format=csv"});
  EXPECT_THAT(scenes.out, HasSubstr("scenes/demo,1,3,"));
}

// A client killed mid-stream (its connection drops) and a client whose 5 ms deadline expires:
// the server stops solving at once (its CPU use falls to idle within 0.3 s), stays SERVING and
// answers the next trajectory completely.
TEST_F(IntegrationTest, CancelledAndExpiredCallsStopTheWorkAndLeaveTheServerHealthy) {
  StartServer();
  CreateDemoModels();
  {
    BackgroundProcess walker(LongTrajectoryArgs(server_->address(), "60s"));
    ASSERT_TRUE(walker.running());
    ASSERT_TRUE(WaitUntil([&] { return Lines(walker.OutputSoFar()).size() > 50; },
                          std::chrono::seconds(10)))
        << "the stream never started";
    EXPECT_FALSE(ServerGoesIdle(server_->child().pid(), std::chrono::milliseconds(300), 0.2))
        << "the server should be busy while the stream runs";
    walker.child().Signal(SIGKILL);
    walker.Finish(std::chrono::seconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(ServerGoesIdle(server_->child().pid(), std::chrono::milliseconds(700), 0.1))
      << "the server kept solving for a client that is gone";

  RunResult expired = RunProcess(LongTrajectoryArgs(server_->address(), "5ms"));
  EXPECT_EQ(expired.exit_code, 1) << Describe(expired);
  EXPECT_THAT(expired.err, HasSubstr("DEADLINE_EXCEEDED"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(ServerGoesIdle(server_->child().pid(), std::chrono::milliseconds(700), 0.1))
      << "the server kept solving after the deadline";

  RunResult health = Ikctl({"health"});
  EXPECT_EQ(health.out, "SERVING\n") << Describe(health);
  RunResult next = Ikctl({"trajectory", "--arm=demo", "--line=1.1,0.3,0:0.6,0.9,0",
                          "--duration=1", "--period=0.05"});
  ASSERT_EQ(next.exit_code, 0) << Describe(next);
  EXPECT_THAT(Lines(next.out).back(), HasSubstr("fraction_reached=1 "));
}

// SIGTERM with two long streams open: health turns NOT_SERVING at once, the streams are
// cancelled when the 1 s grace runs out, and ikd exits 0 within the grace (plus 2 s slack); the
// clients end with an error code instead of hanging.
TEST_F(IntegrationTest, SigtermDuringStreamsDrainsAndExitsZero) {
  StartServer(":memory:", {"--grace=1s"});
  CreateDemoModels();
  std::vector<std::unique_ptr<BackgroundProcess>> streams;
  for (int k = 0; k < 2; ++k) {
    streams.push_back(
        std::make_unique<BackgroundProcess>(LongTrajectoryArgs(server_->address(), "60s")));
  }
  for (auto& stream : streams) {
    ASSERT_TRUE(WaitUntil([&] { return Lines(stream->OutputSoFar()).size() > 20; },
                          std::chrono::seconds(10)))
        << "a stream never started";
  }
  const auto signalled = Clock::now();
  server_->child().Signal(SIGTERM);
  const auto status = server_->child().Wait(std::chrono::seconds(3));
  ASSERT_TRUE(status.has_value()) << "ikd did not exit within grace + 2 s of SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;
  EXPECT_LT(Clock::now() - signalled, std::chrono::seconds(3));
  for (auto& stream : streams) {
    RunResult result = stream->Finish(std::chrono::seconds(5));
    EXPECT_EQ(result.exit_code, 1) << Describe(result);
    EXPECT_THAT(result.err, AnyOf(HasSubstr("CANCELLED"), HasSubstr("UNAVAILABLE"),
                                  HasSubstr("ABORTED")));
  }
}

}  // namespace
}  // namespace ikd::integration
