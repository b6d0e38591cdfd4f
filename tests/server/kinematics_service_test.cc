// KinematicsService end to end in process: the real server on 127.0.0.1:0 (memory store), a real
// channel and the generated stub. Each test states what it checks and its reference in one line.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "conversions.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/presets.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"
#include "server/service_test_util.h"
#include "solver/robot/own_capsule_distances.h"

namespace ikd::server {
namespace {

using test_util::PlanarArm;
using test_util::Positions;
using test_util::Vec;
using test_util::ViolatedFields;

using ::testing::Contains;
using ::testing::HasSubstr;

double Distance(const v1::Vector3& a, const v1::Vector3& b) {
  return std::hypot(a.x() - b.x(), a.y() - b.y(), a.z() - b.z());
}

// Largest |limb length - 0.5| of the returned sites.
double WorstLimbError(const v1::JointState& state) {
  double worst = 0.0;
  for (int k = 0; k + 1 < state.sites_size(); ++k) {
    worst = std::max(worst, std::abs(Distance(state.sites(k), state.sites(k + 1)) - 0.5));
  }
  return worst;
}

// Options that make every sample take milliseconds (many stochastic trials per sub-step, none
// cut short by the patience rule), for tests that need a stream to be still running when
// something happens to it. Above the default --max_trials_per_step: StartServer raises it.
constexpr int kSlowTrials = 20000;
v1::IkOptions SlowOptions() {
  v1::IkOptions options;
  options.set_trials_per_step(kSlowTrials);
  options.set_patience(-1);
  options.set_explore_unconstrained(true);  // trials also in free space: a steady cost
  // Streamed sample by sample as solved: a path optimized as a whole would be solved entirely
  // (minutes at this cost) before its first sample goes out.
  options.set_no_path_optimization(true);
  return options;
}

class KinematicsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.kinematics.max_samples = 5000;
    StartServer(options);
  }

  // (Re)starts the server with `options` on a free port and connects the stubs.
  void StartServer(ServerOptions options) {
    stub_.reset();
    models_.reset();
    server_.reset();
    store_ = NewMemoryModelStore();
    options.listen = "127.0.0.1:0";
    options.limits.max_trials_per_step = kSlowTrials;
    auto server = IkdServer::Start(options, store_.get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                       grpc::InsecureChannelCredentials());
    stub_ = v1::KinematicsService::NewStub(channel);
    models_ = v1::ModelService::NewStub(channel);
  }

  static void SetDeadline(grpc::ClientContext& context) {
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  }

  // A Track stream of the planar arm with one ball "ball" in its scene, configured.
  std::unique_ptr<grpc::ClientReaderWriter<v1::TrackRequest, v1::TrackResponse>> TrackWithBall(
      grpc::ClientContext& context, const v1::Vector3& center, double radius) {
    SetDeadline(context);
    auto stream = stub_->Track(&context);
    v1::TrackRequest request;
    *request.mutable_config()->mutable_arm()->mutable_spec() = PlanarArm();
    v1::Obstacle* ball = request.mutable_config()->mutable_scene()->mutable_spec()->add_obstacles();
    ball->set_id("ball");
    *ball->mutable_sphere()->mutable_center() = center;
    ball->mutable_sphere()->set_radius(radius);
    EXPECT_TRUE(stream->Write(request));
    return stream;
  }

  grpc::Status Solve(const v1::SolveRequest& request, v1::SolveResponse* response) {
    grpc::ClientContext context;
    SetDeadline(context);
    return stub_->Solve(&context, request, response);
  }

  // The line request: hand from (1.2, 0.3) to (0.6, 0.9) in 1 s, sampled every `period`.
  static v1::SolveTrajectoryRequest LineRequest(double period) {
    v1::SolveTrajectoryRequest request;
    *request.mutable_arm()->mutable_spec() = PlanarArm();
    v1::LinePath* line = request.mutable_trajectory()->mutable_line();
    *line->mutable_from() = Vec(1.2, 0.3, 0);
    *line->mutable_to() = Vec(0.6, 0.9, 0);
    line->set_duration(1.0);
    request.set_sample_period(period);
    return request;
  }

  grpc::Status SolveTrajectory(const v1::SolveTrajectoryRequest& request,
                               std::vector<v1::SolveTrajectoryResponse>* messages) {
    grpc::ClientContext context;
    SetDeadline(context);
    auto reader = stub_->SolveTrajectory(&context, request);
    v1::SolveTrajectoryResponse message;
    while (reader->Read(&message)) messages->push_back(message);
    return reader->Finish();
  }

  std::unique_ptr<ModelStore> store_;
  std::unique_ptr<IkdServer> server_;
  std::unique_ptr<v1::KinematicsService::Stub> stub_;
  std::unique_ptr<v1::ModelService::Stub> models_;
};

// A reachable pose: REACHED, hand on the target to 1e-9 m, limb lengths exact to 1e-9 m.
TEST_F(KinematicsServiceTest, SolveReachesAReachableTargetWithExactLimbs) {
  v1::SolveRequest request;
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  *request.mutable_target() = Vec(0.9, 0.6, 0);
  v1::SolveResponse response;
  ASSERT_TRUE(Solve(request, &response).ok());
  const v1::JointState& state = response.state();
  EXPECT_EQ(state.status(), v1::STEP_STATUS_REACHED);
  ASSERT_EQ(state.sites_size(), 4);
  EXPECT_LT(Distance(state.sites(3), Vec(0.9, 0.6, 0)), 1e-9);
  EXPECT_LT(WorstLimbError(state), 1e-9);
  EXPECT_THAT(response.joint_names(), ::testing::ElementsAre("joint_0", "joint_1", "joint_2"));
  EXPECT_EQ(state.positions_size(), 3);
}

// Beyond reach: CLAMPED_UNREACHABLE, clamp distance = |target| - 1.5 m (analytic), stretched arm.
TEST_F(KinematicsServiceTest, SolveBeyondReachClampsToTheShell) {
  v1::SolveRequest request;
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  *request.mutable_target() = Vec(3.0, 4.0, 0);  // |target| = 5
  v1::SolveResponse response;
  ASSERT_TRUE(Solve(request, &response).ok());
  EXPECT_EQ(response.state().status(), v1::STEP_STATUS_CLAMPED_UNREACHABLE);
  EXPECT_NEAR(response.state().clamp_distance(), 5.0 - 1.5, 1e-9);
  EXPECT_NEAR(std::hypot(response.state().sites(3).x(), response.state().sites(3).y()), 1.5, 1e-9);
  EXPECT_LT(WorstLimbError(response.state()), 1e-9);
}

// A line inside the reach: one sample per 0.02 s (51), every one REACHED on its target, a
// summary with fraction 1 last, joint names on the first message only.
TEST_F(KinematicsServiceTest, TrajectoryAlongALineIsReachedEverywhere) {
  std::vector<v1::SolveTrajectoryResponse> messages;
  ASSERT_TRUE(SolveTrajectory(LineRequest(0.02), &messages).ok());
  ASSERT_EQ(messages.size(), 52u);
  EXPECT_EQ(messages.front().joint_names_size(), 3);
  EXPECT_EQ(messages[1].joint_names_size(), 0);
  for (size_t k = 0; k + 1 < messages.size(); ++k) {
    const v1::JointState& s = messages[k].sample();
    EXPECT_EQ(s.status(), v1::STEP_STATUS_REACHED) << "sample " << k;
    EXPECT_NEAR(s.time(), 0.02 * k, 1e-12);
    EXPECT_LT(Distance(s.sites(3), s.target()), 1e-9) << "sample " << k;
    EXPECT_LT(WorstLimbError(s), 1e-9) << "sample " << k;
  }
  ASSERT_TRUE(messages.back().has_summary());
  EXPECT_EQ(messages.back().summary().samples(), 51);
  EXPECT_DOUBLE_EQ(messages.back().summary().fraction_reached(), 1.0);
}

