// KinematicsService.SolveBatch end to end in process: the real server on 127.0.0.1:0 (memory
// store), a real channel and the generated stub. The reference for every answer is the unary
// Solve of the same pose and seed (the same bytes), plus the test's own geometry.
#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/presets.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"
#include "server/service_test_util.h"

namespace ikd::server {
namespace {

using test_util::PlanarArm;
using test_util::Positions;
using test_util::Vec;
using test_util::ViolatedFields;

using ::google::protobuf::util::MessageDifferencer;
using ::testing::Contains;

v1::Quaternion Quat(const Eigen::Quaterniond& q) {
  v1::Quaternion out;
  out.set_x(q.x());
  out.set_y(q.y());
  out.set_z(q.z());
  out.set_w(q.w());
  return out;
}

class SolveBatchTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer({}); }

  void StartServer(ServerOptions options) {
    stub_.reset();
    server_.reset();
    store_ = NewMemoryModelStore();
    options.listen = "127.0.0.1:0";
    options.limits.max_trials_per_step = 20000;
    auto server = IkdServer::Start(options, store_.get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = v1::KinematicsService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials()));
  }

  grpc::Status Batch(const v1::SolveBatchRequest& request,
                     std::vector<v1::SolveBatchResponse>* messages,
                     std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    auto reader = stub_->SolveBatch(&context, request);
    v1::SolveBatchResponse message;
    while (reader->Read(&message)) messages->push_back(message);
    return reader->Finish();
  }

  v1::SolveResponse Solve(const v1::SolveRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::SolveResponse response;
    const grpc::Status status = stub_->Solve(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // The unary request of batch target i.
  static v1::SolveRequest UnaryOf(const v1::SolveBatchRequest& batch, int i) {
    v1::SolveRequest request;
    *request.mutable_arm() = batch.arm();
    *request.mutable_scene() = batch.scene();
    *request.mutable_options() = batch.options();
    const v1::BatchTarget& target = batch.targets(i);
    *request.mutable_target() = target.position();
    if (target.has_orientation()) *request.mutable_target_orientation() = target.orientation();
    *request.mutable_seed_positions() = target.seed_positions_size() > 0
                                            ? target.seed_positions()
                                            : batch.seed_positions();
    request.set_max_solutions(batch.max_solutions());
    request.set_max_seed_distance(batch.max_seed_distance());
    *request.mutable_preferred_posture() = batch.preferred_posture();
    request.set_posture_weight(batch.posture_weight());
    return request;
  }

  // Every result of `messages`, checked to come in target order, the joint names on the
  // first message only.
  static std::vector<v1::BatchResult> Results(const std::vector<v1::SolveBatchResponse>& messages) {
    std::vector<v1::BatchResult> results;
    for (size_t m = 0; m < messages.size(); ++m) {
      EXPECT_EQ(messages[m].joint_names_size() > 0, m == 0) << "message " << m;
      for (const v1::BatchResult& r : messages[m].results()) {
        EXPECT_EQ(r.index(), static_cast<int>(results.size()));
        results.push_back(r);
      }
    }
    return results;
  }

  std::unique_ptr<ModelStore> store_;
  std::unique_ptr<IkdServer> server_;
  std::unique_ptr<v1::KinematicsService::Stub> stub_;
};

// 120 targets on a grid about the planar arm (some beyond its reach), every third with its own
// seed, in chunks of 7 (several solved at once): each answer is the unary Solve's, byte for
// byte; a REACHED hand is on its target (the test's own distance from the returned sites).
TEST_F(SolveBatchTest, ChainArmAnswersAsSolveDoesInTargetOrder) {
  v1::SolveBatchRequest request;
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  request.set_chunk_size(7);
  for (double s : {0.2, -0.3, 0.1}) request.add_seed_positions(s);
  for (int i = 0; i < 120; ++i) {
    v1::BatchTarget* target = request.add_targets();
    *target->mutable_position() = Vec(-1.6 + 0.3 * (i % 12), -1.2 + 0.25 * (i / 12), 0);
    if (i % 3 == 0) {
      for (double s : {0.5, 0.4, -0.6}) target->add_seed_positions(s);
    }
  }
  std::vector<v1::SolveBatchResponse> messages;
  const grpc::Status status = Batch(request, &messages);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(messages.size(), 18u);  // ceil(120 / 7)
  const std::vector<v1::BatchResult> results = Results(messages);
  ASSERT_EQ(results.size(), 120u);
  EXPECT_EQ(messages[0].joint_names_size(), 3);
  int reached = 0;
  for (int i = 0; i < 120; ++i) {
    const v1::SolveResponse unary = Solve(UnaryOf(request, i));
    EXPECT_TRUE(MessageDifferencer::Equals(results[i].state(), unary.state())) << "target " << i;
    EXPECT_GT(results[i].solve_seconds(), 0.0);
    const v1::JointState& s = results[i].state();
    if (s.status() != v1::STEP_STATUS_REACHED) continue;
    ++reached;
    const v1::Vector3& hand = s.sites(s.sites_size() - 1);
    const v1::Vector3& goal = request.targets(i).position();
    EXPECT_LT(std::hypot(hand.x() - goal.x(), hand.y() - goal.y(), hand.z() - goal.z()), 1e-9);
  }
  EXPECT_GT(reached, 60);
}

// The UR5 (with its collision model, so self-collision trials run) at 12 random poses (forward
// kinematics of random joint values), full pose and position only alternately, with 8 branches
// asked on each: every answer and every branch list is the unary Solve's, and each solution's
// tool is on its target by the chain's forward kinematics. Few poses and a long deadline: each
// costs about 0.15 s here, and ThreadSanitizer runs it over 10x slower.
TEST_F(SolveBatchTest, IndustrialArmAnswersAsSolveDoesWithBranches) {
  constexpr int kPoses = 12;
  const robot::ChainSpec ur5 = robot::presets::Ur5();
  v1::SolveBatchRequest request;
  request.mutable_arm()->mutable_spec()->mutable_robot()->set_preset(v1::ROBOT_PRESET_UR5);
  request.set_chunk_size(3);
  request.set_max_solutions(8);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> angle(-2.5, 2.5);
  std::vector<Eigen::Isometry3d> poses;
  for (int i = 0; i < kPoses; ++i) {
    Eigen::VectorXd q(6);
    for (int j = 0; j < 6; ++j) q[j] = angle(rng);
    poses.push_back(robot::ToolPose(ur5, q));
    v1::BatchTarget* target = request.add_targets();
    const Eigen::Vector3d p = poses.back().translation();
    *target->mutable_position() = Vec(p.x(), p.y(), p.z());
    if (i % 2 == 0) *target->mutable_orientation() = Quat(Eigen::Quaterniond(poses.back().linear()));
  }
  std::vector<v1::SolveBatchResponse> messages;
  const grpc::Status status = Batch(request, &messages, std::chrono::minutes(3));
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::vector<v1::BatchResult> results = Results(messages);
  ASSERT_EQ(results.size(), static_cast<size_t>(kPoses));
  for (int i = 0; i < kPoses; ++i) {
    const v1::SolveResponse unary = Solve(UnaryOf(request, i));
    EXPECT_TRUE(MessageDifferencer::Equals(results[i].state(), unary.state())) << "target " << i;
    ASSERT_EQ(results[i].solutions_size(), unary.solutions_size()) << "target " << i;
    EXPECT_GE(results[i].solutions_size(), 1) << "target " << i;
    for (int k = 0; k < results[i].solutions_size(); ++k) {
      EXPECT_TRUE(MessageDifferencer::Equals(results[i].solutions(k), unary.solutions(k)));
      const Eigen::Isometry3d X = robot::ToolPose(ur5, Positions(results[i].solutions(k)));
      EXPECT_LT((X.translation() - poses[i].translation()).norm(), 1e-5) << i << " " << k;
      if (i % 2 == 0) {
        EXPECT_LT(Eigen::AngleAxisd(X.linear().transpose() * poses[i].linear()).angle(), 1e-5);
      }
    }
  }
}

// A preferred posture applies to every target of a batch as to the unary Solve: the Panda's
// position targets with a posture answer the unary bytes, on the target by forward kinematics.
// (Its body's self-clearance runs the obstacle trials, whose step size once carried over from
// one target of a batch to the next.)
TEST_F(SolveBatchTest, PostureAnswersAsSolveDoes) {
  const robot::ChainSpec panda = robot::presets::Panda();
  v1::SolveBatchRequest request;
  request.mutable_arm()->mutable_spec()->mutable_robot()->set_preset(v1::ROBOT_PRESET_PANDA);
  request.set_chunk_size(2);
  for (double v : {0.0, -0.3, 0.0, -2.0, 0.0, 1.9, 0.8}) request.add_preferred_posture(v);
  request.set_posture_weight(10.0);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> offset(-0.3, 0.3);
  const Eigen::VectorXd ready =
      (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished();
  std::vector<Eigen::Vector3d> points;
  for (int i = 0; i < 6; ++i) {
    Eigen::VectorXd q = ready;
    for (int j = 0; j < 7; ++j) q[j] += offset(rng);
    points.push_back(robot::ToolPose(panda, q).translation());
    *request.add_targets()->mutable_position() = Vec(points.back().x(), points.back().y(), points.back().z());
  }
  std::vector<v1::SolveBatchResponse> messages;
  const grpc::Status status = Batch(request, &messages);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::vector<v1::BatchResult> results = Results(messages);
  ASSERT_EQ(results.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    const v1::SolveResponse unary = Solve(UnaryOf(request, i));
    EXPECT_TRUE(MessageDifferencer::Equals(results[i].state(), unary.state())) << "target " << i;
    ASSERT_EQ(results[i].state().status(), v1::STEP_STATUS_REACHED) << "target " << i;
    const Eigen::Vector3d tool = robot::ToolPose(panda, Positions(results[i].state())).translation();
    EXPECT_LT((tool - points[i]).norm(), 1e-5) << "target " << i;
  }
  // Without the posture the answers differ: the posture took part.
  v1::SolveBatchRequest plain = request;
  plain.clear_preferred_posture();
  plain.set_posture_weight(0.0);
  std::vector<v1::SolveBatchResponse> plain_messages;
  ASSERT_TRUE(Batch(plain, &plain_messages).ok());
  const std::vector<v1::BatchResult> plain_results = Results(plain_messages);
  ASSERT_EQ(plain_results.size(), 6u);
  int changed = 0;
  for (int i = 0; i < 6; ++i) {
    changed += (Positions(plain_results[i].state()) - Positions(results[i].state())).norm() > 1e-3;
  }
  EXPECT_GE(changed, 4);
}

TEST_F(SolveBatchTest, BadInputNamesTheFieldAndTheBound) {
  ServerOptions options;
  options.kinematics.max_batch_targets = 50;
  StartServer(options);
  auto fields = [&](const v1::SolveBatchRequest& request) {
    std::vector<v1::SolveBatchResponse> messages;
    const grpc::Status status = Batch(request, &messages);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_TRUE(messages.empty());
    return ViolatedFields(status);
  };
  v1::SolveBatchRequest chain;
  *chain.mutable_arm()->mutable_spec() = PlanarArm();
  EXPECT_THAT(fields(chain), Contains("targets"));  // none
  for (int i = 0; i < 51; ++i) *chain.add_targets()->mutable_position() = Vec(0.5, 0.5, 0);
  EXPECT_THAT(fields(chain), Contains("targets"));  // one over --max_batch_targets
  chain.mutable_targets()->DeleteSubrange(10, 41);
  v1::SolveBatchRequest bad = chain;
  bad.mutable_targets(2)->mutable_position()->set_y(std::nan(""));
  EXPECT_THAT(fields(bad), Contains("targets[2].position"));
  bad = chain;
  *bad.mutable_targets(1)->mutable_orientation() = Quat(Eigen::Quaterniond::Identity());
  EXPECT_THAT(fields(bad), Contains("targets[1].orientation"));  // a chain arm has none
  bad = chain;
  bad.mutable_targets(4)->add_seed_positions(0.1);  // one of three
  EXPECT_THAT(fields(bad), Contains("targets[4].seed_positions"));
  bad = chain;
  bad.set_chunk_size(1001);
  EXPECT_THAT(fields(bad), Contains("chunk_size"));
  bad = chain;
  bad.set_max_solutions(4);
  EXPECT_THAT(fields(bad), Contains("max_solutions"));  // branches are for industrial arms
  v1::SolveBatchRequest robot;
  robot.mutable_arm()->mutable_spec()->mutable_robot()->set_preset(v1::ROBOT_PRESET_PANDA);
  for (int i = 0; i < 10; ++i) *robot.add_targets()->mutable_position() = Vec(0.4, 0.0, 0.5);
  bad = robot;
  v1::Quaternion half;
  half.set_w(0.5);
  *bad.mutable_targets(3)->mutable_orientation() = half;  // not a unit quaternion
  EXPECT_THAT(fields(bad), Contains("targets[3].orientation"));
  bad = robot;
  bad.set_max_solutions(65);
  EXPECT_THAT(fields(bad), Contains("max_solutions"));
}

// Slow targets (20000 trials per sub-step each): the deadline ends the call with
// DEADLINE_EXCEEDED long before the work would (the results received are a prefix, in order),
// and the workers are free again at once for a new Solve.
TEST_F(SolveBatchTest, DeadlineStopsTheWorkWithinAChunk) {
  v1::SolveBatchRequest request;
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  request.mutable_options()->set_trials_per_step(20000);
  request.mutable_options()->set_patience(-1);
  request.mutable_options()->set_explore_unconstrained(true);
  request.set_chunk_size(1);
  for (int i = 0; i < 5000; ++i) *request.add_targets()->mutable_position() = Vec(0.7, 0.2 + 1e-4 * i, 0);
  std::vector<v1::SolveBatchResponse> messages;
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status status = Batch(request, &messages, std::chrono::milliseconds(300));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  const std::vector<v1::BatchResult> results = Results(messages);
  EXPECT_LT(results.size(), 5000u);
  v1::SolveRequest quick;
  *quick.mutable_arm()->mutable_spec() = PlanarArm();
  *quick.mutable_target() = Vec(0.7, 0.3, 0);
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(Solve(quick).state().status(), v1::STEP_STATUS_REACHED);
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
}

// A client that cancels after the first message ends the call CANCELLED.
TEST_F(SolveBatchTest, CancelStopsTheCall) {
  v1::SolveBatchRequest request;
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  request.mutable_options()->set_trials_per_step(20000);
  request.mutable_options()->set_patience(-1);
  request.mutable_options()->set_explore_unconstrained(true);
  request.set_chunk_size(1);
  for (int i = 0; i < 2000; ++i) *request.add_targets()->mutable_position() = Vec(0.7, 0.2 + 1e-4 * i, 0);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto reader = stub_->SolveBatch(&context, request);
  v1::SolveBatchResponse message;
  ASSERT_TRUE(reader->Read(&message));
  context.TryCancel();
  while (reader->Read(&message)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

}  // namespace
}  // namespace ikd::server
