// ModelService end to end in process: the real server on 127.0.0.1:0 (memory store unless a
// test says otherwise), a real channel, every RPC's happy path and every error code, with the
// google.rpc.BadRequest field path of each kind of bad input. Not physics: each test states the
// contract it checks (model_service.proto, AIP-133..158) and, for scene edits, the analytic
// positions it expects (tolerance 1e-12, rounding of one rotation).
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <latch>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"
#include "testing/proto_vector.h"

namespace ikd::server {
namespace {

using ::ikd::testing::Vec;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Limits small enough that tests reach them cheaply.
ServerOptions TestOptions() {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.max_request_bytes = 64 << 10;
  options.limits.max_limbs = 64;
  options.limits.max_obstacles = 32;
  options.limits.max_operations = 8;
  options.limits.default_page_size = 7;
  options.limits.max_page_size = 12;
  return options;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/ikd-service-test-XXXXXX";
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A running server and a client stub on a real loopback channel.
class Harness {
 public:
  explicit Harness(ModelStore* store, ServerOptions options = TestOptions()) {
    auto server = IkdServer::Start(options, store);
    EXPECT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    EXPECT_GT(server_->port(), 0);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::ModelService::NewStub(channel_);
  }

  // One unary call with a fresh context and a 10 s deadline.
  template <class Method, class Request, class Response>
  grpc::Status Call(Method method, const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ((*stub_).*method)(&context, request, response);
  }

  grpc::Status CreateArm(const std::string& id, const v1::ArmSpec& spec, v1::Arm* out = nullptr) {
    v1::CreateArmRequest request;
    request.set_arm_id(id);
    *request.mutable_arm()->mutable_spec() = spec;
    v1::Arm ignored;
    return Call(&v1::ModelService::Stub::CreateArm, request, out ? out : &ignored);
  }
  grpc::Status GetArm(const std::string& name, v1::Arm* out) {
    v1::GetArmRequest request;
    request.set_name(name);
    return Call(&v1::ModelService::Stub::GetArm, request, out);
  }
  grpc::Status UpdateArm(const v1::Arm& arm, v1::Arm* out = nullptr) {
    v1::UpdateArmRequest request;
    *request.mutable_arm() = arm;
    v1::Arm ignored;
    return Call(&v1::ModelService::Stub::UpdateArm, request, out ? out : &ignored);
  }
  grpc::Status DeleteArm(const std::string& name, const std::string& etag = "") {
    v1::DeleteArmRequest request;
    request.set_name(name);
    request.set_etag(etag);
    google::protobuf::Empty empty;
    return Call(&v1::ModelService::Stub::DeleteArm, request, &empty);
  }
  grpc::Status CreateScene(const std::string& id, const v1::SceneSpec& spec,
                           v1::Scene* out = nullptr) {
    v1::CreateSceneRequest request;
    request.set_scene_id(id);
    *request.mutable_scene()->mutable_spec() = spec;
    v1::Scene ignored;
    return Call(&v1::ModelService::Stub::CreateScene, request, out ? out : &ignored);
  }
  grpc::Status GetScene(const std::string& name, v1::Scene* out) {
    v1::GetSceneRequest request;
    request.set_name(name);
    return Call(&v1::ModelService::Stub::GetScene, request, out);
  }
  grpc::Status EditScene(const v1::EditSceneRequest& request, v1::Scene* out = nullptr) {
    v1::Scene ignored;
    return Call(&v1::ModelService::Stub::EditScene, request, out ? out : &ignored);
  }

  IkdServer& server() { return *server_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }

 private:
  std::unique_ptr<IkdServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ModelService::Stub> stub_;
};

class ModelServiceTest : public ::testing::Test {
 protected:
  std::unique_ptr<ModelStore> store_ = NewMemoryModelStore();
  Harness client_{store_.get()};
};

v1::ArmSpec PlanarArm(int limbs) {
  v1::ArmSpec spec;
  spec.set_planar(true);
  for (int k = 0; k < limbs; ++k) {
    v1::Limb* limb = spec.add_limbs();
    limb->set_length(0.5);
    limb->set_radius(0.05);
  }
  return spec;
}

v1::Obstacle SphereObstacle(const std::string& id, v1::Vector3 center, double radius) {
  v1::Obstacle o;
  o.set_id(id);
  *o.mutable_sphere()->mutable_center() = center;
  o.mutable_sphere()->set_radius(radius);
  return o;
}

v1::Obstacle BoxObstacle(const std::string& id, v1::Vector3 center, v1::Vector3 half_extents) {
  v1::Obstacle o;
  o.set_id(id);
  *o.mutable_box()->mutable_center() = center;
  *o.mutable_box()->mutable_half_extents() = half_extents;
  return o;
}

v1::SceneSpec PillarScene() {
  v1::SceneSpec spec;
  *spec.add_obstacles() = BoxObstacle("pillar", Vec(1, 0, 0.5), Vec(0.1, 0.1, 0.5));
  *spec.add_obstacles() = SphereObstacle("ball", Vec(1, 0, 0), 0.2);
  v1::Obstacle* floor = spec.add_obstacles();
  floor->set_id("floor");
  *floor->mutable_half_space()->mutable_normal() = Vec(0, 0, 2);  // stored as (0, 0, 1), 1
  floor->mutable_half_space()->set_offset(2);
  return spec;
}

// The single field violation of an INVALID_ARGUMENT, checked for its path and bound.
void ExpectFieldViolation(const grpc::Status& status, const std::string& field,
                          const std::string& bound) {
  ASSERT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr(field));
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.code(), grpc::StatusCode::INVALID_ARGUMENT);
  google::rpc::BadRequest bad_request;
  int found = 0;
  for (const auto& any : details.details()) found += any.UnpackTo(&bad_request) ? 1 : 0;
  ASSERT_EQ(found, 1) << "no google.rpc.BadRequest in the details";
  ASSERT_EQ(bad_request.field_violations_size(), 1);
  EXPECT_EQ(bad_request.field_violations(0).field(), field);
  EXPECT_THAT(bad_request.field_violations(0).description(), HasSubstr(bound));
}

v1::ObstacleOperation Op(v1::ObstacleOperation::Operation kind, const std::string& id) {
  v1::ObstacleOperation op;
  op.set_operation(kind);
  op.set_obstacle_id(id);
  return op;
}

v1::ObstacleOperation AddOp(v1::Obstacle obstacle) {
  v1::ObstacleOperation op;
  op.set_operation(v1::ObstacleOperation::OPERATION_ADD);
  *op.mutable_obstacle() = std::move(obstacle);
  return op;
}

// ---------------------------------------------------------------------------------------------
// Health and happy paths

// grpc.health.v1: the server as a whole and ikd.v1.ModelService report SERVING; an unknown
// service is NOT_FOUND (the standard health protocol).
TEST_F(ModelServiceTest, HealthReportsServing) {
  auto health = grpc::health::v1::Health::NewStub(client_.channel());
  for (const char* service : {"", "ikd.v1.ModelService"}) {
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_TRUE(health->Check(&context, request, &response).ok());
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckRequest request;
  request.set_service("no.such.Service");
  grpc::health::v1::HealthCheckResponse response;
  EXPECT_EQ(health->Check(&context, request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
}

// Arm lifecycle (AIP-133/131/134/135): create -> version 1, name "arms/{id}", canonical spec
// (absent orientation -> (0, 0, 0, 1)); get returns the same message; update with the etag ->
// version 2, new etag, new spec, same create_time; delete -> then NOT_FOUND.
// A three-site chain a-b-c with bones of 0.5 m and 0.4 m.
v1::SkeletonSpec ChainSkeleton() {
  v1::SkeletonSpec spec;
  for (const char* site : {"a", "b", "c"}) spec.add_sites(site);
  v1::SkeletonBone* first = spec.add_bones();
  first->set_i(0);
  first->set_j(1);
  first->set_length(0.5);
  v1::SkeletonBone* second = spec.add_bones();
  second->set_i(1);
  second->set_j(2);
  second->set_length(0.4);
  return spec;
}

// Skeletons: create (version 1, the spec as given), get, list, update with the etag (version 2),
// a stale etag ABORTED, a disconnected skeleton INVALID_ARGUMENT naming the field, delete.
TEST_F(ModelServiceTest, SkeletonLifecycle) {
  v1::Skeleton created;
  v1::CreateSkeletonRequest create;
  create.set_skeleton_id("chain");
  *create.mutable_skeleton()->mutable_spec() = ChainSkeleton();
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::CreateSkeleton, create, &created).ok());
  EXPECT_EQ(created.name(), "skeletons/chain");
  EXPECT_EQ(created.version(), 1);
  EXPECT_TRUE(MessageDifferencer::Equals(created.spec(), ChainSkeleton()));

  v1::GetSkeletonRequest get;
  get.set_name("skeletons/chain");
  v1::Skeleton got;
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::GetSkeleton, get, &got).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(got, created));