// A line wholly outside the 1.5 m reach (|p| >= 3/sqrt(2)): every sample CLAMPED_UNREACHABLE
// with clamp distance |target| - 1.5 m (analytic) and the hand on the shell, fraction 0.
TEST_F(KinematicsServiceTest, TrajectoryBeyondReachIsClampedEverywhere) {
  v1::SolveTrajectoryRequest request = LineRequest(0.1);
  *request.mutable_trajectory()->mutable_line()->mutable_from() = Vec(3, 0, 0);
  *request.mutable_trajectory()->mutable_line()->mutable_to() = Vec(0, 3, 0);
  std::vector<v1::SolveTrajectoryResponse> messages;
  ASSERT_TRUE(SolveTrajectory(request, &messages).ok());
  ASSERT_EQ(messages.size(), 12u);
  for (size_t k = 0; k + 1 < messages.size(); ++k) {
    const v1::JointState& s = messages[k].sample();
    const double target_norm = std::hypot(s.target().x(), s.target().y());
    EXPECT_EQ(s.status(), v1::STEP_STATUS_CLAMPED_UNREACHABLE) << "sample " << k;
    EXPECT_NEAR(s.clamp_distance(), target_norm - 1.5, 1e-9) << "sample " << k;
    EXPECT_NEAR(std::hypot(s.sites(3).x(), s.sites(3).y()), 1.5, 1e-9) << "sample " << k;
    EXPECT_LT(WorstLimbError(s), 1e-9) << "sample " << k;
  }
  const v1::TrajectorySummary& summary = messages.back().summary();
  EXPECT_EQ(summary.samples(), 11);
  EXPECT_EQ(summary.clamped(), 11);
  EXPECT_EQ(summary.fraction_reached(), 0.0);
  EXPECT_NEAR(summary.max_hand_error(), 3.0 - 1.5, 1e-9);  // at the ends, |target| = 3
}

// Joint velocities are the finite differences of consecutive samples' positions (zeros first),
// and the summary's maxima are those of the samples.
TEST_F(KinematicsServiceTest, VelocitiesAreFiniteDifferencesAndTheSummaryAddsUp) {
  std::vector<v1::SolveTrajectoryResponse> messages;
  ASSERT_TRUE(SolveTrajectory(LineRequest(0.1), &messages).ok());
  ASSERT_EQ(messages.size(), 12u);
  EXPECT_THAT(messages[0].sample().velocities(), ::testing::Each(0.0));
  double max_residual = 0.0;
  for (size_t k = 1; k + 1 < messages.size(); ++k) {
    const v1::JointState& previous = messages[k - 1].sample();
    const v1::JointState& s = messages[k].sample();
    ASSERT_EQ(s.velocities_size(), 3);
    const double dt = s.time() - previous.time();
    for (int j = 0; j < 3; ++j) {
      EXPECT_DOUBLE_EQ(s.velocities(j), (s.positions(j) - previous.positions(j)) / dt);
    }
    max_residual = std::max(max_residual, s.constraint_residual());
  }
  const v1::TrajectorySummary& summary = messages.back().summary();
  EXPECT_EQ(summary.max_constraint_residual(),
            std::max(max_residual, messages[0].sample().constraint_residual()));
  EXPECT_GT(summary.solve_seconds(), 0.0);
  ASSERT_TRUE(summary.has_min_clearance());  // the limbs' self clearance
}

// A spatial arm names two angles per limb ("joint_k_bend", "joint_k_azimuth", arm.h layout).
TEST_F(KinematicsServiceTest, SpatialArmNamesBendAndAzimuthPerLimb) {
  v1::SolveRequest request;
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  request.mutable_arm()->mutable_spec()->set_planar(false);
  *request.mutable_target() = Vec(0.6, 0.5, 0.4);
  v1::SolveResponse response;
  ASSERT_TRUE(Solve(request, &response).ok());
  EXPECT_THAT(response.joint_names(),
              ::testing::ElementsAre("joint_0_bend", "joint_0_azimuth", "joint_1_bend",
                                     "joint_1_azimuth", "joint_2_bend", "joint_2_azimuth"));
  EXPECT_EQ(response.state().positions_size(), 6);
  EXPECT_EQ(response.state().status(), v1::STEP_STATUS_REACHED);
  EXPECT_LT(Distance(response.state().sites(3), Vec(0.6, 0.5, 0.4)), 1e-9);
}

// The same request twice gives bit-identical samples (the seed fixes every random trial).
TEST_F(KinematicsServiceTest, TrajectoryIsDeterministic) {
  std::vector<v1::SolveTrajectoryResponse> first, second;
  ASSERT_TRUE(SolveTrajectory(LineRequest(0.05), &first).ok());
  ASSERT_TRUE(SolveTrajectory(LineRequest(0.05), &second).ok());
  ASSERT_EQ(first.size(), second.size());
  for (size_t k = 0; k + 1 < first.size(); ++k) {
    EXPECT_EQ(first[k].sample().SerializeAsString(), second[k].sample().SerializeAsString());
  }
}

// samples_per_message = 7 over 21 samples: three messages of 7 samples each, the first with the
// joint names, then the summary; the samples are the unbatched stream's, byte for byte. Out of
// [0, 1000] the field is named with its bound.
TEST_F(KinematicsServiceTest, BatchedTrajectoryCarriesTheSameSamples) {
  std::vector<v1::SolveTrajectoryResponse> single, batched;
  ASSERT_TRUE(SolveTrajectory(LineRequest(0.05), &single).ok());
  v1::SolveTrajectoryRequest request = LineRequest(0.05);
  request.set_samples_per_message(7);
  ASSERT_TRUE(SolveTrajectory(request, &batched).ok());
  ASSERT_EQ(single.size(), 22u);  // 21 samples and the summary
  ASSERT_EQ(batched.size(), 4u);
  std::vector<std::string> samples;
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_FALSE(batched[k].has_sample());
    EXPECT_EQ(batched[k].samples_size(), 7);
    EXPECT_EQ(batched[k].joint_names_size(), k == 0 ? 3 : 0);
    for (const v1::JointState& s : batched[k].samples()) samples.push_back(s.SerializeAsString());
  }
  ASSERT_EQ(samples.size(), 21u);
  for (size_t k = 0; k < 21; ++k) EXPECT_EQ(samples[k], single[k].sample().SerializeAsString());
  EXPECT_EQ(batched[3].summary().samples(), 21);
  EXPECT_EQ(batched[3].summary().fraction_reached(), single[21].summary().fraction_reached());
  EXPECT_EQ(batched[3].summary().max_hand_error(), single[21].summary().max_hand_error());
  for (int bad : {-1, 1001}) {
    request.set_samples_per_message(bad);
    std::vector<v1::SolveTrajectoryResponse> none;
    const grpc::Status status = SolveTrajectory(request, &none);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("samples_per_message"));
    EXPECT_THAT(status.error_message(), HasSubstr("[0, 1000]"));
    EXPECT_TRUE(none.empty());
  }
}

