// PoseService end to end in process: the real server on 127.0.0.1:0, a real channel and the
// generated stub, streaming a moving Human17 skeleton observed with noise, a missing label and a
// gross outlier. Each test states what it checks (reference, tolerance) in one comment line.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "ikd/pose/skeleton.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "ikd/v1/pose_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"
#include "testing/status_details.h"

namespace ikd::server {
namespace {

using ::ikd::testing::ViolatedField;

using ::testing::HasSubstr;
using PoseStream = grpc::ClientReaderWriter<v1::EstimatePoseRequest, v1::EstimatePoseResponse>;

constexpr double kSigma = 0.005;  // m per axis
constexpr double kRate = 100.0;   // frames per second

class PoseServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = NewMemoryModelStore();
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    auto server = IkdServer::Start(options, store_.get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                       grpc::InsecureChannelCredentials());
    stub_ = v1::PoseService::NewStub(channel);
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  }

  std::unique_ptr<PoseStream> Open(const v1::PoseConfig& config) {
    auto stream = stub_->EstimatePose(&context_);
    v1::EstimatePoseRequest request;
    *request.mutable_config() = config;
    EXPECT_TRUE(stream->Write(request));
    return stream;
  }

  // Sends one frame and reads its answer.
  static v1::EstimatePoseResponse Exchange(PoseStream& stream, const v1::PoseFrame& frame) {
    v1::EstimatePoseRequest request;
    *request.mutable_frame() = frame;
    v1::EstimatePoseResponse response;
    EXPECT_TRUE(stream.Write(request));
    EXPECT_TRUE(stream.Read(&response));
    return response;
  }

  std::unique_ptr<ModelStore> store_;
  std::unique_ptr<IkdServer> server_;
  std::unique_ptr<v1::PoseService::Stub> stub_;
  grpc::ClientContext context_;
};

v1::PoseConfig Human17Config() {
  v1::PoseConfig config;
  config.set_preset(v1::SKELETON_PRESET_HUMAN17);
  return config;
}

// The rest pose turning about the vertical at 0.5 rad/s and drifting along x: every bone keeps
// its length, so the truth is a valid Human17 pose at every time.
Eigen::Matrix3Xd Truth(const pose::Skeleton& skeleton, double t) {
  const Eigen::Matrix3d turn = Eigen::AngleAxisd(0.5 * t, Eigen::Vector3d::UnitZ()).matrix();
  return (turn * skeleton.rest_pose()).colwise() + Eigen::Vector3d(0.2 * t, 0, 0);
}

v1::Vector3 Vec(const Eigen::Vector3d& p) {
  v1::Vector3 v;
  v.set_x(p.x());
  v.set_y(p.y());
  v.set_z(p.z());
  return v;
}

Eigen::Vector3d FromVec(const v1::Vector3& v) { return {v.x(), v.y(), v.z()}; }

// Every site observed with Gaussian noise, except `missing` (-1: none); `outlier` (-1: none) is
// moved 0.4 m away.
v1::PoseFrame Observe(const pose::Skeleton& skeleton, double t, std::mt19937_64& rng,
                      int missing = -1, int outlier = -1) {
  std::normal_distribution<double> noise(0.0, kSigma);
  const Eigen::Matrix3Xd truth = Truth(skeleton, t);
  v1::PoseFrame frame;
  frame.set_timestamp(t);
  for (int k = 0; k < skeleton.num_sites(); ++k) {
    if (k == missing) continue;
    Eigen::Vector3d p = truth.col(k) + Eigen::Vector3d(noise(rng), noise(rng), noise(rng));
    if (k == outlier) p += Eigen::Vector3d(0.4, 0.0, 0.0);
    v1::ObservedPoint* point = frame.add_points();
    point->set_label(skeleton.site_names()[k]);
    *point->mutable_position() = Vec(p);
  }
  return frame;
}


