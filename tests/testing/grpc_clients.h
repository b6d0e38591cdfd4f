// gRPC clients for the cross-process fault and load tests (tests/integration/faults_test.cc,
// load_test.cc): stubs on their own loopback connection, the demo models of deploy/models,
// request builders, and stream drivers that return what came back so that the test can check
// it. Header-only, next to integration_fixture.h (whose kDemoArm, ParseJson and FileText it uses).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "ikd/v1/simulation_service.grpc.pb.h"
#include "testing/integration_fixture.h"

namespace ikd::integration {

using HealthStatus = grpc::health::v1::HealthCheckResponse;

// The stubs of one client, on a connection of its own (a local subchannel pool, so that
// dropping this client drops its TCP connection, not one shared with other clients).
struct Client {
  explicit Client(const std::string& address) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    models = v1::ModelService::NewStub(channel);
    kinematics = v1::KinematicsService::NewStub(channel);
    simulation = v1::SimulationService::NewStub(channel);
    health = grpc::health::v1::Health::NewStub(channel);
  }
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::ModelService::Stub> models;
  std::unique_ptr<v1::KinematicsService::Stub> kinematics;
  std::unique_ptr<v1::SimulationService::Stub> simulation;
  std::unique_ptr<grpc::health::v1::Health::Stub> health;
};