// An arm stored through the ModelService is used by name; an unknown name is NOT_FOUND.
TEST_F(KinematicsServiceTest, NamedArmIsResolvedAndUnknownNameIsNotFound) {
  v1::CreateArmRequest create;
  create.set_arm_id("planar3");
  *create.mutable_arm()->mutable_spec() = PlanarArm();
  v1::Arm created;
  grpc::ClientContext context;
  ASSERT_TRUE(models_->CreateArm(&context, create, &created).ok());
  v1::SolveRequest request;
  request.mutable_arm()->set_name("arms/planar3");
  *request.mutable_target() = Vec(0.9, 0.6, 0);
  v1::SolveResponse response;
  ASSERT_TRUE(Solve(request, &response).ok());
  EXPECT_EQ(response.state().status(), v1::STEP_STATUS_REACHED);
  request.mutable_arm()->set_name("arms/missing");
  EXPECT_EQ(Solve(request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
}

// A scene stored through the ModelService is used by name (its sphere, off the path, makes
// min_clearance present and >= 0); an unknown scene name is NOT_FOUND.
TEST_F(KinematicsServiceTest, NamedSceneIsResolvedAndUnknownSceneIsNotFound) {
  v1::CreateSceneRequest create;
  create.set_scene_id("ball");
  v1::Obstacle* ball = create.mutable_scene()->mutable_spec()->add_obstacles();
  ball->set_id("ball");
  *ball->mutable_sphere()->mutable_center() = Vec(0.75, -0.6, 0);
  ball->mutable_sphere()->set_radius(0.1);
  v1::Scene created;
  grpc::ClientContext context;
  ASSERT_TRUE(models_->CreateScene(&context, create, &created).ok());
  v1::SolveRequest request;
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  request.mutable_scene()->set_name("scenes/ball");
  *request.mutable_target() = Vec(0.9, 0.6, 0);
  v1::SolveResponse response;
  ASSERT_TRUE(Solve(request, &response).ok());
  EXPECT_EQ(response.state().status(), v1::STEP_STATUS_REACHED);
  ASSERT_TRUE(response.state().has_min_clearance());
  EXPECT_GE(response.state().min_clearance(), 0.0);
  request.mutable_scene()->set_name("scenes/missing");
  grpc::Status status = Solve(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("missing"));
}

// Bad fields are INVALID_ARGUMENT whose BadRequest names the request path, the message the bound.
TEST_F(KinematicsServiceTest, BadFieldsNameTheirPath) {
  std::vector<v1::SolveTrajectoryResponse> messages;
  grpc::Status status = SolveTrajectory(LineRequest(0.0), &messages);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), Contains("sample_period"));
  EXPECT_TRUE(messages.empty());
  status = SolveTrajectory(LineRequest(1e-5), &messages);  // 100001 samples > 5000
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), Contains("sample_period"));
  EXPECT_THAT(status.error_message(), HasSubstr("5000"));

  v1::SolveTrajectoryRequest trajectory = LineRequest(0.1);
  trajectory.mutable_trajectory()->mutable_line()->set_duration(-2);
  status = SolveTrajectory(trajectory, &messages);
  EXPECT_THAT(ViolatedFields(status), Contains("trajectory.line.duration"));
  EXPECT_THAT(status.error_message(), HasSubstr("> 0"));
  trajectory = LineRequest(0.1);
  v1::WaypointPath* path = trajectory.mutable_trajectory()->mutable_waypoints();
  path->set_interpolation(v1::INTERPOLATION_CUBIC);
  for (double time : {0.0, 1.0, 0.5}) {  // waypoints[2] goes back in time
    v1::Waypoint* waypoint = path->add_waypoints();
    waypoint->set_time(time);
    *waypoint->mutable_position() = Vec(1, 0.2, 0);
  }
  status = SolveTrajectory(trajectory, &messages);
  EXPECT_THAT(ViolatedFields(status), Contains("trajectory.waypoints.waypoints[2].time"));
  path->set_interpolation(v1::INTERPOLATION_UNSPECIFIED);
  status = SolveTrajectory(trajectory, &messages);
  EXPECT_THAT(ViolatedFields(status), Contains("trajectory.waypoints.interpolation"));
  trajectory = LineRequest(0.1);
  trajectory.add_initial_positions(0.0);  // 1 of 3
  status = SolveTrajectory(trajectory, &messages);
  EXPECT_THAT(ViolatedFields(status), Contains("initial_positions"));
  EXPECT_THAT(status.error_message(), HasSubstr("3"));
  // 1e-9 of a 0.5 m limb per sub-step: ~1e9 sub-steps in the first sample, over the limit.
  trajectory = LineRequest(0.1);
  trajectory.mutable_options()->set_max_step_fraction(1e-9);
  status = SolveTrajectory(trajectory, &messages);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), Contains("options.max_step_fraction"));
  EXPECT_THAT(status.error_message(), HasSubstr("100000"));
  EXPECT_TRUE(messages.empty());

  v1::SolveRequest request;
  *request.mutable_target() = Vec(0.9, 0.6, 0);
  v1::SolveResponse response;
  status = Solve(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), Contains("arm"));
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  request.mutable_arm()->mutable_spec()->mutable_limbs(1)->set_length(-1);
  status = Solve(request, &response);
  EXPECT_THAT(ViolatedFields(status), Contains("arm.spec.limbs[1].length"));
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  request.add_seed_positions(0.1);  // 1 of 3
  status = Solve(request, &response);
  EXPECT_THAT(ViolatedFields(status), Contains("seed_positions"));
  request.clear_seed_positions();
  *request.mutable_target() = Vec(-3.1050369133325719e231, 0.5, 0);  // fuzzer finding 12:
  status = Solve(request, &response);  // answered with an infinite hand error
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), Contains("target"));
  EXPECT_THAT(status.error_message(), HasSubstr("within 1e+06 m"));
  *request.mutable_target() = Vec(0.9, 0.6, 0);
  trajectory = LineRequest(0.1);
  *trajectory.mutable_trajectory()->mutable_line()->mutable_to() = Vec(2e6, 0, 0);
  status = SolveTrajectory(trajectory, &messages);
  EXPECT_THAT(ViolatedFields(status), Contains("trajectory.line.to"));
  request.mutable_options()->set_max_step_fraction(-1);
  status = Solve(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), Contains("options.max_step_fraction"));
  EXPECT_THAT(status.error_message(), HasSubstr("(0, 1]"));
  request.clear_options();
  request.mutable_options()->mutable_weights()->set_clearance(-1);
  EXPECT_THAT(ViolatedFields(Solve(request, &response)), Contains("options.weights.clearance"));
  request.clear_options();
  request.mutable_options()->set_patience(-2);  // -1 means "never stop early"
  EXPECT_THAT(ViolatedFields(Solve(request, &response)), Contains("options.patience"));
  request.clear_options();
  request.mutable_target()->set_x(std::nan(""));
  EXPECT_THAT(ViolatedFields(Solve(request, &response)), Contains("target"));
}

// Rate limits on the wire: a negative or non-finite one is INVALID_ARGUMENT naming the field
// and the bound; a path faster than the limits is an OK answer whose samples say which limit
// they pass and whose summary gives the time scaling that makes them fit. Checked from the
// returned positions: stretched by that scaling, the largest joint speed over the limit (own
// finite differences) is at most 1.
TEST_F(KinematicsServiceTest, RateLimitsAreValidatedAndReportedWithTheFeasibleScaling) {
  v1::SolveTrajectoryRequest request = LineRequest(0.02);
  request.mutable_arm()->mutable_spec()->mutable_default_rate_limit()->set_max_velocity(-1);
  std::vector<v1::SolveTrajectoryResponse> messages;
  grpc::Status status = SolveTrajectory(request, &messages);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), Contains("arm.spec.default_rate_limit.max_velocity"));
  EXPECT_THAT(status.error_message(), HasSubstr(">= 0"));
  request = LineRequest(0.02);
  for (int k = 0; k < 3; ++k) request.mutable_arm()->mutable_spec()->add_rate_limits();
  request.mutable_arm()->mutable_spec()->mutable_rate_limits(2)->set_max_acceleration(INFINITY);
  status = SolveTrajectory(request, &messages);
  EXPECT_THAT(ViolatedFields(status), Contains("arm.spec.rate_limits[2].max_acceleration"));
  request.mutable_arm()->mutable_spec()->clear_rate_limits();
  request.mutable_arm()->mutable_spec()->add_rate_limits();  // 1 of 3
  status = SolveTrajectory(request, &messages);
  EXPECT_THAT(ViolatedFields(status), Contains("arm.spec.rate_limits"));

  // The 0.85 m line in 1 s needs joint speeds above 0.2 rad/s.
  const double v_max = 0.2;
  request = LineRequest(0.02);
  request.mutable_arm()->mutable_spec()->mutable_default_rate_limit()->set_max_velocity(v_max);
  messages.clear();
  ASSERT_TRUE(SolveTrajectory(request, &messages).ok());
  ASSERT_TRUE(messages.back().has_summary());
  const v1::TrajectorySummary& summary = messages.back().summary();
  EXPECT_GT(summary.velocity_limited(), 0);
  EXPECT_GT(summary.feasible_time_scaling(), 1.0);
  EXPECT_DOUBLE_EQ(summary.feasible_time_scaling(), summary.max_velocity_ratio());
  double fastest = 0.0;  // rad/s, at the requested timing
  int limited = 0;
  for (size_t k = 1; k + 1 < messages.size(); ++k) {
    const v1::JointState& now = messages[k].sample();
    const v1::JointState& before = messages[k - 1].sample();
    for (int j = 0; j < now.positions_size(); ++j) {
      const double step = std::remainder(now.positions(j) - before.positions(j), 2 * M_PI);
      fastest = std::max(fastest, std::abs(step) / (now.time() - before.time()));
    }
    limited += now.status() == v1::STEP_STATUS_VELOCITY_LIMITED;
  }
  EXPECT_EQ(limited, summary.velocity_limited());
  EXPECT_NEAR(fastest / v_max, summary.feasible_time_scaling(), 1e-9);
}

