// Scale-out across processes: a real PostgreSQL 15 on loopback and three `ikd` replicas on it.
// Models created through one replica are served by all of them to a client that balances
// round-robin over the three (as gRPC clients do over a Kubernetes headless Service); two
// replicas racing a conditional update of one model let exactly one win; a replica killed with
// SIGKILL mid-stream costs the client only a retry on another replica, which completes the path.
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "testing/integration_fixture.h"
#include "testing/postgres_server.h"

namespace ikd::integration {
namespace {

constexpr int kReplicas = 3;
constexpr char kPassword[] = "not-logged-7c1f";  // trust auth accepts and ignores it

class ReplicasTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    std::string error;
    postgres_ = ikd::testing::PostgresServer::Start(&error);
    ASSERT_NE(postgres_, nullptr) << error;
    // Replica 0 reads the URI from the environment, as the Kubernetes Deployment passes the
    // Secret (--store_from_env wins over --store); the others get it on the command line.
    setenv("IKD_TEST_STORE", postgres_->uri(kPassword).c_str(), 1);
    for (int i = 0; i < kReplicas; ++i) {
      replicas_.push_back(i == 0 ? IkdProcess::Start("unused.db",
                                                     {"--store_from_env=IKD_TEST_STORE"})
                                 : IkdProcess::Start(postgres_->uri(kPassword)));
      ASSERT_NE(replicas_.back(), nullptr) << "replica " << i << " did not start";
    }
  }

  void TearDown() override {
    replicas_.clear();
    IntegrationTest::TearDown();
    postgres_.reset();
  }

  // ikctl against replica i.
  RunResult IkctlOn(int i, std::vector<std::string> args) {
    args.insert(args.begin(), {kIkctl, "--server=" + replicas_[i]->address(), "--timeout=5s"});
    return RunProcess(args);
  }

  // One channel over the live replicas, balanced round-robin per call.
  std::shared_ptr<grpc::Channel> RoundRobinChannel() {
    std::string target = "ipv4:";
    for (const auto& replica : replicas_) {
      if (replica == nullptr) continue;
      if (target.size() > 5) target += ",";
      target += replica->address();
    }
    grpc::ChannelArguments args;
    args.SetLoadBalancingPolicyName("round_robin");
    return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  }

  // The replica index whose address the call's peer ("ipv4:127.0.0.1:PORT") is, or -1.
  int ReplicaOf(const grpc::ClientContext& context) {
    const std::string peer = context.peer();
    for (int i = 0; i < kReplicas; ++i) {
      if (replicas_[i] != nullptr && peer == "ipv4:" + replicas_[i]->address()) return i;
    }
    return -1;
  }

  static v1::Vector3 Point(double x, double y, double z) {
    v1::Vector3 p;
    p.set_x(x);
    p.set_y(y);
    p.set_z(z);
    return p;
  }

  // planar7 among the pillars along the quick-start line (1, 0.45, 0.3) -> (1, -0.45, 0.3).
  static v1::SolveTrajectoryRequest Sweep(const v1::Vector3& from, double duration,
                                          double period) {
    v1::SolveTrajectoryRequest request;
    request.mutable_arm()->set_name("arms/planar7");
    request.mutable_scene()->set_name("scenes/pillars");
    auto* line = request.mutable_trajectory()->mutable_line();
    *line->mutable_from() = from;
    *line->mutable_to() = Point(1.0, -0.45, 0.3);
    line->set_duration(duration);
    request.set_sample_period(period);
    return request;
  }

  std::unique_ptr<ikd::testing::PostgresServer> postgres_;
  std::vector<std::unique_ptr<IkdProcess>> replicas_;
};