  v1::ListSkeletonsResponse listed;
  ASSERT_TRUE(
      client_.Call(&v1::ModelService::Stub::ListSkeletons, v1::ListSkeletonsRequest(), &listed)
          .ok());
  ASSERT_EQ(listed.skeletons_size(), 1);
  EXPECT_EQ(listed.skeletons(0).name(), "skeletons/chain");

  v1::UpdateSkeletonRequest update;
  *update.mutable_skeleton() = got;
  update.mutable_skeleton()->mutable_spec()->mutable_bones(1)->set_length(0.45);
  v1::Skeleton updated;
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::UpdateSkeleton, update, &updated).ok());
  EXPECT_EQ(updated.version(), 2);
  EXPECT_DOUBLE_EQ(updated.spec().bones(1).length(), 0.45);
  EXPECT_EQ(client_.Call(&v1::ModelService::Stub::UpdateSkeleton, update, &updated).error_code(),
            grpc::StatusCode::ABORTED);

  v1::CreateSkeletonRequest disconnected = create;
  disconnected.set_skeleton_id("apart");
  disconnected.mutable_skeleton()->mutable_spec()->add_sites("d");
  ExpectFieldViolation(
      client_.Call(&v1::ModelService::Stub::CreateSkeleton, disconnected, &created),
      "skeleton.spec.bones", "disconnected");

  v1::DeleteSkeletonRequest remove;
  remove.set_name("skeletons/chain");
  remove.set_etag(updated.etag());
  google::protobuf::Empty empty;
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::DeleteSkeleton, remove, &empty).ok());
  EXPECT_EQ(client_.Call(&v1::ModelService::Stub::GetSkeleton, get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ModelServiceTest, ArmLifecycle) {
  v1::Arm created;
  ASSERT_TRUE(client_.CreateArm("planar-3", PlanarArm(3), &created).ok());
  EXPECT_EQ(created.name(), "arms/planar-3");
  EXPECT_EQ(created.version(), 1);
  EXPECT_FALSE(created.etag().empty());
  EXPECT_GT(created.create_time().seconds(), 1'600'000'000);
  EXPECT_EQ(created.spec().limbs_size(), 3);
  EXPECT_EQ(created.spec().base_orientation().w(), 1.0);
  EXPECT_DOUBLE_EQ(created.spec().limbs(1).length(), 0.5);

  v1::Arm got;
  ASSERT_TRUE(client_.GetArm("arms/planar-3", &got).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(got, created)) << got.DebugString();

  v1::Arm change = got;
  *change.mutable_spec() = PlanarArm(4);
  v1::JointLimit* limit = change.mutable_spec()->add_joint_limits();
  limit->set_limited(true);
  limit->set_min(-1.0);
  limit->set_max(1.0);
  change.mutable_spec()->add_joint_limits();  // free joint
  change.mutable_spec()->add_joint_limits()->set_limited(true);
  *change.mutable_spec()->mutable_base_orientation() = v1::Quaternion();
  change.mutable_spec()->mutable_base_orientation()->set_z(2.0);  // normalized to (0, 0, 1, 0)
  v1::Arm updated;
  ASSERT_TRUE(client_.UpdateArm(change, &updated).ok());
  EXPECT_EQ(updated.version(), 2);
  EXPECT_NE(updated.etag(), created.etag());
  EXPECT_EQ(updated.spec().limbs_size(), 4);
  EXPECT_EQ(updated.spec().joint_limits(0).max(), 1.0);
  EXPECT_FALSE(updated.spec().joint_limits(1).limited());
  EXPECT_EQ(updated.spec().base_orientation().z(), 1.0);
  EXPECT_EQ(updated.spec().base_orientation().w(), 0.0);
  EXPECT_TRUE(MessageDifferencer::Equals(updated.create_time(), created.create_time()));

  ASSERT_TRUE(client_.DeleteArm("arms/planar-3", updated.etag()).ok());
  EXPECT_EQ(client_.GetArm("arms/planar-3", &got).error_code(), grpc::StatusCode::NOT_FOUND);
}

// Scene lifecycle: create stores the canonical form (half-space normal (0, 0, 2), offset 2 ->
// (0, 0, 1), 1: the same region); get, list, full update and delete.
TEST_F(ModelServiceTest, SceneLifecycle) {
  v1::Scene created;
  ASSERT_TRUE(client_.CreateScene("pillars", PillarScene(), &created).ok());
  EXPECT_EQ(created.name(), "scenes/pillars");
  EXPECT_EQ(created.version(), 1);
  ASSERT_EQ(created.spec().obstacles_size(), 3);
  const v1::HalfSpace& floor = created.spec().obstacles(2).half_space();
  EXPECT_EQ(floor.normal().z(), 1.0);
  EXPECT_EQ(floor.offset(), 1.0);
  EXPECT_EQ(created.spec().obstacles(0).box().orientation().w(), 1.0);

  v1::Scene got;
  ASSERT_TRUE(client_.GetScene("scenes/pillars", &got).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(got, created));

  v1::ListScenesResponse list;
  ASSERT_TRUE(
      client_.Call(&v1::ModelService::Stub::ListScenes, v1::ListScenesRequest(), &list).ok());
  ASSERT_EQ(list.scenes_size(), 1);
  EXPECT_TRUE(MessageDifferencer::Equals(list.scenes(0), created));
  EXPECT_TRUE(list.next_page_token().empty());

  v1::UpdateSceneRequest update;
  *update.mutable_scene() = got;
  update.mutable_scene()->mutable_spec()->mutable_obstacles()->DeleteSubrange(0, 2);
  v1::Scene updated;
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::UpdateScene, update, &updated).ok());
  EXPECT_EQ(updated.version(), 2);
  ASSERT_EQ(updated.spec().obstacles_size(), 1);
  EXPECT_EQ(updated.spec().obstacles(0).id(), "floor");

  v1::DeleteSceneRequest remove;
  remove.set_name("scenes/pillars");
  google::protobuf::Empty empty;
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::DeleteScene, remove, &empty).ok());
  EXPECT_EQ(client_.GetScene("scenes/pillars", &got).error_code(), grpc::StatusCode::NOT_FOUND);
}