// A client that cancels after two samples of a long trajectory gets CANCELLED; the server
// stays healthy for the next call.
TEST_F(KinematicsServiceTest, CancellationStopsTheStreamAndTheServerCarriesOn) {
  grpc::ClientContext context;
  SetDeadline(context);
  auto reader = stub_->SolveTrajectory(&context, LineRequest(0.0005));  // 2001 samples
  v1::SolveTrajectoryResponse message;
  ASSERT_TRUE(reader->Read(&message));
  ASSERT_TRUE(reader->Read(&message));
  context.TryCancel();
  while (reader->Read(&message)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  std::vector<v1::SolveTrajectoryResponse> messages;
  EXPECT_TRUE(SolveTrajectory(LineRequest(0.25), &messages).ok());
  EXPECT_EQ(messages.size(), 6u);
}

// A deadline that passes mid-stream ends it with DEADLINE_EXCEEDED well before the ~1000 slow
// samples are done; the server then serves the next call.
TEST_F(KinematicsServiceTest, DeadlineStopsTheStreamMidway) {
  v1::SolveTrajectoryRequest request = LineRequest(0.001);  // 1001 samples
  *request.mutable_options() = SlowOptions();
  grpc::ClientContext context;
  const auto start = std::chrono::steady_clock::now();
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  auto reader = stub_->SolveTrajectory(&context, request);
  v1::SolveTrajectoryResponse message;
  int received = 0;
  while (reader->Read(&message)) ++received;
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(received, 1001);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  std::vector<v1::SolveTrajectoryResponse> messages;
  EXPECT_TRUE(SolveTrajectory(LineRequest(0.25), &messages).ok());
  EXPECT_EQ(messages.size(), 6u);
}

// With one worker and a queue of one, the third of several concurrent slow streams cannot be
// admitted: RESOURCE_EXHAUSTED; every other stream runs (until cancelled), and once their last
// samples (at most one solve each, already queued when they were cancelled) have drained, the
// server serves again: within 2 s, refusing only with RESOURCE_EXHAUSTED until then.
TEST_F(KinematicsServiceTest, FullPoolRefusesNewCallsWithResourceExhausted) {
  ServerOptions options;
  options.pool = {.threads = 1, .max_queued = 1};
  StartServer(options);
  v1::SolveTrajectoryRequest request = LineRequest(0.001);
  *request.mutable_options() = SlowOptions();
  constexpr int kStreams = 6;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::SolveTrajectoryResponse>>> readers;
  for (int k = 0; k < kStreams; ++k) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    SetDeadline(*contexts.back());
    readers.push_back(stub_->SolveTrajectory(contexts.back().get(), request));
  }
  int exhausted = 0;
  for (int k = 0; k < kStreams; ++k) {
    v1::SolveTrajectoryResponse message;
    if (!readers[k]->Read(&message)) {  // refused before any sample
      grpc::Status status = readers[k]->Finish();
      EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
      ++exhausted;
      continue;
    }
    contexts[k]->TryCancel();
    while (readers[k]->Read(&message)) {
    }
    EXPECT_EQ(readers[k]->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_GE(exhausted, 1);
  EXPECT_LE(exhausted, kStreams - 1);  // the first call always finds an idle pool
  grpc::Status after;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::vector<v1::SolveTrajectoryResponse> messages;
    after = SolveTrajectory(LineRequest(0.25), &messages);
    if (after.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(after.ok()) << after.error_message();
}

// Track: one joint state per target, in order, each REACHED on its target with exact limbs; a
// scene update mid-stream (a sphere moved next to the fixed base) is applied and the arm stays clear
// of it; a first message that is not a config is INVALID_ARGUMENT naming "config".
TEST_F(KinematicsServiceTest, TrackAnswersEveryTargetInOrderAndAppliesSceneUpdates) {
  grpc::ClientContext context;
  auto stream = TrackWithBall(context, Vec(5, 5, 0), 0.05);
  v1::TrackResponse response;
  for (int k = 0; k < 20; ++k) {
    if (k == 10) {  // move the ball to 0.15 m above the fixed base
      v1::TrackRequest update;
      v1::ObstacleOperation* move = update.mutable_scene_update()->add_operations();
      move->set_operation(v1::ObstacleOperation::OPERATION_MOVE);
      move->set_obstacle_id("ball");
      *move->mutable_translation() = Vec(0 - 5, 0.15 - 5, 0);
      ASSERT_TRUE(stream->Write(update));
    }
    v1::TrackRequest target;
    target.mutable_target()->set_time(0.01 * k);
    *target.mutable_target()->mutable_position() = Vec(1.2 - 0.01 * k, 0.3 + 0.01 * k, 0);
    ASSERT_TRUE(stream->Write(target));
    ASSERT_TRUE(stream->Read(&response)) << "target " << k;
    EXPECT_EQ(response.joint_names_size(), k == 0 ? 3 : 0);
    const v1::JointState& s = response.state();
    EXPECT_NEAR(s.time(), 0.01 * k, 1e-15);
    EXPECT_EQ(s.status(), v1::STEP_STATUS_REACHED) << "target " << k;
    EXPECT_LT(Distance(s.sites(3), s.target()), 1e-9);
    EXPECT_LT(WorstLimbError(s), 1e-9);
    ASSERT_TRUE(s.has_min_clearance());
    // Before: only the limbs' self clearance (~0.46 m). After: the base site, which cannot
    // move, is 0.15 - 0.05 - 0.02 = 0.08 m from the ball's surface at most.
    if (k < 10) {
      EXPECT_GT(s.min_clearance(), 0.3) << "target " << k;
    } else {
      EXPECT_LE(s.min_clearance(), 0.08 + 1e-12) << "target " << k;
    }
    EXPECT_GE(s.min_clearance(), 0.0);
  }
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_FALSE(stream->Read(&response));
  EXPECT_TRUE(stream->Finish().ok());

  grpc::ClientContext bad_context;
  SetDeadline(bad_context);
  auto bad = stub_->Track(&bad_context);
  v1::TrackRequest target;
  *target.mutable_target()->mutable_position() = Vec(1, 0, 0);
  bad->Write(target);
  bad->WritesDone();
  grpc::Status status = bad->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("config"));
}

// A Track target driven into a ball: the answers held clear of it (not REACHED) say why, as a
// Solve's would: the hand's residual (its value the answer's own hand error, recomputed here
// from its sites) and the ball by its id where the arm presses on its margin; REACHED answers
// say nothing.
TEST_F(KinematicsServiceTest, TrackAnswersShortOfTheirTargetSayWhy) {
  grpc::ClientContext context;
  auto stream = TrackWithBall(context, Vec(1.0, 0.5, 0), 0.1);
  v1::TrackResponse response;
  int short_answers = 0, naming_the_ball = 0;
  for (int k = 0; k <= 20; ++k) {
    v1::TrackRequest target;
    target.mutable_target()->set_time(0.01 * k);
    *target.mutable_target()->mutable_position() = Vec(1.2 - 0.01 * k, 0.3 + 0.01 * k, 0);
    ASSERT_TRUE(stream->Write(target));
    ASSERT_TRUE(stream->Read(&response)) << "target " << k;
    const v1::JointState& s = response.state();
    if (s.status() == v1::STEP_STATUS_REACHED) {
      EXPECT_EQ(s.reasons_size(), 0) << "target " << k;
      continue;
    }
    ++short_answers;
    bool residual = false;
    for (const v1::Reason& r : s.reasons()) {
      EXPECT_FALSE(r.description().empty());
      naming_the_ball += r.obstacle_id() == "ball";
      if (r.kind() == v1::Reason::KIND_RESIDUAL) {
        residual = true;
        EXPECT_NEAR(r.value(), Distance(s.sites(s.sites_size() - 1), s.target()), 1e-9);
      }
    }
    EXPECT_TRUE(residual) << "target " << k << ": " << s.DebugString();
  }
  EXPECT_GT(short_answers, 0);  // the target ends at the ball's centre
  EXPECT_GT(naming_the_ball, 0);
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_FALSE(stream->Read(&response));
  EXPECT_TRUE(stream->Finish().ok());
}

// Two Track targets 1e-310 s apart, the second 0.1 m away: the joint velocity (change / time)
// is beyond the range of doubles. The stream ends OUT_OF_RANGE naming the field instead of
// answering an infinite velocity; the first answer stands.
TEST_F(KinematicsServiceTest, TrackNeverSendsANonFiniteVelocity) {
  grpc::ClientContext context;
  SetDeadline(context);
  auto stream = stub_->Track(&context);
  v1::TrackRequest config;
  *config.mutable_config()->mutable_arm()->mutable_spec() = PlanarArm();
  ASSERT_TRUE(stream->Write(config));
  v1::TrackResponse response;
  for (double time : {0.0, 1e-310}) {
    v1::TrackRequest target;
    target.mutable_target()->set_time(time);
    *target.mutable_target()->mutable_position() = Vec(time == 0.0 ? 1.2 : 1.1, 0.3, 0);
    ASSERT_TRUE(stream->Write(target));
  }
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.state().status(), v1::STEP_STATUS_REACHED);
  EXPECT_FALSE(stream->Read(&response));
  stream->WritesDone();
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("velocities[0] = -inf"));
  EXPECT_THAT(status.error_message(), HasSubstr("beyond the range of doubles"));
}