// Created through replica 0, the arm and scene are read and used (Get, Solve, SolveTrajectory)
// through a round-robin channel: every call succeeds, every replica serves some, each
// trajectory completes with every sample REACHED.
TEST_F(ReplicasTest, ModelCreatedOnOneReplicaIsServedByAll) {
  ASSERT_EQ(IkctlOn(0, {"arms", "create", "planar7", kPlanar7Arm}).exit_code, 0);
  ASSERT_EQ(IkctlOn(0, {"scenes", "create", "pillars", kPillarsScene}).exit_code, 0);
  auto channel = RoundRobinChannel();
  auto models = v1::ModelService::NewStub(channel);
  auto kinematics = v1::KinematicsService::NewStub(channel);
  std::set<int> served;
  for (int call = 0; call < 2 * kReplicas; ++call) {
    grpc::ClientContext get_context;
    get_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    get_context.set_wait_for_ready(true);
    v1::GetArmRequest get;
    get.set_name("arms/planar7");
    v1::Arm arm;
    grpc::Status status = models->GetArm(&get_context, get, &arm);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(arm.version(), 1);
    EXPECT_EQ(arm.spec().limbs_size(), 7);
    served.insert(ReplicaOf(get_context));

    grpc::ClientContext solve_context;
    solve_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::SolveRequest solve;
    solve.mutable_arm()->set_name("arms/planar7");
    solve.mutable_scene()->set_name("scenes/pillars");
    *solve.mutable_target() = Point(1.0, 0.1 * call - 0.25, 0.3);
    v1::SolveResponse solved;
    status = kinematics->Solve(&solve_context, solve, &solved);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(solved.state().status(), v1::STEP_STATUS_REACHED);
    served.insert(ReplicaOf(solve_context));
  }
  for (int call = 0; call < kReplicas; ++call) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto reader = kinematics->SolveTrajectory(&context, Sweep(Point(1.0, 0.45, 0.3), 2, 0.02));
    v1::SolveTrajectoryResponse response;
    int samples = 0;
    std::optional<v1::TrajectorySummary> summary;
    while (reader->Read(&response)) {
      if (response.has_sample()) ++samples;
      if (response.has_summary()) summary = response.summary();
    }
    grpc::Status status = reader->Finish();
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_TRUE(summary.has_value());
    EXPECT_EQ(samples, 101);
    EXPECT_EQ(summary->samples(), 101);
    EXPECT_DOUBLE_EQ(summary->fraction_reached(), 1.0);
    served.insert(ReplicaOf(context));
  }
  EXPECT_EQ(served, (std::set<int>{0, 1, 2}));
}

// Two replicas update the same arm at once with the etag read before: one write wins (version
// 2, its spec stored), the other gets ABORTED (stale etag); both outcomes are seen from a third.
TEST_F(ReplicasTest, RacingConditionalUpdatesLetExactlyOneWin) {
  ASSERT_EQ(IkctlOn(0, {"arms", "create", "planar7", kPlanar7Arm}).exit_code, 0);
  RunResult read = IkctlOn(0, {"arms", "get", "planar7", "--format=json"});
  ASSERT_EQ(read.exit_code, 0) << Describe(read);
  const std::string etag = ParseJson<v1::Arm>(read.out).etag();
  ASSERT_FALSE(etag.empty());
  std::string raised = FileText(kPlanar7Arm);
  const size_t z = raised.find("\"z\": 0.3");
  ASSERT_NE(z, std::string::npos);
  raised.replace(z, 8, "\"z\": 0.4");
  const std::string files[2] = {kPlanar7Arm, WriteFile("raised.arm.json", raised)};
  std::vector<std::unique_ptr<BackgroundProcess>> writers;
  for (int w = 0; w < 2; ++w) {
    writers.push_back(std::make_unique<BackgroundProcess>(std::vector<std::string>{
        kIkctl, "--server=" + replicas_[1 + w]->address(), "--timeout=10s", "arms", "update",
        "planar7", files[w], "--etag=" + etag, "--format=json"}));
  }
  RunResult results[2] = {writers[0]->Finish(std::chrono::seconds(15)),
                          writers[1]->Finish(std::chrono::seconds(15))};
  const int winner = results[0].exit_code == 0 ? 0 : 1;
  ASSERT_EQ(results[winner].exit_code, 0) << Describe(results[winner]);
  EXPECT_EQ(results[1 - winner].exit_code, 1) << Describe(results[1 - winner]);
  EXPECT_THAT(results[1 - winner].out + results[1 - winner].err, ::testing::HasSubstr("ABORTED"));
  RunResult stored = IkctlOn(0, {"arms", "get", "planar7", "--format=json"});
  ASSERT_EQ(stored.exit_code, 0) << Describe(stored);
  const auto arm = ParseJson<v1::Arm>(stored.out);
  EXPECT_EQ(arm.version(), 2);
  EXPECT_DOUBLE_EQ(arm.spec().base_position().z(), winner == 0 ? 0.3 : 0.4);
}