// A context whose deadline is `timeout` from now: every call of these tests is bounded.
inline std::unique_ptr<grpc::ClientContext> ContextWithin(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

// The overall health ("" service), or UNKNOWN when the check itself fails.
inline HealthStatus::ServingStatus CheckHealth(Client& client) {
  auto context = ContextWithin(std::chrono::seconds(5));
  grpc::health::v1::HealthCheckRequest request;
  HealthStatus response;
  if (!client.health->Check(context.get(), request, &response).ok()) return HealthStatus::UNKNOWN;
  return response.status();
}

inline v1::Arm DemoArm() { return ParseJson<v1::Arm>(FileText(kDemoArm)); }
inline v1::Scene DemoScene() { return ParseJson<v1::Scene>(FileText(kDemoScene)); }

inline grpc::Status CreateArm(Client& client, const std::string& id, const v1::Arm& arm,
                              v1::Arm* out) {
  auto context = ContextWithin(std::chrono::seconds(10));
  v1::CreateArmRequest request;
  request.set_arm_id(id);
  *request.mutable_arm() = arm;
  return client.models->CreateArm(context.get(), request, out);
}

inline grpc::Status UpdateArm(Client& client, const std::string& name, const v1::Arm& arm,
                              v1::Arm* out) {
  auto context = ContextWithin(std::chrono::seconds(10));
  v1::UpdateArmRequest request;
  *request.mutable_arm() = arm;
  request.mutable_arm()->set_name(name);
  return client.models->UpdateArm(context.get(), request, out);
}

inline grpc::Status FetchArm(Client& client, const std::string& name, v1::Arm* out) {
  auto context = ContextWithin(std::chrono::seconds(10));
  v1::GetArmRequest request;
  request.set_name(name);
  return client.models->GetArm(context.get(), request, out);
}

// Creates arms/demo and scenes/demo from deploy/models.
inline void AddDemoModels(Client& client) {
  v1::Arm arm;
  grpc::Status created = CreateArm(client, "demo", DemoArm(), &arm);
  ASSERT_TRUE(created.ok()) << created.error_message();
  auto context = ContextWithin(std::chrono::seconds(10));
  v1::CreateSceneRequest request;
  request.set_scene_id("demo");
  *request.mutable_scene() = DemoScene();
  v1::Scene scene;
  grpc::Status scene_created = client.models->CreateScene(context.get(), request, &scene);
  ASSERT_TRUE(scene_created.ok()) << scene_created.error_message();
}

inline v1::Vector3 Vec(double x, double y, double z) {
  v1::Vector3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

// The demo arm's hand line between the demo scene's obstacles (reachable all along):
// (1.1, 0.3, 0) at t = 0 to (0.6, 0.9, 0) at t = duration.
constexpr double kLineFrom[3] = {1.1, 0.3, 0.0};
constexpr double kLineTo[3] = {0.6, 0.9, 0.0};

inline v1::Vector3 LinePoint(double fraction) {
  return Vec(kLineFrom[0] + fraction * (kLineTo[0] - kLineFrom[0]),
             kLineFrom[1] + fraction * (kLineTo[1] - kLineFrom[1]), 0.0);
}

// SolveTrajectory of arms/demo among scenes/demo along the line: duration / period + 1
// samples; `trials` random trials per sub-step (more: slower samples; 0: plain projection).
inline v1::SolveTrajectoryRequest DemoTrajectory(double duration, double period, int trials) {
  v1::SolveTrajectoryRequest request;
  request.mutable_arm()->set_name("arms/demo");
  request.mutable_scene()->set_name("scenes/demo");
  v1::LinePath* line = request.mutable_trajectory()->mutable_line();
  *line->mutable_from() = LinePoint(0.0);
  *line->mutable_to() = LinePoint(1.0);
  line->set_duration(duration);
  request.set_sample_period(period);
  request.mutable_options()->set_seed(7);
  if (trials == 0) {
    request.mutable_options()->set_no_trials(true);
  } else {
    request.mutable_options()->set_trials_per_step(trials);
    request.mutable_options()->set_patience(-1);  // every trial runs: a steady cost per sample
    request.mutable_options()->set_explore_unconstrained(true);  // free space too
  }
  return request;
}

// A helix chain of `sites` sites under gravity, `steps` RATTLE steps, one frame every
// `stride` steps.
inline v1::StepChainRequest HelixChain(int sites, int64_t steps, int64_t stride) {
  v1::StepChainRequest request;
  v1::GeneratedChain* chain = request.mutable_generated();
  chain->set_shape(v1::GeneratedChain::SHAPE_HELIX);
  chain->set_num_sites(sites);
  chain->set_link(0.1);
  chain->set_radius(0.2);
  chain->set_pitch(0.05);
  *request.mutable_potentials()->mutable_gravity() = Vec(0, 0, -9.81);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_RATTLE);
  request.set_dt(1e-3);
  request.set_steps(steps);
  request.set_stride(stride);
  return request;
}

// `period`: the controller's cycle the stream declares for admission (0: the server's default).
inline v1::TrackRequest DemoTrackConfig(double period = 0.0) {
  v1::TrackRequest request;
  request.mutable_config()->set_period(period);
  request.mutable_config()->mutable_arm()->set_name("arms/demo");
  request.mutable_config()->mutable_scene()->set_name("scenes/demo");
  request.mutable_config()->mutable_options()->set_seed(3);
  return request;
}

// Target k of a Track stream along the demo line, `count` targets in all, 10 s for the whole
// line (8 cm/s: within the demo arm's servo limits, so answers are REACHED, not rate-limited).
inline v1::TrackRequest DemoTrackTarget(int k, int count) {
  v1::TrackRequest request;
  request.mutable_target()->set_time(10.0 * k / std::max(1, count - 1));
  *request.mutable_target()->mutable_position() =
      LinePoint(static_cast<double>(k) / std::max(1, count - 1));
  return request;
}

inline v1::SolveRequest DemoSolve(double fraction) {
  v1::SolveRequest request;
  request.mutable_arm()->set_name("arms/demo");
  request.mutable_scene()->set_name("scenes/demo");
  *request.mutable_target() = LinePoint(fraction);
  request.mutable_options()->set_seed(5);
  return request;
}

// What a SolveTrajectory stream delivered.
struct TrajectoryResult {
  grpc::Status status;
  int samples = 0;  // JointState messages
  bool has_summary = false;
  v1::TrajectorySummary summary;
};

// Reads the stream to its end; `after_each(k)` runs after message k (e.g. to cancel or pause).
inline TrajectoryResult ReadTrajectory(
    grpc::ClientReader<v1::SolveTrajectoryResponse>& reader,
    const std::function<void(int)>& after_each = [](int) {}) {
  TrajectoryResult result;
  v1::SolveTrajectoryResponse message;
  for (int k = 0; reader.Read(&message); ++k) {
    if (message.has_sample()) ++result.samples;
    if (message.has_summary()) {
      result.has_summary = true;
      result.summary = message.summary();
    }
    after_each(k);
  }
  result.status = reader.Finish();
  return result;
}

inline TrajectoryResult SolveTrajectory(Client& client, const v1::SolveTrajectoryRequest& request,
                                        std::chrono::milliseconds timeout) {
  auto context = ContextWithin(timeout);
  auto reader = client.kinematics->SolveTrajectory(context.get(), request);
  return ReadTrajectory(*reader);
}

// What a Track stream delivered.
struct TrackResult {
  grpc::Status status;
  std::vector<v1::JointState> states;
};

// Sends the config and `count` targets one at a time (each answered before the next), then
// half-closes; the config declares the targets' spacing in time as its period. `after_each(k)`
// runs after answer k.
inline TrackResult Track(grpc::ClientContext& context, Client& client, int count,
                         const std::function<void(int)>& after_each = [](int) {}) {
  TrackResult result;
  auto stream = client.kinematics->Track(&context);
  if (stream->Write(DemoTrackConfig(DemoTrackTarget(1, count).target().time()))) {
    v1::TrackResponse response;
    for (int k = 0; k < count; ++k) {
      if (!stream->Write(DemoTrackTarget(k, count)) || !stream->Read(&response)) break;
      result.states.push_back(response.state());
      after_each(k);
    }
    stream->WritesDone();
  }
  result.status = stream->Finish();
  return result;
}

// What a StepChain stream delivered.
struct ChainResult {
  grpc::Status status;
  int frames = 0;
  int64_t last_step = 0;
  double max_violation = 0.0;
};

inline ChainResult StepChain(grpc::ClientContext& context, Client& client,
                             const v1::StepChainRequest& request,
                             const std::function<void(int)>& after_each = [](int) {}) {
  ChainResult result;
  auto reader = client.simulation->StepChain(&context, request);
  v1::ChainFrame frame;
  while (reader->Read(&frame)) {
    ++result.frames;
    result.last_step = frame.step();
    result.max_violation = std::max(result.max_violation, frame.max_relative_violation());
    after_each(result.frames - 1);
  }
  result.status = reader->Finish();
  return result;
}

}  // namespace ikd::integration