// 60 frames of a turning Human17 (sigma 5 mm per axis, the head missing every 10th frame, the
// left wrist 0.4 m off on frame 30): one answer per frame, in order; bone lengths exact to 1e-9
// on every frame; the outlier flagged; the missing head filled in; after the first 20 frames
// the fitted RMS error is below the raw observations' sqrt(3) sigma.
TEST_F(PoseServiceTest, FitsAMovingSkeletonWithExactBonesAndFlagsTheOutlier) {
  const pose::Skeleton skeleton = pose::Skeleton::Human17();
  const int head = *skeleton.FindSite("head");
  const int wrist = *skeleton.FindSite("left_wrist");
  auto stream = Open(Human17Config());
  std::mt19937_64 rng(2012);
  double squared_error = 0;
  int counted = 0;
  for (int n = 0; n < 60; ++n) {
    const double t = n / kRate;
    const v1::PoseFrame frame =
        Observe(skeleton, t, rng, n % 10 == 5 ? head : -1, n == 30 ? wrist : -1);
    const v1::EstimatePoseResponse response = Exchange(*stream, frame);
    const v1::FittedFrame& fitted = response.frame();
    if (n == 0) {
      ASSERT_EQ(response.site_names_size(), 17);
      EXPECT_EQ(response.site_names(head), "head");
      // A bend at every site but the pelvis (root) and its three children.
      EXPECT_EQ(response.joint_angle_names_size(), 13);
    }
    ASSERT_EQ(fitted.outcome(), v1::FRAME_OUTCOME_FITTED) << "frame " << n << fitted.message();
    EXPECT_DOUBLE_EQ(fitted.timestamp(), t);
    ASSERT_EQ(fitted.sites_size(), 17);
    for (const pose::Bone& bone : skeleton.bones()) {
      const double length = (FromVec(fitted.sites(bone.i)) - FromVec(fitted.sites(bone.j))).norm();
      EXPECT_NEAR(length / bone.length, 1.0, 1e-9) << "frame " << n;
    }
    ASSERT_EQ(fitted.observations_size(), frame.points_size());
    for (int k = 0; k < frame.points_size(); ++k) {
      const bool is_outlier = n == 30 && frame.points(k).label() == "left_wrist";
      EXPECT_EQ(fitted.observations(k).outlier(), is_outlier)
          << "frame " << n << " " << frame.points(k).label();
    }
    const Eigen::Matrix3Xd truth = Truth(skeleton, t);
    if (n % 10 == 5) {  // the head was not observed: the model fills it in
      EXPECT_LT((FromVec(fitted.sites(head)) - truth.col(head)).norm(), 5 * kSigma);
    }
    if (n >= 20) {
      for (int k = 0; k < 17; ++k) {
        squared_error += (FromVec(fitted.sites(k)) - truth.col(k)).squaredNorm();
        ++counted;
      }
    }
  }
  EXPECT_LT(std::sqrt(squared_error / counted), std::sqrt(3.0) * kSigma);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// A frame with a NaN coordinate and a frame whose timestamp goes back are answered REJECTED with
// a message naming the field; the next good frame is fitted, and the stream ends OK.
TEST_F(PoseServiceTest, BadFramesAreRejectedAndTheStreamGoesOn) {
  const pose::Skeleton skeleton = pose::Skeleton::Human17();
  auto stream = Open(Human17Config());
  std::mt19937_64 rng(7);
  EXPECT_EQ(Exchange(*stream, Observe(skeleton, 0.0, rng)).frame().outcome(),
            v1::FRAME_OUTCOME_FITTED);
  v1::PoseFrame nan_frame = Observe(skeleton, 0.01, rng);
  nan_frame.mutable_points(2)->mutable_position()->set_y(std::nan(""));
  const v1::FittedFrame nan_answer = Exchange(*stream, nan_frame).frame();
  EXPECT_EQ(nan_answer.outcome(), v1::FRAME_OUTCOME_REJECTED);
  EXPECT_THAT(nan_answer.message(), HasSubstr("frame.points[2]"));
  EXPECT_EQ(nan_answer.sites_size(), 0);

  const v1::FittedFrame back = Exchange(*stream, Observe(skeleton, -1.0, rng)).frame();
  EXPECT_EQ(back.outcome(), v1::FRAME_OUTCOME_REJECTED);
  EXPECT_THAT(back.message(), HasSubstr("timestamp"));

  v1::PoseFrame unknown = Observe(skeleton, 0.02, rng);
  unknown.mutable_points(0)->set_label("tail");
  EXPECT_EQ(Exchange(*stream, unknown).frame().outcome(), v1::FRAME_OUTCOME_REJECTED);

  EXPECT_EQ(Exchange(*stream, Observe(skeleton, 0.03, rng)).frame().outcome(),
            v1::FRAME_OUTCOME_FITTED);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// A skeleton stored through the ModelService is used by name: a two-bone chain fitted to exact
// observations keeps its 0.5 m and 0.4 m bones to 1e-9; an unknown name is NOT_FOUND.
TEST_F(PoseServiceTest, StoredSkeletonIsUsedByName) {
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                     grpc::InsecureChannelCredentials());
  auto models = v1::ModelService::NewStub(channel);
  v1::CreateSkeletonRequest create;
  create.set_skeleton_id("chain");
  v1::SkeletonSpec* spec = create.mutable_skeleton()->mutable_spec();
  for (const char* site : {"a", "b", "c"}) spec->add_sites(site);
  for (auto [i, j, length] : {std::tuple{0, 1, 0.5}, std::tuple{1, 2, 0.4}}) {
    v1::SkeletonBone* bone = spec->add_bones();
    bone->set_i(i);
    bone->set_j(j);
    bone->set_length(length);
  }
  grpc::ClientContext create_context;
  v1::Skeleton stored;
  ASSERT_TRUE(models->CreateSkeleton(&create_context, create, &stored).ok());

  v1::PoseConfig config;
  config.set_skeleton_name("skeletons/chain");
  auto stream = Open(config);
  v1::PoseFrame frame;
  frame.set_timestamp(0);
  const Eigen::Vector3d sites[3] = {{0, 0, 0}, {0.3, 0.4, 0}, {0.7, 0.4, 0}};
  for (int k = 0; k < 3; ++k) {
    v1::ObservedPoint* point = frame.add_points();
    point->set_label(std::string(1, char('a' + k)));
    *point->mutable_position() = Vec(sites[k]);
  }
  const v1::EstimatePoseResponse response = Exchange(*stream, frame);
  ASSERT_EQ(response.frame().outcome(), v1::FRAME_OUTCOME_FITTED);
  ASSERT_EQ(response.site_names_size(), 3);
  const auto at = [&](int k) { return FromVec(response.frame().sites(k)); };
  EXPECT_NEAR((at(1) - at(0)).norm(), 0.5, 1e-9);
  EXPECT_NEAR((at(2) - at(1)).norm(), 0.4, 1e-9);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());

  grpc::ClientContext unknown_context;
  unknown_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto unknown = stub_->EstimatePose(&unknown_context);
  v1::EstimatePoseRequest request;
  request.mutable_config()->set_skeleton_name("skeletons/nope");
  unknown->Write(request);
  unknown->WritesDone();
  v1::EstimatePoseResponse ignored;
  EXPECT_FALSE(unknown->Read(&ignored));
  EXPECT_EQ(unknown->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

// A configuration error ends the stream with INVALID_ARGUMENT naming the request field.
TEST_F(PoseServiceTest, BadConfigurationsNameTheirField) {
  struct Case {
    std::string field;
    v1::EstimatePoseRequest first;
  };
  std::vector<Case> cases;
  {
    Case frame_first{"config", {}};
    frame_first.first.mutable_frame()->set_timestamp(0);
    cases.push_back(frame_first);
  }
  {
    Case no_skeleton{"config.skeleton", {}};
    no_skeleton.first.mutable_config()->set_smoothing(1);
    cases.push_back(no_skeleton);
  }
  {
    Case bad_length{"config.spec.bones[0].length", {}};
    v1::SkeletonSpec* spec = bad_length.first.mutable_config()->mutable_spec();
    spec->add_sites("a");
    spec->add_sites("b");
    v1::SkeletonBone* bone = spec->add_bones();
    bone->set_i(0);
    bone->set_j(1);
    bone->set_length(-1);
    cases.push_back(bad_length);
  }
  {
    Case bad_gate{"config.outlier_gate", {}};
    *bad_gate.first.mutable_config() = Human17Config();
    bad_gate.first.mutable_config()->set_outlier_gate(-2);
    cases.push_back(bad_gate);
  }
  for (const Case& c : cases) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    auto stream = stub_->EstimatePose(&context);
    stream->Write(c.first);
    stream->WritesDone();
    v1::EstimatePoseResponse response;
    EXPECT_FALSE(stream->Read(&response));
    EXPECT_EQ(ViolatedField(stream->Finish()), c.field);
  }
}

}  // namespace
}  // namespace ikd::server