// A SolveTrajectory stream of 5001 samples: after 1000 samples the replica serving it is
// killed (SIGKILL); the server computes a sample only when the one before is sent, so it is
// still far from the end. The stream ends UNAVAILABLE short of the end; the client asks the same
// round-robin channel for the rest of the path (from the last sample's target, starting at its
// joint positions), which another replica serves to the end; together the two streams cover
// the path (5001 distinct samples, give or take the rounding of the remaining duration).
TEST_F(ReplicasTest, KilledReplicaMidStreamClientCompletesOnAnother) {
  ASSERT_EQ(IkctlOn(0, {"arms", "create", "planar7", kPlanar7Arm}).exit_code, 0);
  ASSERT_EQ(IkctlOn(0, {"scenes", "create", "pillars", kPillarsScene}).exit_code, 0);
  constexpr double kDuration = 5.0, kPeriod = 0.001;
  constexpr int kKillAfter = 1000;  // samples read before the kill
  auto channel = RoundRobinChannel();
  auto kinematics = v1::KinematicsService::NewStub(channel);

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  context.set_wait_for_ready(true);
  // Streamed as solved (no whole-path optimization): the stream is under way when the replica
  // dies, and a 5001-sample plan would not even start within the deadline under TSan.
  v1::SolveTrajectoryRequest sweep = Sweep(Point(1.0, 0.45, 0.3), kDuration, kPeriod);
  sweep.mutable_options()->set_no_path_optimization(true);
  auto reader = kinematics->SolveTrajectory(&context, sweep);
  v1::SolveTrajectoryResponse response;
  v1::JointState last;
  int first_samples = 0;
  while (first_samples < kKillAfter && reader->Read(&response)) {
    ASSERT_TRUE(response.has_sample());
    last = response.sample();
    ++first_samples;
  }
  ASSERT_EQ(first_samples, kKillAfter);
  const int killed = ReplicaOf(context);
  ASSERT_GE(killed, 0) << context.peer();
  replicas_[killed]->child().Signal(SIGKILL);
  ASSERT_TRUE(replicas_[killed]->child().Wait(std::chrono::seconds(5)).has_value());
  bool got_summary = false;
  while (reader->Read(&response)) {
    if (response.has_sample()) {
      last = response.sample();
      ++first_samples;
    }
    got_summary |= response.has_summary();
  }
  const grpc::Status broken = reader->Finish();
  EXPECT_EQ(broken.error_code(), grpc::StatusCode::UNAVAILABLE) << broken.error_message();
  EXPECT_FALSE(got_summary);
  ASSERT_LT(first_samples, 5001);

  // The rest of the path, retried (as a client does on UNAVAILABLE) until a live replica
  // answers: the channel may first pick the dead one before it notices.
  v1::SolveTrajectoryRequest rest = Sweep(last.target(), kDuration - last.time(), kPeriod);
  *rest.mutable_initial_positions() = last.positions();
  rest.mutable_options()->set_no_path_optimization(true);
  std::vector<v1::JointState> resumed;
  std::optional<v1::TrajectorySummary> summary;
  int served_by = -1, retries = 0;
  grpc::Status status;
  for (int attempt = 0; attempt < 5; ++attempt) {
    grpc::ClientContext retry_context;
    retry_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto retry = kinematics->SolveTrajectory(&retry_context, rest);
    resumed.clear();
    summary.reset();
    while (retry->Read(&response)) {
      if (response.has_sample()) resumed.push_back(response.sample());
      if (response.has_summary()) summary = response.summary();
    }
    status = retry->Finish();
    served_by = ReplicaOf(retry_context);
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) break;
    ++retries;
  }
  std::cout << "samples from the killed replica: " << first_samples
            << " of 5001; resumed on replica " << served_by << " after " << retries
            << " UNAVAILABLE retries with " << resumed.size() << " samples\n";
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_NE(served_by, killed);
  ASSERT_TRUE(summary.has_value());
  ASSERT_FALSE(resumed.empty());
  EXPECT_NEAR(resumed.front().target().y(), last.target().y(), 1e-12);
  EXPECT_NEAR(resumed.back().target().x(), 1.0, 1e-9);
  EXPECT_NEAR(resumed.back().target().y(), -0.45, 1e-9);
  EXPECT_EQ(resumed.back().status(), v1::STEP_STATUS_REACHED);
  EXPECT_LT(resumed.back().hand_error(), 1e-6);
  // The resumed stream starts where the broken one stopped (its first sample repeats it).
  const int covered = first_samples + static_cast<int>(resumed.size()) - 1;
  EXPECT_NEAR(covered, 5001, 1);

  // The survivors still serve the model.
  for (int i = 0; i < kReplicas; ++i) {
    if (i == killed) continue;
    EXPECT_EQ(IkctlOn(i, {"arms", "get", "planar7"}).exit_code, 0) << "replica " << i;
  }
}

// The startup line names the store with the password redacted, and a replica started with the
// URI on its command line never prints the password.
TEST_F(ReplicasTest, StartupLineRedactsThePassword) {
  BackgroundProcess ikd({kIkd, "--listen=127.0.0.1:0", "--store=" + postgres_->uri(kPassword)});
  ASSERT_TRUE(WaitUntil([&] { return ikd.OutputSoFar().find("listening") != std::string::npos; },
                        std::chrono::seconds(10)));
  ikd.child().Signal(SIGTERM);
  RunResult result = ikd.Finish(std::chrono::seconds(10));
  EXPECT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_THAT(result.out, ::testing::HasSubstr("store postgresql://postgres:***@127.0.0.1:"));
  EXPECT_THAT(result.out + result.err, ::testing::Not(::testing::HasSubstr(kPassword)));
}

}  // namespace
}  // namespace ikd::integration