// EditScene applies ADD, MOVE, REMOVE in order as one write (version + 1). Analytic motion:
// the box centre (1, 0, 0.5) + translation (0.5, 0, 0) = (1.5, 0, 0.5); the ball centre
// (1, 0, 0) rotated 90 deg about world z = (0, 1, 0), and the box orientation becomes that
// rotation (0, 0, sin 45, cos 45). Tolerance 1e-12.
TEST_F(ModelServiceTest, EditSceneAddsMovesAndRemoves) {
  v1::Scene created;
  ASSERT_TRUE(client_.CreateScene("edit", PillarScene(), &created).ok());
  const double s = std::sqrt(0.5);
  v1::EditSceneRequest edit;
  edit.set_name("scenes/edit");
  edit.set_etag(created.etag());
  *edit.add_operations() = AddOp(SphereObstacle("new-ball", Vec(0, 0, 2), 0.3));
  v1::ObstacleOperation* shift = edit.add_operations();
  *shift = Op(v1::ObstacleOperation::OPERATION_MOVE, "pillar");
  *shift->mutable_translation() = Vec(0.5, 0, 0);
  v1::ObstacleOperation* spin = edit.add_operations();
  *spin = Op(v1::ObstacleOperation::OPERATION_MOVE, "ball");
  spin->mutable_rotation()->set_z(s);
  spin->mutable_rotation()->set_w(s);
  *edit.add_operations() = Op(v1::ObstacleOperation::OPERATION_REMOVE, "floor");
  v1::Scene edited;
  ASSERT_TRUE(client_.EditScene(edit, &edited).ok());
  EXPECT_EQ(edited.version(), 2);
  ASSERT_EQ(edited.spec().obstacles_size(), 3);
  const v1::Box& box = edited.spec().obstacles(0).box();
  EXPECT_NEAR(box.center().x(), 1.5, 1e-12);
  EXPECT_NEAR(box.center().y(), 0.0, 1e-12);
  EXPECT_NEAR(box.center().z(), 0.5, 1e-12);
  EXPECT_NEAR(box.orientation().w(), 1.0, 1e-12);  // translation only
  const v1::Sphere& ball = edited.spec().obstacles(1).sphere();
  EXPECT_NEAR(ball.center().x(), 0.0, 1e-12);
  EXPECT_NEAR(ball.center().y(), 1.0, 1e-12);
  EXPECT_NEAR(ball.center().z(), 0.0, 1e-12);
  EXPECT_EQ(edited.spec().obstacles(2).id(), "new-ball");

  // A second edit rotating the box about the world origin also turns its orientation.
  v1::EditSceneRequest turn;
  turn.set_name("scenes/edit");
  v1::ObstacleOperation* op = turn.add_operations();
  *op = Op(v1::ObstacleOperation::OPERATION_MOVE, "pillar");
  op->mutable_rotation()->set_z(s);
  op->mutable_rotation()->set_w(s);
  ASSERT_TRUE(client_.EditScene(turn, &edited).ok());
  EXPECT_EQ(edited.version(), 3);
  const v1::Box& turned = edited.spec().obstacles(0).box();
  EXPECT_NEAR(turned.center().x(), 0.0, 1e-12);
  EXPECT_NEAR(turned.center().y(), 1.5, 1e-12);
  EXPECT_NEAR(turned.orientation().z(), s, 1e-12);
  EXPECT_NEAR(turned.orientation().w(), s, 1e-12);
}

// EditScene is all or nothing: a valid ADD followed by a REMOVE of an unknown obstacle fails
// with the REMOVE's field, and the stored scene keeps its version and obstacles.
TEST_F(ModelServiceTest, EditSceneIsAtomic) {
  v1::Scene created;
  ASSERT_TRUE(client_.CreateScene("atomic", PillarScene(), &created).ok());
  v1::EditSceneRequest edit;
  edit.set_name("scenes/atomic");
  *edit.add_operations() = AddOp(SphereObstacle("extra", Vec(0, 0, 1), 0.1));
  *edit.add_operations() = Op(v1::ObstacleOperation::OPERATION_REMOVE, "ghost");
  ExpectFieldViolation(client_.EditScene(edit), "operations[1].obstacle_id",
                       "no obstacle \"ghost\" in scenes/atomic");
  v1::Scene got;
  ASSERT_TRUE(client_.GetScene("scenes/atomic", &got).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(got, created));
}