// ---------------------------------------------------------------------------------------------
// Industrial arms (ArmSpec.robot): the Panda preset from a working pose away from its limits.

const double kPandaReady[] = {0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785};

v1::ArmSpec PandaArm() {
  v1::ArmSpec spec;
  spec.mutable_robot()->set_preset(v1::ROBOT_PRESET_PANDA);
  for (double q : kPandaReady) spec.mutable_robot()->add_home_positions(q);
  return spec;
}

v1::Quaternion Quat(const Eigen::Quaterniond& q) { return ToProto(q); }  // conversions.h

// The Panda's tool pose at its ready configuration, by the DH chain's forward kinematics.
Eigen::Isometry3d PandaReadyPose() {
  return robot::ToolPose(robot::presets::Panda(),
                         Eigen::Map<const Eigen::VectorXd>(kPandaReady, 7));
}

// A 0.2 m tool line at the ready orientation, 2 s, 51 samples: every sample REACHED, and the
// forward kinematics of the streamed joint values (the DH chain, not the server's sites) puts
// the tool on the sample's target to 1e-5 m and 1e-5 rad (issue 5's tolerance).
TEST_F(KinematicsServiceTest, IndustrialArmFollowsAFullPoseLine) {
  const Eigen::Isometry3d X0 = PandaReadyPose();
  v1::SolveTrajectoryRequest request;
  *request.mutable_arm()->mutable_spec() = PandaArm();
  v1::LinePath* line = request.mutable_trajectory()->mutable_line();
  *line->mutable_from() = Vec(X0.translation().x(), X0.translation().y(), X0.translation().z());
  *line->mutable_to() = Vec(X0.translation().x(), X0.translation().y() + 0.2, X0.translation().z());
  line->set_duration(2.0);
  request.set_sample_period(0.04);
  *request.mutable_tool_orientation() = Quat(Eigen::Quaterniond(X0.linear()));
  // A ball 0.3 m above the tool (radius 0.05) and 50 mm link capsules: clearances reported.
  for (int k = 0; k < 7; ++k) request.mutable_arm()->mutable_spec()->mutable_robot()->add_link_radii(0.05);
  v1::Obstacle* ball = request.mutable_scene()->mutable_spec()->add_obstacles();
  ball->set_id("ball");
  *ball->mutable_sphere()->mutable_center() = Vec(X0.translation().x() + 0.3, X0.translation().y(), X0.translation().z() + 0.3);
  ball->mutable_sphere()->set_radius(0.05);
  std::vector<v1::SolveTrajectoryResponse> messages;
  ASSERT_TRUE(SolveTrajectory(request, &messages).ok());
  ASSERT_EQ(messages.size(), 52u);
  EXPECT_THAT(messages.front().joint_names(), ::testing::ElementsAre("joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7"));
  const robot::ChainSpec panda = robot::presets::Panda();
  for (size_t k = 0; k + 1 < messages.size(); ++k) {
    const v1::JointState& s = messages[k].sample();
    ASSERT_EQ(s.status(), v1::STEP_STATUS_REACHED) << "sample " << k;
    const Eigen::Isometry3d X = robot::ToolPose(panda, Positions(s));
    const Eigen::Vector3d target(s.target().x(), s.target().y(), s.target().z());
    EXPECT_LT((X.translation() - target).norm(), 1e-5) << "sample " << k;
    EXPECT_LT(Eigen::AngleAxisd(X.linear().transpose() * X0.linear()).angle(), 1e-5) << k;
    EXPECT_LT(s.rotation_error(), 1e-5);
    EXPECT_LT(s.constraint_residual(), 1e-10);
    ASSERT_TRUE(s.has_min_clearance());
    EXPECT_GT(s.min_clearance(), 0.0);
  }
  const v1::TrajectorySummary& summary = messages.back().summary();
  EXPECT_DOUBLE_EQ(summary.fraction_reached(), 1.0);
  EXPECT_LT(summary.max_rotation_error(), 1e-5);
  // The whole path is planned and rate-checked: the summary's velocity ratio is the largest
  // joint speed over the Panda's datasheet limit, from the returned positions.
  double fastest = 0.0;
  for (size_t k = 1; k + 1 < messages.size(); ++k) {
    const Eigen::VectorXd dq = Positions(messages[k].sample()) - Positions(messages[k - 1].sample());
    for (int j = 0; j < 7; ++j) {
      fastest = std::max(fastest, std::abs(dq[j]) / 0.04 / panda.joints[j].limits->max_velocity);
    }
  }
  EXPECT_NEAR(summary.max_velocity_ratio(), fastest, 1e-9);
  EXPECT_GT(summary.feasible_time_scaling(), 0.0);
  EXPECT_LE(summary.feasible_time_scaling(), 1.0);
}

// Stored from a URDF through the ModelService, used by name in Solve (position target from
// forward kinematics of a known configuration) and in Track (full-pose targets, in order).
TEST_F(KinematicsServiceTest, IndustrialArmFromUrdfSolvesAndTracks) {
  const std::string urdf =
      "<robot name=\"two\"><link name=\"base\"/><link name=\"a\"/><link name=\"b\"/>"
      "<link name=\"c\"/><link name=\"tool\"/>"
      "<joint name=\"yaw\" type=\"revolute\"><parent link=\"base\"/><child link=\"a\"/>"
      "<origin xyz=\"0 0 0.3\"/><axis xyz=\"0 0 1\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"2\"/></joint>"
      "<joint name=\"pitch\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>"
      "<origin xyz=\"0 0 0.1\"/><axis xyz=\"0 1 0\"/><limit lower=\"-2\" upper=\"2\" effort=\"1\" velocity=\"2\"/></joint>"
      "<joint name=\"elbow\" type=\"revolute\"><parent link=\"b\"/><child link=\"c\"/>"
      "<origin xyz=\"0 0 0.4\"/><axis xyz=\"0 1 0\"/><limit lower=\"-2.5\" upper=\"2.5\" effort=\"1\" velocity=\"2\"/></joint>"
      "<joint name=\"flange\" type=\"fixed\"><parent link=\"c\"/><child link=\"tool\"/>"
      "<origin xyz=\"0 0 0.3\"/></joint></robot>";
  v1::CreateArmRequest create;
  create.set_arm_id("two");
  v1::UrdfChain* chain = create.mutable_arm()->mutable_spec()->mutable_robot()->mutable_urdf();
  chain->set_urdf(urdf);
  chain->set_base_link("base");
  chain->set_tip_link("tool");
  for (double q : {0.2, 0.4, 0.8}) create.mutable_arm()->mutable_spec()->mutable_robot()->add_home_positions(q);
  v1::Arm created;
  grpc::ClientContext context;
  ASSERT_TRUE(models_->CreateArm(&context, create, &created).ok());
  // Forward kinematics by hand: yaw 0.3 about z, pitch 0.5 and elbow 0.6 about y from 0.4 m up.
  const double yaw = 0.3, pitch = 0.5, elbow = 0.6;
  const double reach = 0.4 * std::sin(pitch) + 0.3 * std::sin(pitch + elbow);
  const double height = 0.4 + 0.4 * std::cos(pitch) + 0.3 * std::cos(pitch + elbow);
  v1::SolveRequest solve;
  solve.mutable_arm()->set_name("arms/two");
  *solve.mutable_target() = Vec(reach * std::cos(yaw), reach * std::sin(yaw), height);
  v1::SolveResponse solved;
  ASSERT_TRUE(Solve(solve, &solved).ok());
  EXPECT_EQ(solved.state().status(), v1::STEP_STATUS_REACHED);
  EXPECT_LT(solved.state().hand_error(), 1e-5);
  EXPECT_THAT(solved.joint_names(), ::testing::ElementsAre("yaw", "pitch", "elbow"));

  grpc::ClientContext track_context;
  SetDeadline(track_context);
  auto stream = stub_->Track(&track_context);
  v1::TrackRequest config;
  config.mutable_config()->mutable_arm()->set_name("arms/two");
  ASSERT_TRUE(stream->Write(config));
  v1::TrackResponse response;
  for (int k = 0; k < 10; ++k) {  // a 3-joint arm: position targets along a short arc
    v1::TrackRequest target;
    target.mutable_target()->set_time(0.1 * k);
    const double a = yaw + 0.02 * k;
    *target.mutable_target()->mutable_position() = Vec(reach * std::cos(a), reach * std::sin(a), height);
    ASSERT_TRUE(stream->Write(target));
    ASSERT_TRUE(stream->Read(&response)) << k;
    EXPECT_EQ(response.state().status(), v1::STEP_STATUS_REACHED) << k;
    EXPECT_LT(response.state().hand_error(), 1e-5) << k;
    EXPECT_NEAR(response.state().positions(0), a, 1e-6) << k;  // the yaw follows the arc
  }
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_TRUE(stream->Finish().ok());
}