// Pagination (AIP-158): 25 arms in pages of 10 -> 10, 10, 5 with tokens set, set, empty; every
// arm exactly once, in id order. page_size 0 -> the default (7 here), above the maximum -> the
// maximum (12 here).
TEST_F(ModelServiceTest, ListArmsPaginates) {
  std::set<std::string> expected;
  for (int k = 0; k < 25; ++k) {
    const std::string id = absl::StrCat("arm-", k < 10 ? "0" : "", k);
    ASSERT_TRUE(client_.CreateArm(id, PlanarArm(2)).ok());
    expected.insert("arms/" + id);
  }
  std::vector<std::string> seen;
  std::vector<int> page_sizes;
  v1::ListArmsRequest request;
  request.set_page_size(10);
  do {
    v1::ListArmsResponse page;
    ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::ListArms, request, &page).ok());
    page_sizes.push_back(page.arms_size());
    for (const v1::Arm& arm : page.arms()) seen.push_back(arm.name());
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty() && page_sizes.size() < 10);
  EXPECT_EQ(page_sizes, (std::vector<int>{10, 10, 5}));
  EXPECT_EQ(seen, std::vector<std::string>(expected.begin(), expected.end()));

  v1::ListArmsResponse page;
  request.Clear();
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::ListArms, request, &page).ok());
  EXPECT_EQ(page.arms_size(), 7);
  request.set_page_size(1000);
  page.Clear();
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::ListArms, request, &page).ok());
  EXPECT_EQ(page.arms_size(), 12);
  EXPECT_FALSE(page.next_page_token().empty());
}

// ---------------------------------------------------------------------------------------------
// Error codes

// NOT_FOUND for every method on an unknown name; ALREADY_EXISTS on a taken id.
TEST_F(ModelServiceTest, NotFoundAndAlreadyExists) {
  v1::Arm arm;
  EXPECT_EQ(client_.GetArm("arms/nobody", &arm).error_code(), grpc::StatusCode::NOT_FOUND);
  arm.set_name("arms/nobody");
  *arm.mutable_spec() = PlanarArm(2);
  EXPECT_EQ(client_.UpdateArm(arm).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(client_.DeleteArm("arms/nobody").error_code(), grpc::StatusCode::NOT_FOUND);
  v1::Scene scene;
  EXPECT_EQ(client_.GetScene("scenes/nowhere", &scene).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::EditSceneRequest edit;
  edit.set_name("scenes/nowhere");
  *edit.add_operations() = Op(v1::ObstacleOperation::OPERATION_REMOVE, "x");
  EXPECT_EQ(client_.EditScene(edit).error_code(), grpc::StatusCode::NOT_FOUND);

  ASSERT_TRUE(client_.CreateArm("twice", PlanarArm(2)).ok());
  const grpc::Status again = client_.CreateArm("twice", PlanarArm(3));
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(again.error_message(), HasSubstr("arms/twice"));
  ASSERT_TRUE(client_.CreateScene("twice", v1::SceneSpec()).ok());  // other collection
  EXPECT_EQ(client_.CreateScene("twice", v1::SceneSpec()).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
}

// ABORTED (AIP-154) when update, delete or edit carries an etag that is no longer current;
// the stored model is unchanged by the refused write.
TEST_F(ModelServiceTest, StaleEtagIsAborted) {
  v1::Arm v1_arm, v2_arm;
  ASSERT_TRUE(client_.CreateArm("etag", PlanarArm(2), &v1_arm).ok());
  ASSERT_TRUE(client_.UpdateArm(v1_arm, &v2_arm).ok());
  v1::Arm stale = v1_arm;
  *stale.mutable_spec() = PlanarArm(5);
  EXPECT_EQ(client_.UpdateArm(stale).error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(client_.DeleteArm("arms/etag", v1_arm.etag()).error_code(), grpc::StatusCode::ABORTED);
  v1::Arm got;
  ASSERT_TRUE(client_.GetArm("arms/etag", &got).ok());
  EXPECT_EQ(got.version(), 2);
  EXPECT_EQ(got.spec().limbs_size(), 2);

  v1::Scene scene, edited;
  ASSERT_TRUE(client_.CreateScene("etag", PillarScene(), &scene).ok());
  v1::EditSceneRequest edit;
  edit.set_name("scenes/etag");
  edit.set_etag(scene.etag());
  *edit.add_operations() = Op(v1::ObstacleOperation::OPERATION_REMOVE, "ball");
  ASSERT_TRUE(client_.EditScene(edit, &edited).ok());
  EXPECT_EQ(client_.EditScene(edit).error_code(), grpc::StatusCode::ABORTED);
  v1::UpdateSceneRequest update;
  *update.mutable_scene() = scene;
  v1::Scene ignored;
  EXPECT_EQ(client_.Call(&v1::ModelService::Stub::UpdateScene, update, &ignored).error_code(),
            grpc::StatusCode::ABORTED);
}

// INVALID_ARGUMENT for bad arms, each with one BadRequest field violation naming the request
// field path and the bound it breaks (the solver's own checks, ik::Arm::Create).
// An industrial arm from a DH table (UR5's, issue 5) is stored as given and read back equal; a
// DH row with a crossed range, a prismatic URDF joint and a wrong number of home positions are
// INVALID_ARGUMENT naming the wire field.
TEST_F(ModelServiceTest, IndustrialArmsAreStoredAndValidated) {
  v1::ArmSpec ur5;
  v1::DhTable* table = ur5.mutable_robot()->mutable_dh();
  table->set_convention(v1::DH_CONVENTION_STANDARD);
  const double rows[6][3] = {{0, 1.5707963267948966, 0.089159}, {-0.425, 0, 0}, {-0.39225, 0, 0},
                             {0, 1.5707963267948966, 0.10915}, {0, -1.5707963267948966, 0.09465},
                             {0, 0, 0.0823}};
  for (const auto& r : rows) {
    v1::DhRow* row = table->add_rows();
    row->set_a(r[0]);
    row->set_alpha(r[1]);
    row->set_d(r[2]);
    row->mutable_range()->set_lower(-6.28);
    row->mutable_range()->set_upper(6.28);
    row->mutable_range()->set_max_velocity(3.14);
  }
  v1::Arm created, got;
  ASSERT_TRUE(client_.CreateArm("ur5", ur5, &created).ok());
  ASSERT_TRUE(client_.GetArm("arms/ur5", &got).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got.spec(), ur5));

  v1::ArmSpec crossed = ur5;
  crossed.mutable_robot()->mutable_dh()->mutable_rows(2)->mutable_range()->set_lower(7.0);
  ExpectFieldViolation(client_.CreateArm("x", crossed), "arm.spec.robot.dh.rows[2].range",
                       "lower must be <= upper");
  v1::ArmSpec homes = ur5;
  homes.mutable_robot()->add_home_positions(0.1);
  ExpectFieldViolation(client_.CreateArm("x", homes), "arm.spec.robot.home_positions",
                       "one value per joint (6)");
  v1::ArmSpec prismatic;
  v1::UrdfChain* urdf = prismatic.mutable_robot()->mutable_urdf();
  urdf->set_urdf(
      "<robot name=\"slide\"><link name=\"a\"/><link name=\"b\"/><joint name=\"s\" "
      "type=\"prismatic\"><parent link=\"a\"/><child link=\"b\"/><axis xyz=\"1 0 0\"/>"
      "<limit lower=\"0\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint></robot>");
  urdf->set_base_link("a");
  urdf->set_tip_link("b");
  ExpectFieldViolation(client_.CreateArm("x", prismatic), "arm.spec.robot.urdf.urdf",
                       "prismatic joints are not supported");
  urdf->set_tip_link("c");
  ExpectFieldViolation(client_.CreateArm("x", prismatic), "arm.spec.robot.urdf.tip_link",
                       "is not a link of robot 'slide'");
}

// A URDF arm's <collision> geometry (issue 33): what the import approximated or left out is
// stored with the arm and read back (here the base's box, l1's cylinder and l2's mesh, which
// was not sent); the self-collision fields arrive and bad values name their field.
v1::ArmSpec ToyUrdfArmWithGeometry() {
  v1::ArmSpec spec;
  v1::UrdfChain* urdf = spec.mutable_robot()->mutable_urdf();
  const std::string limit = "<limit lower=\"-2\" upper=\"2\" effort=\"1\" velocity=\"1\"/>";
  auto joint = [&](const std::string& name, const std::string& parent, const std::string& child,
                   const std::string& xyz) {
    return "<joint name=\"" + name + "\" type=\"revolute\"><parent link=\"" + parent +
           "\"/><child link=\"" + child + "\"/><origin xyz=\"" + xyz + "\"/><axis xyz=\"0 1 0\"/>" +
           limit + "</joint>";
  };
  auto collision = [](const std::string& geometry) {
    return "<collision><geometry>" + geometry + "</geometry></collision>";
  };
  urdf->set_urdf(
      "<robot name=\"toy\"><link name=\"base\">" + collision("<box size=\"0.2 0.2 0.2\"/>") +
      "</link><link name=\"l1\">" + collision("<cylinder radius=\"0.05\" length=\"0.3\"/>") +
      "</link><link name=\"l2\">" + collision("<mesh filename=\"package://toy/meshes/l2.stl\"/>") +
      "</link><link name=\"l3\"/>" + joint("j1", "base", "l1", "0 0 0.3") +
      joint("j2", "l1", "l2", "0 0 0.3") + joint("j3", "l2", "l3", "0 0 0.3") + "</robot>");
  urdf->set_base_link("base");
  urdf->set_tip_link("l3");
  return spec;
}

TEST_F(ModelServiceTest, UrdfCollisionGeometryNotesAreStoredAndBadFieldsNamed) {
  v1::Arm created, got;
  ASSERT_TRUE(client_.CreateArm("toy", ToyUrdfArmWithGeometry(), &created).ok());
  ASSERT_TRUE(client_.GetArm("arms/toy", &got).ok());
  auto said = [&](const std::string& what) {  // in the arm last read into `got`
    const auto& notes = got.spec().robot().geometry_notes();
    return std::any_of(notes.begin(), notes.end(), [&](const std::string& note) {
      return note.find(what) != std::string::npos;
    });
  };
  EXPECT_TRUE(said("'package://toy/meshes/l2.stl' was not sent")) << got.spec().DebugString();
  EXPECT_TRUE(said("<collision> #0 of link 'base'"));
  EXPECT_TRUE(said("cylinder covered by a capsule"));
  // Notes sent by a client are not kept: the server writes its own.
  v1::ArmSpec with_notes = ToyUrdfArmWithGeometry();
  with_notes.mutable_robot()->add_geometry_notes("made up");
  ASSERT_TRUE(client_.CreateArm("toy2", with_notes, &created).ok());
  ASSERT_TRUE(client_.GetArm("arms/toy2", &got).ok());
  EXPECT_FALSE(said("made up"));

  v1::ArmSpec allowed = ToyUrdfArmWithGeometry();
  v1::LinkPair* pair = allowed.mutable_robot()->add_allowed_collisions();
  pair->set_link_a(0);
  pair->set_link_b(7);
  ExpectFieldViolation(client_.CreateArm("x", allowed), "arm.spec.robot.allowed_collisions[0]",
                       "names link 7; links are 0 .. 2");
  v1::ArmSpec garbage = ToyUrdfArmWithGeometry();
  (*garbage.mutable_robot()->mutable_urdf()->mutable_meshes())["l2.stl"] = "not a mesh";
  ExpectFieldViolation(client_.CreateArm("x", garbage), "arm.spec.robot.urdf.meshes",
                       "'package://toy/meshes/l2.stl' (<collision> #0 of link 'l2'): not an STL");
  v1::ArmSpec negative = ToyUrdfArmWithGeometry();
  std::string xml = negative.robot().urdf().urdf();
  xml.replace(xml.find("radius=\"0.05\""), 14, "radius=\"-0.05\"");
  negative.mutable_robot()->mutable_urdf()->set_urdf(xml);
  ExpectFieldViolation(client_.CreateArm("x", negative), "arm.spec.robot.urdf.urdf",
                       "<collision> #0 of link 'l1': cylinder radius must be finite, >= 0");
  v1::ArmSpec radii = ToyUrdfArmWithGeometry();
  for (int k = 0; k < 3; ++k) radii.mutable_robot()->add_link_radii(0.05);
  ExpectFieldViolation(client_.CreateArm("x", radii), "arm.spec.robot.link_radii",
                       "must be empty where link_shapes");
}

// A preset arm carries its collision model, and says whose it is; link_radii replace it.
TEST_F(ModelServiceTest, PresetArmsCarryTheirCollisionModelUnlessLinkRadiiReplaceIt) {
  v1::ArmSpec ur5;
  ur5.mutable_robot()->set_preset(v1::ROBOT_PRESET_UR5);
  v1::Arm created, got;
  ASSERT_TRUE(client_.CreateArm("ur5", ur5, &created).ok());
  ASSERT_TRUE(client_.GetArm("arms/ur5", &got).ok());
  ASSERT_GE(got.spec().robot().geometry_notes_size(), 1) << got.spec().DebugString();
  EXPECT_THAT(got.spec().robot().geometry_notes(0), HasSubstr("ur_description"));

  v1::ArmSpec lines = ur5;
  for (int k = 0; k < 6; ++k) lines.mutable_robot()->add_link_radii(0.0);
  ASSERT_TRUE(client_.CreateArm("ur5-lines", lines, &created).ok());
  ASSERT_TRUE(client_.GetArm("arms/ur5-lines", &got).ok());
  ASSERT_EQ(got.spec().robot().geometry_notes_size(), 1);
  EXPECT_THAT(got.spec().robot().geometry_notes(0), HasSubstr("link_radii replace"));
}

TEST_F(ModelServiceTest, InvalidArmsNameTheField) {
  v1::ArmSpec nan_length = PlanarArm(3);
  nan_length.mutable_limbs(1)->set_length(kNaN);
  ExpectFieldViolation(client_.CreateArm("a", nan_length), "arm.spec.limbs[1].length",
                       "finite and in (0, 1e+06] m");
  v1::ArmSpec negative = PlanarArm(3);
  negative.mutable_limbs(0)->set_length(-0.5);
  ExpectFieldViolation(client_.CreateArm("a", negative), "arm.spec.limbs[0].length",
                       "finite and in (0, 1e+06] m, got -0.5");
  v1::ArmSpec negative_radius = PlanarArm(3);
  negative_radius.mutable_limbs(2)->set_radius(-1);
  ExpectFieldViolation(client_.CreateArm("a", negative_radius), "arm.spec.limbs[2].radius",
                       "in [0, 1e+06] m");
  v1::ArmSpec crossed = PlanarArm(3);
  v1::JointLimit* limit = crossed.add_joint_limits();
  limit->set_limited(true);
  limit->set_min(1.0);
  limit->set_max(0.5);
  crossed.add_joint_limits();
  ExpectFieldViolation(client_.CreateArm("a", crossed), "arm.spec.joint_limits[0]",
                       "min 1 must be <= max 0.5");
  v1::ArmSpec out_of_range = crossed;
  out_of_range.mutable_joint_limits(0)->set_min(-4.0);
  ExpectFieldViolation(client_.CreateArm("a", out_of_range), "arm.spec.joint_limits[0].min",
                       "in [-3.14159, pi]");
  v1::ArmSpec silent = PlanarArm(3);
  silent.add_joint_limits()->set_max(1.0);  // limited == false but a bound is set
  silent.add_joint_limits();
  ExpectFieldViolation(client_.CreateArm("a", silent), "arm.spec.joint_limits[0].limited",
                       "must be true");
  v1::ArmSpec wrong_count = PlanarArm(3);
  wrong_count.add_joint_limits();
  ExpectFieldViolation(client_.CreateArm("a", wrong_count), "arm.spec.joint_limits",
                       "need 0 or 2 entries");
  v1::ArmSpec nan_base = PlanarArm(3);
  nan_base.mutable_base_position()->set_y(kNaN);
  ExpectFieldViolation(client_.CreateArm("a", nan_base), "arm.spec.base_position",
                       "must be finite");
  v1::ArmSpec tiny_rotation = PlanarArm(3);
  tiny_rotation.mutable_base_orientation()->set_x(1e-12);
  ExpectFieldViolation(client_.CreateArm("a", tiny_rotation), "arm.spec.base_orientation",
                       "non-zero quaternion");
  ExpectFieldViolation(client_.CreateArm("a", v1::ArmSpec()), "arm.spec.limbs",
                       "need between 1 and");
  v1::CreateArmRequest no_spec;
  no_spec.set_arm_id("a");
  v1::Arm ignored;
  ExpectFieldViolation(client_.Call(&v1::ModelService::Stub::CreateArm, no_spec, &ignored),
                       "arm.spec", "is required");
  // Nothing was stored by the refused creates.
  EXPECT_EQ(client_.GetArm("arms/a", &ignored).error_code(), grpc::StatusCode::NOT_FOUND);
}

// Ids must match [a-z0-9-]{1,63}, names "arms/{id}" / "scenes/{id}".
TEST_F(ModelServiceTest, InvalidIdsAndNames) {
  for (const std::string& id : {std::string(""), std::string("Upper"), std::string("under_score"),
                                std::string("sl/ash"), std::string(64, 'a')}) {
    ExpectFieldViolation(client_.CreateArm(id, PlanarArm(2)), "arm_id", "[a-z0-9-]{1,63}");
  }
  EXPECT_TRUE(client_.CreateArm(std::string(63, 'a'), PlanarArm(2)).ok());
  ExpectFieldViolation(client_.CreateScene("Bad", v1::SceneSpec()), "scene_id", "[a-z0-9-]{1,63}");
  v1::Arm arm;
  ExpectFieldViolation(client_.GetArm("robots/x", &arm), "name", "must be \"arms/{id}\"");
  ExpectFieldViolation(client_.GetArm("arms/", &arm), "name", "[a-z0-9-]{1,63}");
  ExpectFieldViolation(client_.GetArm("arms/a/b", &arm), "name", "[a-z0-9-]{1,63}");
  v1::Scene scene;
  ExpectFieldViolation(client_.GetScene("arms/x", &scene), "name", "\"scenes/{id}\"");
  arm.set_name("scenes/x");
  *arm.mutable_spec() = PlanarArm(2);
  ExpectFieldViolation(client_.UpdateArm(arm), "arm.name", "\"arms/{id}\"");
  ExpectFieldViolation(client_.DeleteArm(""), "name", "\"arms/{id}\"");
}

// INVALID_ARGUMENT for bad scenes: the solver's shape checks (planning::Scene::Create) mapped onto
// the wire's oneof paths ("obstacles[k].sphere.radius").
TEST_F(ModelServiceTest, InvalidScenesNameTheField) {
  v1::SceneSpec nan_radius = PillarScene();
  nan_radius.mutable_obstacles(1)->mutable_sphere()->set_radius(kNaN);
  ExpectFieldViolation(client_.CreateScene("s", nan_radius),
                       "scene.spec.obstacles[1].sphere.radius", "finite and in [0, 1e+06] m");
  v1::SceneSpec negative_box = PillarScene();
  negative_box.mutable_obstacles(0)->mutable_box()->mutable_half_extents()->set_z(-0.1);
  ExpectFieldViolation(client_.CreateScene("s", negative_box),
                       "scene.spec.obstacles[0].box.half_extents", "finite and in [0, 1e+06] m");
  v1::SceneSpec zero_normal = PillarScene();
  *zero_normal.mutable_obstacles(2)->mutable_half_space()->mutable_normal() = Vec(0, 0, 0);
  ExpectFieldViolation(client_.CreateScene("s", zero_normal),
                       "scene.spec.obstacles[2].half_space.normal", "norm >= 1e-09");
  v1::SceneSpec duplicate = PillarScene();
  duplicate.mutable_obstacles(2)->set_id("pillar");
  ExpectFieldViolation(client_.CreateScene("s", duplicate), "scene.spec.obstacles[2].id",
                       "duplicates obstacles[0].id");
  v1::SceneSpec no_id = PillarScene();
  no_id.mutable_obstacles(1)->clear_id();
  ExpectFieldViolation(client_.CreateScene("s", no_id), "scene.spec.obstacles[1].id", "non-empty");
  v1::SceneSpec no_shape = PillarScene();
  no_shape.mutable_obstacles(1)->clear_shape();
  ExpectFieldViolation(client_.CreateScene("s", no_shape), "scene.spec.obstacles[1]",
                       "must set a shape");
}

// INVALID_ARGUMENT for bad edits, naming the operation's field: unknown obstacle on MOVE and
// REMOVE, duplicate id on ADD, invalid added shape, non-finite motion, missing operation kind.
TEST_F(ModelServiceTest, InvalidEditsNameTheOperation) {
  ASSERT_TRUE(client_.CreateScene("e", PillarScene()).ok());
  auto edit_with = [](std::vector<v1::ObstacleOperation> ops) {
    v1::EditSceneRequest edit;
    edit.set_name("scenes/e");
    for (auto& op : ops) *edit.add_operations() = std::move(op);
    return edit;
  };
  v1::ObstacleOperation move_ghost = Op(v1::ObstacleOperation::OPERATION_MOVE, "ghost");
  *move_ghost.mutable_translation() = Vec(1, 0, 0);
  ExpectFieldViolation(client_.EditScene(edit_with({move_ghost})), "operations[0].obstacle_id",
                       "no obstacle \"ghost\"");
  ExpectFieldViolation(
      client_.EditScene(edit_with({Op(v1::ObstacleOperation::OPERATION_REMOVE, "ball"),
                                   Op(v1::ObstacleOperation::OPERATION_REMOVE, "ball")})),
      "operations[1].obstacle_id", "no obstacle \"ball\"");
  ExpectFieldViolation(
      client_.EditScene(edit_with({AddOp(SphereObstacle("ball", Vec(0, 0, 0), 1))})),
      "operations[0].obstacle.id", "already in scenes/e");
  ExpectFieldViolation(
      client_.EditScene(edit_with({AddOp(SphereObstacle("new", Vec(0, 0, 0), -1))})),
      "operations[0].obstacle.sphere.radius", "in [0, 1e+06] m");
  v1::ObstacleOperation nan_move = Op(v1::ObstacleOperation::OPERATION_MOVE, "ball");
  *nan_move.mutable_translation() = Vec(kNaN, 0, 0);
  ExpectFieldViolation(client_.EditScene(edit_with({nan_move})), "operations[0].translation",
                       "must be finite");
  ExpectFieldViolation(
      client_.EditScene(edit_with({Op(v1::ObstacleOperation::OPERATION_UNSPECIFIED, "ball")})),
      "operations[0].operation", "OPERATION_ADD, OPERATION_MOVE or OPERATION_REMOVE");
  ExpectFieldViolation(
      client_.EditScene(edit_with({Op(v1::ObstacleOperation::OPERATION_MOVE, "")})),
      "operations[0].obstacle_id", "required");
  v1::ObstacleOperation add_nothing;
  add_nothing.set_operation(v1::ObstacleOperation::OPERATION_ADD);
  ExpectFieldViolation(client_.EditScene(edit_with({add_nothing})), "operations[0].obstacle",
                       "required");
  ExpectFieldViolation(client_.EditScene(edit_with({})), "operations", "need 1 to 8");
  v1::Scene got;
  ASSERT_TRUE(client_.GetScene("scenes/e", &got).ok());
  EXPECT_EQ(got.version(), 1);  // no refused edit was written
}

// Oversized requests: more limbs, obstacles or operations than the limits (64, 32, 8 here) are
// INVALID_ARGUMENT naming the repeated field and the bound; a request above the message-size
// limit (64 KiB here) is RESOURCE_EXHAUSTED before any handler runs.
TEST_F(ModelServiceTest, OversizedRequests) {
  ExpectFieldViolation(client_.CreateArm("big", PlanarArm(65)), "arm.spec.limbs",
                       "at most 64 limbs, got 65");
  v1::SceneSpec crowded;
  for (int k = 0; k < 33; ++k) {
    *crowded.add_obstacles() = SphereObstacle(absl::StrCat("s", k), Vec(k, 0, 0), 0.1);
  }
  ExpectFieldViolation(client_.CreateScene("crowded", crowded), "scene.spec.obstacles",
                       "at most 32 obstacles, got 33");
  crowded.mutable_obstacles()->RemoveLast();
  ASSERT_TRUE(client_.CreateScene("crowded", crowded).ok());
  v1::EditSceneRequest one_more;
  one_more.set_name("scenes/crowded");
  *one_more.add_operations() = AddOp(SphereObstacle("s32", Vec(0, 1, 0), 0.1));
  ExpectFieldViolation(client_.EditScene(one_more), "operations[0]", "exceed 32 obstacles");
  v1::EditSceneRequest many;
  many.set_name("scenes/crowded");
  for (int k = 0; k < 9; ++k)
    *many.add_operations() = Op(v1::ObstacleOperation::OPERATION_REMOVE, "s0");
  ExpectFieldViolation(client_.EditScene(many), "operations", "need 1 to 8 operations, got 9");

  const grpc::Status huge = client_.CreateArm("huge", PlanarArm(5000));  // ~100 KB
  EXPECT_EQ(huge.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << huge.error_message();
}

// Bad pagination input is INVALID_ARGUMENT: negative page_size, a token that is not one of ours
// or belongs to the other collection.
TEST_F(ModelServiceTest, InvalidPagination) {
  v1::ListArmsRequest request;
  v1::ListArmsResponse response;
  request.set_page_size(-1);
  ExpectFieldViolation(client_.Call(&v1::ModelService::Stub::ListArms, request, &response),
                       "page_size", ">= 0");
  request.set_page_size(1);
  request.set_page_token("not-a-token");
  ExpectFieldViolation(client_.Call(&v1::ModelService::Stub::ListArms, request, &response),
                       "page_token", "next_page_token");
  for (const char* id : {"s1", "s2"}) ASSERT_TRUE(client_.CreateScene(id, v1::SceneSpec()).ok());
  v1::ListScenesRequest scenes;
  scenes.set_page_size(1);
  v1::ListScenesResponse page;
  ASSERT_TRUE(client_.Call(&v1::ModelService::Stub::ListScenes, scenes, &page).ok());
  ASSERT_FALSE(page.next_page_token().empty());
  request.set_page_token(page.next_page_token());
  ExpectFieldViolation(client_.Call(&v1::ModelService::Stub::ListArms, request, &response),
                       "page_token", "ListArms");
}

// A full store is RESOURCE_EXHAUSTED with a google.rpc.QuotaFailure naming the collection.
TEST(ModelServiceQuotaTest, FullStoreIsResourceExhausted) {
  StoreOptions store_options;
  store_options.max_models_per_collection = 2;
  auto store = NewMemoryModelStore(store_options);
  Harness client(store.get());
  ASSERT_TRUE(client.CreateArm("one", PlanarArm(2)).ok());
  ASSERT_TRUE(client.CreateArm("two", PlanarArm(2)).ok());
  const grpc::Status full = client.CreateArm("three", PlanarArm(2));
  ASSERT_EQ(full.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(full.error_message(), HasSubstr("at most 2 arms"));
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(full.error_details()));
  ASSERT_EQ(details.details_size(), 1);
  google::rpc::QuotaFailure quota;
  ASSERT_TRUE(details.details(0).UnpackTo(&quota));
  ASSERT_EQ(quota.violations_size(), 1);
  EXPECT_EQ(quota.violations(0).subject(), "arms");
}

// ---------------------------------------------------------------------------------------------
// Concurrency and durability

// Concurrent UpdateArm with etags (4 clients x 10 writes, each appends one limb whose length
// encodes writer and sequence; retry on ABORTED): every acknowledged write is in the final arm
// once, in version order; versions 2 .. 41 without gaps; each writer's versions increase.
TEST_F(ModelServiceTest, ConcurrentEtagUpdatesLoseNothing) {
  constexpr int kWriters = 4, kWrites = 10;
  ASSERT_TRUE(client_.CreateArm("hot", PlanarArm(1)).ok());
  std::vector<std::vector<std::pair<int64_t, double>>> acked(kWriters);
  std::atomic<int> retries{0};
  std::latch start(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (int k = 0; k < kWrites; ++k) {
        const double length = 1.0 + w + 0.01 * (k + 1);
        while (true) {
          v1::Arm current;
          ASSERT_TRUE(client_.GetArm("arms/hot", &current).ok());
          current.mutable_spec()->add_limbs()->set_length(length);
          v1::Arm written;
          const grpc::Status status = client_.UpdateArm(current, &written);
          if (status.ok()) {
            acked[w].emplace_back(written.version(), length);
            break;
          }
          ASSERT_EQ(status.error_code(), grpc::StatusCode::ABORTED) << status.error_message();
          ++retries;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::cout << "stale-etag retries: " << retries << "\n";

  std::map<int64_t, double> by_version;
  for (const auto& writes : acked) {
    ASSERT_EQ(writes.size(), static_cast<size_t>(kWrites));
    for (size_t k = 1; k < writes.size(); ++k) EXPECT_GT(writes[k].first, writes[k - 1].first);
    for (const auto& [version, length] : writes)
      EXPECT_TRUE(by_version.emplace(version, length).second);
  }
  v1::Arm final_arm;
  ASSERT_TRUE(client_.GetArm("arms/hot", &final_arm).ok());
  EXPECT_EQ(final_arm.version(), 1 + kWriters * kWrites);
  EXPECT_EQ(by_version.begin()->first, 2);
  EXPECT_EQ(by_version.rbegin()->first, 1 + kWriters * kWrites);
  ASSERT_EQ(final_arm.spec().limbs_size(), 1 + kWriters * kWrites);
  int k = 1;
  for (const auto& [version, length] : by_version) {
    EXPECT_EQ(final_arm.spec().limbs(k++).length(), length) << "version " << version;
  }
}

// Concurrent EditScene without etags (4 clients x 7 ADDs of distinct obstacles): each edit is
// one atomic read-modify-write, so all 28 obstacles arrive and the version is exactly 29.
TEST_F(ModelServiceTest, ConcurrentEditsAreSerialized) {
  constexpr int kWriters = 4, kWrites = 7;  // 28 obstacles, under the limit of 32
  ASSERT_TRUE(client_.CreateScene("busy", v1::SceneSpec()).ok());
  std::latch start(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (int k = 0; k < kWrites; ++k) {
        v1::EditSceneRequest edit;
        edit.set_name("scenes/busy");
        *edit.add_operations() =
            AddOp(SphereObstacle(absl::StrCat("w", w, "-", k), Vec(w, k, 0), 0.1));
        const grpc::Status status = client_.EditScene(edit);
        EXPECT_TRUE(status.ok()) << status.error_message();
      }
    });
  }
  for (auto& t : threads) t.join();
  v1::Scene scene;
  ASSERT_TRUE(client_.GetScene("scenes/busy", &scene).ok());
  EXPECT_EQ(scene.version(), 1 + kWriters * kWrites);
  std::set<std::string> ids;
  for (const auto& o : scene.spec().obstacles()) ids.insert(o.id());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kWriters * kWrites));
}

// Durability through the service: models written to a SQLite store come back identical
// (spec, version, etag, times) from a new server on a reopened store.
TEST(ModelServiceRestartTest, SqliteModelsSurviveRestart) {
  TempDir dir;
  v1::Arm arm;
  v1::Scene scene;
  {
    auto store = OpenSqliteModelStore(dir.File("models.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    Harness client(store->get());
    v1::Arm created;
    ASSERT_TRUE(client.CreateArm("keep", PlanarArm(3), &created).ok());
    ASSERT_TRUE(client.UpdateArm(created, &arm).ok());
    ASSERT_TRUE(client.CreateScene("keep", PillarScene(), &scene).ok());
    client.server().Shutdown(absl::Seconds(1));
  }
  auto store = OpenSqliteModelStore(dir.File("models.db"));
  ASSERT_TRUE(store.ok()) << store.status();
  Harness client(store->get());
  v1::Arm arm_again;
  v1::Scene scene_again;
  ASSERT_TRUE(client.GetArm("arms/keep", &arm_again).ok());
  ASSERT_TRUE(client.GetScene("scenes/keep", &scene_again).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(arm_again, arm)) << arm_again.DebugString();
  EXPECT_TRUE(MessageDifferencer::Equals(scene_again, scene));
  EXPECT_EQ(arm_again.version(), 2);
}

}  // namespace
}  // namespace ikd::server