// Every branch (SolveRequest.max_solutions): the UR5 at the pose of a generic configuration
// answers its 8 solutions, each on the pose by forward kinematics of the returned positions
// (the DH chain's, not the server's sites), no two within 0.1 rad of each other (modulo a full
// turn), nearest to the seed first; the one that made the pose is among them; a small
// max_seed_distance keeps only the seed's own branch.
// The UR5 as its DH lines (link_radii 0 replace its collision model): the kinematic branches,
// whatever the body would hit.
v1::SolveRequest Ur5BranchRequest(const Eigen::Isometry3d& X_made, bool lines) {
  v1::SolveRequest request;
  request.mutable_arm()->mutable_spec()->mutable_robot()->set_preset(v1::ROBOT_PRESET_UR5);
  for (int k = 0; lines && k < 6; ++k) {
    request.mutable_arm()->mutable_spec()->mutable_robot()->add_link_radii(0.0);
  }
  *request.mutable_target() = Vec(X_made.translation().x(), X_made.translation().y(),
                                  X_made.translation().z());
  *request.mutable_target_orientation() = ToProto(Eigen::Quaterniond(X_made.linear()));
  request.set_max_solutions(8);
  for (int j = 0; j < 6; ++j) request.add_seed_positions(0.1);
  return request;
}

TEST_F(KinematicsServiceTest, IndustrialArmAnswersEveryBranch) {
  const robot::ChainSpec ur5 = robot::presets::Ur5();
  const Eigen::VectorXd made = (Eigen::VectorXd(6) << 0.3, -1.2, 1.4, -1.5, -1.3, 0.4).finished();
  const Eigen::Isometry3d X_made = robot::ToolPose(ur5, made);
  v1::SolveRequest request = Ur5BranchRequest(X_made, /*lines=*/true);
  request.clear_seed_positions();
  const Eigen::VectorXd seed = Eigen::VectorXd::Constant(6, 0.1);
  for (int j = 0; j < 6; ++j) request.add_seed_positions(seed[j]);
  auto turns = [](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    double largest = 0.0;
    for (int j = 0; j < a.size(); ++j) {
      largest = std::max(largest, std::abs(std::remainder(a[j] - b[j], 2 * M_PI)));
    }
    return largest;
  };
  v1::SolveResponse response;
  ASSERT_TRUE(Solve(request, &response).ok());
  ASSERT_EQ(response.solutions_size(), 8);
  bool made_found = false;
  for (int i = 0; i < response.solutions_size(); ++i) {
    const v1::JointState& s = response.solutions(i);
    EXPECT_EQ(s.status(), v1::STEP_STATUS_REACHED) << "solution " << i;
    const Eigen::Isometry3d X = robot::ToolPose(ur5, Positions(s));
    EXPECT_LT((X.translation() - X_made.translation()).norm(), 1e-5) << "solution " << i;
    EXPECT_LT(Eigen::AngleAxisd(X.linear().transpose() * X_made.linear()).angle(), 1e-5);
    for (int k = 0; k < i; ++k) {
      EXPECT_GT(turns(Positions(s), Positions(response.solutions(k))), 0.1);
    }
    if (i > 0) {
      EXPECT_GE(turns(Positions(s), seed), turns(Positions(response.solutions(i - 1)), seed));
    }
    made_found = made_found || turns(Positions(s), made) < 1e-4;
  }
  EXPECT_TRUE(made_found);
  // Seeded at the configuration that made the pose, a 0.05 rad bound keeps only its branch.
  v1::SolveRequest own_branch = request;
  own_branch.clear_seed_positions();
  for (int j = 0; j < 6; ++j) own_branch.add_seed_positions(made[j]);
  own_branch.set_max_seed_distance(0.05);
  v1::SolveResponse own;
  ASSERT_TRUE(Solve(own_branch, &own).ok());
  ASSERT_EQ(own.solutions_size(), 1);
  EXPECT_LT(turns(Positions(own.solutions(0)), made), 1e-4);
}

// This test's own self-clearance of the UR5's body at q: the least over link pairs two or more
// apart, except wrist pairs 2-4 and 3-5, whose published housings touch whatever the joints
// (presets_test), of a lower bound on the capsules' distance (own_capsule_distances.h).
double Ur5OwnSelfClearance(const Eigen::VectorXd& q) {
  const robot::ChainSpec ur5 = robot::presets::Ur5WithBody();
  const std::vector<Eigen::Isometry3d> X = robot::LinkPoses(ur5, q);
  double least = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 6; ++i) {
    for (int j = i + 2; j < 6; ++j) {
      if ((i == 2 && j == 4) || (i == 3 && j == 5)) continue;
      least = std::min(least, robot::test::LinkGapLowerBound(ur5, X, i, j));
    }
  }
  return least;
}

// With its collision model the UR5 answers only the branches its body can take: a subset of
// the DH lines' branches, each clear of itself by this test's own geometry, and every branch
// left out comes within the 1 cm safety margin of touching itself.
TEST_F(KinematicsServiceTest, TheBodyLeavesOutTheBranchesThatFoldIntoThemselves) {
  const Eigen::VectorXd made = (Eigen::VectorXd(6) << 0.3, -1.2, 1.4, -1.5, -1.3, 0.4).finished();
  const Eigen::Isometry3d X_made = robot::ToolPose(robot::presets::Ur5(), made);
  v1::SolveResponse lines, body;
  ASSERT_TRUE(Solve(Ur5BranchRequest(X_made, /*lines=*/true), &lines).ok());
  ASSERT_TRUE(Solve(Ur5BranchRequest(X_made, /*lines=*/false), &body).ok());
  ASSERT_EQ(lines.solutions_size(), 8);
  EXPECT_LT(body.solutions_size(), lines.solutions_size());
  EXPECT_GE(body.solutions_size(), 1);
  for (const v1::JointState& s : body.solutions()) {
    EXPECT_GE(Ur5OwnSelfClearance(Positions(s)), 0.0);
  }
  for (const v1::JointState& line : lines.solutions()) {
    const bool kept =
        std::any_of(body.solutions().begin(), body.solutions().end(), [&](const v1::JointState& s) {
          return (Positions(s) - Positions(line)).cwiseAbs().maxCoeff() < 1e-6;
        });
    if (!kept) {
      EXPECT_LT(Ur5OwnSelfClearance(Positions(line)), 0.01);
    }
  }
}

// IkOptions.solver: AUTO answers a 6R arm's full pose by the closed form and says so, and a 7R
// arm's numerically; NUMERIC takes the constraint solver; ANALYTIC sweeps a 7R arm's locked
// joint; a position-only target stays numeric. Every answer is checked by forward kinematics. ANALYTIC for an arm without a
// closed form, or for a chain arm, is refused at options.solver, naming the failed axes.
TEST_F(KinematicsServiceTest, AnswersSayWhichSolverAnsweredAndAnalyticIsRefusedWhereThereIsNone) {
  auto pose_request = [&](v1::RobotPreset preset, const robot::ChainSpec& chain,
                          const Eigen::VectorXd& made) {
    const Eigen::Isometry3d X = robot::ToolPose(chain, made);
    v1::SolveRequest request;
    request.mutable_arm()->mutable_spec()->mutable_robot()->set_preset(preset);
    *request.mutable_target() = Vec(X.translation().x(), X.translation().y(), X.translation().z());
    *request.mutable_target_orientation() = Quat(Eigen::Quaterniond(X.linear()));
    return request;
  };
  auto expect_answer = [&](const v1::SolveRequest& request, const robot::ChainSpec& chain,
                           v1::IkSolver solver) {
    v1::SolveResponse response;
    const grpc::Status status = Solve(request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.state().status(), v1::STEP_STATUS_REACHED);
    EXPECT_EQ(response.state().solver(), solver) << v1::IkSolver_Name(response.state().solver());
    const Eigen::Isometry3d X = robot::ToolPose(chain, Positions(response.state()));
    EXPECT_LT((X.translation() -
               Eigen::Vector3d(request.target().x(), request.target().y(), request.target().z()))
                  .norm(),
              1e-5);
  };
  const robot::ChainSpec ur5 = robot::presets::Ur5();
  const Eigen::VectorXd ur5_made =
      (Eigen::VectorXd(6) << 0.3, -1.2, 1.4, -1.5, -1.3, 0.4).finished();
  const v1::SolveRequest ur5_pose = pose_request(v1::ROBOT_PRESET_UR5, ur5, ur5_made);
  expect_answer(ur5_pose, ur5, v1::IK_SOLVER_ANALYTIC);
  v1::SolveRequest ur5_numeric = ur5_pose;
  ur5_numeric.mutable_options()->set_solver(v1::IK_SOLVER_NUMERIC);
  expect_answer(ur5_numeric, ur5, v1::IK_SOLVER_NUMERIC);
  const robot::ChainSpec irb120 = robot::presets::Irb120();
  const Eigen::VectorXd irb_made =
      (Eigen::VectorXd(6) << 0.4, 0.3, -0.2, 0.5, 0.6, -0.7).finished();
  v1::SolveRequest irb_pose = pose_request(v1::ROBOT_PRESET_IRB120, irb120, irb_made);
  irb_pose.mutable_options()->set_solver(v1::IK_SOLVER_ANALYTIC);
  expect_answer(irb_pose, irb120, v1::IK_SOLVER_ANALYTIC);
  const robot::ChainSpec panda = robot::presets::Panda();
  const Eigen::VectorXd panda_made =
      (Eigen::VectorXd(7) << 0.2, -0.6, 0.1, -2.2, 0.1, 1.7, 0.6).finished();
  v1::SolveRequest panda_pose = pose_request(v1::ROBOT_PRESET_PANDA, panda, panda_made);
  expect_answer(panda_pose, panda, v1::IK_SOLVER_ANALYTIC);  // AUTO: at the continued value
  panda_pose.mutable_options()->set_solver(v1::IK_SOLVER_NUMERIC);
  expect_answer(panda_pose, panda, v1::IK_SOLVER_NUMERIC);
  panda_pose.mutable_options()->set_solver(v1::IK_SOLVER_ANALYTIC);
  expect_answer(panda_pose, panda, v1::IK_SOLVER_ANALYTIC);
  v1::SolveRequest ur5_position = ur5_pose;  // three joints to spare: the numeric solver
  ur5_position.clear_target_orientation();
  ur5_position.mutable_options()->set_solver(v1::IK_SOLVER_ANALYTIC);
  expect_answer(ur5_position, ur5, v1::IK_SOLVER_NUMERIC);

  auto refused = [&](const v1::SolveRequest& request) {
    v1::SolveResponse response;
    const grpc::Status status = Solve(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(ViolatedFields(status), Contains("options.solver"));
    return status.error_message();
  };
  // A 6R DH table whose consecutive axes are all skewed: no family fits.
  v1::SolveRequest skewed = ur5_position;
  v1::DhTable* dh = skewed.mutable_arm()->mutable_spec()->mutable_robot()->mutable_dh();
  dh->set_convention(v1::DH_CONVENTION_STANDARD);
  for (int j = 0; j < 6; ++j) {
    v1::DhRow* row = dh->add_rows();
    row->set_a(0.2);
    row->set_alpha(0.5 + 0.1 * j);
    row->set_d(0.1);
  }
  *skewed.mutable_target() = Vec(0.3, 0.2, 0.4);
  EXPECT_THAT(refused(skewed), HasSubstr("not parallel"));
  v1::SolveRequest unknown = ur5_pose;
  unknown.mutable_options()->set_solver(static_cast<v1::IkSolver>(9));
  EXPECT_THAT(refused(unknown), HasSubstr("got 9"));
  v1::SolveRequest chain;
  *chain.mutable_arm()->mutable_spec() = PlanarArm();
  *chain.mutable_target() = Vec(0.9, 0.6, 0);
  v1::SolveResponse chain_answer;
  ASSERT_TRUE(Solve(chain, &chain_answer).ok());
  EXPECT_EQ(chain_answer.state().solver(), v1::IK_SOLVER_NUMERIC);
  chain.mutable_options()->set_solver(v1::IK_SOLVER_ANALYTIC);
  EXPECT_THAT(refused(chain), HasSubstr("industrial arms"));
}

// A preferred posture (SolveRequest.preferred_posture): the Panda's tool position of one
// configuration, asked from the ready pose with that configuration as a heavy posture, is
// answered there (the self-motion of a position target is 4-dimensional); without the posture
// the answer stays near the ready pose. Checked by the chain's forward kinematics.
TEST_F(KinematicsServiceTest, PreferredPostureDrawsARedundantArmToIt) {
  const robot::ChainSpec panda = robot::presets::Panda();
  const Eigen::VectorXd ready =
      (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished();
  const Eigen::VectorXd nominal =
      (Eigen::VectorXd(7) << 0.5, -0.4, -0.6, -2.0, 0.4, 1.9, 0.2).finished();
  const Eigen::Vector3d point = robot::ToolPose(panda, nominal).translation();
  v1::SolveRequest request;
  *request.mutable_arm()->mutable_spec() = PandaArm();
  *request.mutable_target() = Vec(point.x(), point.y(), point.z());
  for (int j = 0; j < 7; ++j) request.add_seed_positions(ready[j]);
  v1::SolveResponse plain;
  ASSERT_TRUE(Solve(request, &plain).ok());
  for (int j = 0; j < 7; ++j) request.add_preferred_posture(nominal[j]);
  request.set_posture_weight(1e4);
  v1::SolveResponse preferred;
  ASSERT_TRUE(Solve(request, &preferred).ok());
  ASSERT_EQ(preferred.state().status(), v1::STEP_STATUS_REACHED);
  EXPECT_LT((robot::ToolPose(panda, Positions(preferred.state())).translation() - point).norm(), 1e-5);
  EXPECT_LT((Positions(preferred.state()) - nominal).cwiseAbs().maxCoeff(), 2e-2);
  EXPECT_GT((Positions(plain.state()) - nominal).cwiseAbs().maxCoeff(), 0.2);
}

// Reasons (JointState.reasons): a target 2 m from the base of the 1.5 m planar arm answers
// CLAMPED_UNREACHABLE with OUT_OF_REACH (0.5 m beyond) and the hand's RESIDUAL, each figure the
// test's own; a target at the centre of a ball is IN_COLLISION with the ball named and the
// depth of the limb recomputed from the returned sites; a reached answer carries none.
TEST_F(KinematicsServiceTest, FailedAnswersSayWhy) {
  v1::SolveRequest request;
  *request.mutable_arm()->mutable_spec() = PlanarArm();
  *request.mutable_target() = Vec(2.0, 0.0, 0.0);
  v1::SolveResponse far;
  ASSERT_TRUE(Solve(request, &far).ok());
  ASSERT_EQ(far.state().status(), v1::STEP_STATUS_CLAMPED_UNREACHABLE);
  ASSERT_GE(far.state().reasons_size(), 2);
  const v1::Reason& reach = far.state().reasons(0);
  EXPECT_EQ(reach.kind(), v1::Reason::KIND_OUT_OF_REACH);
  EXPECT_NEAR(reach.distance(), 0.5, 1e-12);
  EXPECT_THAT(reach.description(), HasSubstr("beyond the reach"));
  const v1::Reason& residual = far.state().reasons(1);
  EXPECT_EQ(residual.kind(), v1::Reason::KIND_RESIDUAL);
  EXPECT_NEAR(residual.value(), Distance(far.state().sites(3), Vec(2.0, 0.0, 0.0)), 1e-12);

  v1::Obstacle* ball = request.mutable_scene()->mutable_spec()->add_obstacles();
  ball->set_id("ball");
  *ball->mutable_sphere()->mutable_center() = Vec(1.0, 0.3, 0.0);
  ball->mutable_sphere()->set_radius(0.15);
  *request.mutable_target() = Vec(1.0, 0.3, 0.0);
  v1::SolveResponse inside;
  ASSERT_TRUE(Solve(request, &inside).ok());
  EXPECT_EQ(inside.state().status(), v1::STEP_STATUS_IN_COLLISION);
  ASSERT_GE(inside.state().reasons_size(), 1);
  const v1::Reason& hit = inside.state().reasons(0);
  EXPECT_EQ(hit.kind(), v1::Reason::KIND_COLLISION);
  EXPECT_EQ(hit.obstacle_id(), "ball");
  EXPECT_THAT(hit.description(), HasSubstr("obstacle \"ball\""));
  ASSERT_GE(hit.link(), 0);
  ASSERT_LT(hit.link(), 3);
  // The test's own depth: the ball centre's distance to the limb's axis less both radii.
  const Eigen::Vector3d a(inside.state().sites(hit.link()).x(), inside.state().sites(hit.link()).y(), 0);
  const Eigen::Vector3d b(inside.state().sites(hit.link() + 1).x(),
                          inside.state().sites(hit.link() + 1).y(), 0);
  const Eigen::Vector3d c(1.0, 0.3, 0.0);
  const double t = std::clamp((c - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
  EXPECT_NEAR(hit.distance(), (a + t * (b - a) - c).norm() - 0.15 - 0.02, 1e-9);

  *request.mutable_target() = Vec(0.6, -0.6, 0.0);
  v1::SolveResponse reached;
  ASSERT_TRUE(Solve(request, &reached).ok());
  EXPECT_EQ(reached.state().status(), v1::STEP_STATUS_REACHED);
  EXPECT_EQ(reached.state().reasons_size(), 0);
}

// An industrial arm that cannot get there: the Panda asked 2 m away answers NOT_CONVERGED
// with the RESIDUAL between its tool (the chain's forward kinematics of the returned positions)
// and the target.
TEST_F(KinematicsServiceTest, IndustrialArmFailureSaysWhy) {
  v1::SolveRequest request;
  *request.mutable_arm()->mutable_spec() = PandaArm();
  *request.mutable_target() = Vec(2.0, 0.0, 0.5);
  v1::SolveResponse response;
  ASSERT_TRUE(Solve(request, &response).ok());
  ASSERT_NE(response.state().status(), v1::STEP_STATUS_REACHED);
  bool residual_found = false;
  for (const v1::Reason& r : response.state().reasons()) {
    if (r.kind() != v1::Reason::KIND_RESIDUAL) continue;
    residual_found = true;
    const Eigen::Vector3d tool =
        robot::ToolPose(robot::presets::Panda(), Positions(response.state())).translation();
    EXPECT_NEAR(r.value(), (tool - Eigen::Vector3d(2.0, 0.0, 0.5)).norm(), 1e-9);
  }
  EXPECT_TRUE(residual_found);
}

// Bad industrial-arm requests name the field: a negative safety margin, a chain-only option,
// link radii not one per joint, a non-unit tool orientation, a malformed URDF, a DH table
// without convention, chain fields beside the robot; and an orientation for a chain arm.
TEST_F(KinematicsServiceTest, IndustrialArmErrorsNameTheField) {
  auto solve_fields = [&](const v1::SolveRequest& request) {
    v1::SolveResponse response;
    const grpc::Status status = Solve(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    return ViolatedFields(status);
  };
  v1::SolveRequest request;
  *request.mutable_arm()->mutable_spec() = PandaArm();
  *request.mutable_target() = Vec(0.4, 0.0, 0.5);
  v1::SolveRequest bad_margin = request;
  bad_margin.mutable_options()->set_safety_margin(-1.0);
  EXPECT_THAT(solve_fields(bad_margin), Contains("options.safety_margin"));
  v1::SolveRequest chain_only = request;  // a chain tracker's option: refused, not ignored
  chain_only.mutable_options()->set_patience(3);
  EXPECT_THAT(solve_fields(chain_only), Contains("options.patience"));
  v1::SolveRequest bad_radii = request;
  bad_radii.mutable_arm()->mutable_spec()->mutable_robot()->add_link_radii(0.05);
  EXPECT_THAT(solve_fields(bad_radii), Contains("arm.spec.robot.link_radii"));
  v1::SolveRequest bad_quaternion = request;
  *bad_quaternion.mutable_target_orientation() = Quat(Eigen::Quaterniond(1.0, 0.0, 0.1, 0.0));
  EXPECT_THAT(solve_fields(bad_quaternion), Contains("target_orientation"));
  v1::SolveRequest far_target = request;  // fuzzer finding: its error overflowed to inf
  *far_target.mutable_target() = Vec(0.4, 0.3, -1.5e228);
  EXPECT_THAT(solve_fields(far_target), Contains("target"));
  v1::SolveRequest bad_urdf = request;
  bad_urdf.mutable_arm()->mutable_spec()->mutable_robot()->mutable_urdf()->set_urdf("<robot name=");
  bad_urdf.mutable_arm()->mutable_spec()->mutable_robot()->clear_home_positions();
  EXPECT_THAT(solve_fields(bad_urdf), Contains("arm.spec.robot.urdf.urdf"));
  v1::SolveRequest bad_dh = bad_urdf;
  bad_dh.mutable_arm()->mutable_spec()->mutable_robot()->mutable_dh()->add_rows()->set_a(0.3);
  EXPECT_THAT(solve_fields(bad_dh), Contains("arm.spec.robot.dh.convention"));
  v1::SolveRequest mixed = request;
  mixed.mutable_arm()->mutable_spec()->add_limbs()->set_length(0.2);
  EXPECT_THAT(solve_fields(mixed), Contains("arm.spec.limbs"));
  v1::SolveRequest too_many = request;
  too_many.set_max_solutions(65);
  EXPECT_THAT(solve_fields(too_many), Contains("max_solutions"));
  v1::SolveRequest bad_distance = request;
  bad_distance.set_max_solutions(8);
  bad_distance.set_max_seed_distance(-0.5);
  EXPECT_THAT(solve_fields(bad_distance), Contains("max_seed_distance"));
  v1::SolveRequest chain_branches;
  *chain_branches.mutable_arm()->mutable_spec() = PlanarArm();
  *chain_branches.mutable_target() = Vec(0.9, 0.6, 0);
  chain_branches.set_max_solutions(4);
  EXPECT_THAT(solve_fields(chain_branches), Contains("max_solutions"));
  v1::SolveRequest short_posture = request;
  for (int j = 0; j < 6; ++j) short_posture.add_preferred_posture(0.0);
  EXPECT_THAT(solve_fields(short_posture), Contains("preferred_posture"));
  v1::SolveRequest nan_posture = request;
  for (int j = 0; j < 7; ++j) nan_posture.add_preferred_posture(j == 3 ? NAN : 0.0);
  EXPECT_THAT(solve_fields(nan_posture), Contains("preferred_posture[3]"));
  v1::SolveRequest heavy_posture = request;
  for (int j = 0; j < 7; ++j) heavy_posture.add_preferred_posture(0.0);
  heavy_posture.set_posture_weight(2e6);
  EXPECT_THAT(solve_fields(heavy_posture), Contains("posture_weight"));
  v1::SolveRequest weight_alone = request;
  weight_alone.set_posture_weight(1.0);
  EXPECT_THAT(solve_fields(weight_alone), Contains("posture_weight"));
  v1::SolveRequest chain_posture;
  *chain_posture.mutable_arm()->mutable_spec() = PlanarArm();
  *chain_posture.mutable_target() = Vec(0.9, 0.6, 0);
  chain_posture.add_preferred_posture(0.1);
  EXPECT_THAT(solve_fields(chain_posture), Contains("preferred_posture"));
  v1::SolveRequest chain_with_orientation;
  *chain_with_orientation.mutable_arm()->mutable_spec() = PlanarArm();
  *chain_with_orientation.mutable_target() = Vec(0.9, 0.6, 0);
  *chain_with_orientation.mutable_target_orientation() = Quat(Eigen::Quaterniond::Identity());
  EXPECT_THAT(solve_fields(chain_with_orientation), Contains("target_orientation"));
}

}  // namespace
}  // namespace ikd::server
