// SimulationService end to end in process: the real server on 127.0.0.1:0 (memory store), a
// real channel and the generated stub. Each test states the physics it checks (reference value,
// where it comes from, tolerance) or the wire contract (simulation_service.proto) in one line.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "ikd/systems/pendulum.h"
#include "ikd/v1/simulation_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"
#include "testing/status_details.h"
#include "testing/proto_vector.h"

namespace ikd::server {
namespace {

using ::ikd::testing::Vec;
using ::ikd::testing::ViolatedField;

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr double kPi = 3.14159265358979323846;

// A running server and a SimulationService stub on a real loopback channel.
class SimulationServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = NewMemoryModelStore();
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    auto server = IkdServer::Start(options, store_.get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::SimulationService::NewStub(channel_);
  }

  static void SetDeadline(grpc::ClientContext& context) {
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  }

  // Reads a whole stream; the frames and the final status.
  template <class Frame, class Request>
  grpc::Status Stream(std::unique_ptr<grpc::ClientReader<Frame>> (v1::SimulationService::Stub::*
                                                                      method)(
                          grpc::ClientContext*, const Request&),
                      const Request& request, std::vector<Frame>* frames) {
    grpc::ClientContext context;
    SetDeadline(context);
    auto reader = ((*stub_).*method)(&context, request);
    Frame frame;
    while (reader->Read(&frame)) frames->push_back(frame);
    return reader->Finish();
  }

  grpc::Status StepPendulum(const v1::StepPendulumRequest& request,
                            std::vector<v1::PendulumFrame>* frames) {
    return Stream(&v1::SimulationService::Stub::StepPendulum, request, frames);
  }
  grpc::Status StepChain(const v1::StepChainRequest& request,
                         std::vector<v1::ChainFrame>* frames) {
    return Stream(&v1::SimulationService::Stub::StepChain, request, frames);
  }

  std::unique_ptr<ModelStore> store_;
  std::unique_ptr<IkdServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SimulationService::Stub> stub_;
};

v1::StepPendulumRequest PendulumRequest(std::vector<double> masses, std::vector<double> lengths,
                                        std::vector<double> angles, std::vector<double> rates,
                                        v1::ConstraintMethod method, double dt, int64_t steps,
                                        int64_t stride) {
  v1::StepPendulumRequest request;
  request.set_planar(true);
  for (double m : masses) request.add_masses(m);
  for (double l : lengths) request.add_lengths(l);
  for (double a : angles) request.add_angles(a);
  for (double w : rates) request.add_angular_velocities(w);
  request.mutable_projection()->set_method(method);
  request.set_dt(dt);
  request.set_steps(steps);
  request.set_stride(stride);
  return request;
}

// n + 1 sites on the x axis with unit links, site 0 fixed, unit masses, links (k, k + 1).
v1::StepChainRequest HorizontalChain(int links, v1::ConstraintMethod method) {
  v1::StepChainRequest request;
  v1::ChainSystem* chain = request.mutable_chain();
  for (int k = 0; k <= links; ++k) {
    v1::Site* site = chain->add_sites();
    *site->mutable_position() = Vec(k, 0, 0);
    if (k == 0) {
      site->set_inverse_mass(0.0);
    } else {
      site->set_mass(1.0);
    }
  }
  for (int k = 0; k < links; ++k) {
    v1::DistanceConstraint* c = chain->add_constraints();
    c->set_i(k);
    c->set_j(k + 1);
    c->set_length(1.0);
  }
  *request.mutable_potentials()->mutable_gravity() = Vec(0, -9.81, 0);
  request.mutable_projection()->set_method(method);
  request.mutable_projection()->set_tolerance(1e-10);
  request.set_dt(1e-3);
  return request;
}

// The test's own measure of a frame's constraints (Bailey eq. 24): max |r_ij - l| / l over the
// links (k, k + 1) of an open chain of equal links `link`, from the returned positions alone.
double ChainViolation(const v1::ChainFrame& frame, double link) {
  double worst = 0.0;
  for (int k = 0; k + 1 < frame.positions_size(); ++k) {
    const v1::Vector3& a = frame.positions(k);
    const v1::Vector3& b = frame.positions(k + 1);
    const double dx = a.x() - b.x(), dy = a.y() - b.y(), dz = a.z() - b.z();
    const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
    worst = std::max(worst, std::abs(r - link) / link);
  }
  return worst;
}

TEST_F(SimulationServiceTest, SmallAmplitudePendulumPeriodAndEnergyWithRattle) {
  // Period 2 pi sqrt(l/g) (1 + theta0^2/16) within 1e-3 relative; total energy within 1e-4 of
  // the swing energy m g l (1 - cos theta0) (velocity Verlet: O((w dt)^2) fluctuation).
  const double l = 1.0, g = 9.81, theta0 = 0.05, dt = 1e-3;
  v1::StepPendulumRequest request =
      PendulumRequest({1.0}, {l}, {theta0}, {0.0}, v1::CONSTRAINT_METHOD_RATTLE, dt, 3000, 1);
  request.set_gravity(g);
  std::vector<v1::PendulumFrame> frames;
  ASSERT_TRUE(StepPendulum(request, &frames).ok());
  ASSERT_EQ(frames.size(), 3000u);

  // Downward zero crossings of the angle, linearly interpolated: one period apart.
  std::vector<double> crossings;
  for (size_t k = 1; k < frames.size(); ++k) {
    const double a0 = frames[k - 1].angles(0), a1 = frames[k].angles(0);
    if (a0 > 0.0 && a1 <= 0.0) {
      crossings.push_back(frames[k - 1].time() + dt * a0 / (a0 - a1));
    }
  }
  ASSERT_GE(crossings.size(), 2u);
  const double expected = 2 * kPi * std::sqrt(l / g) * (1 + theta0 * theta0 / 16);
  EXPECT_NEAR(crossings[1] - crossings[0], expected, 1e-3 * expected);

  const double swing = 1.0 * g * l * (1 - std::cos(theta0));
  const double e0 = -1.0 * g * l * std::cos(theta0);
  for (const v1::PendulumFrame& frame : frames) {
    ASSERT_NEAR(frame.total_energy(), e0, 1e-4 * swing) << "step " << frame.step();
  }
}

TEST_F(SimulationServiceTest, DoublePendulumOverGrpcEqualsInProcessRunBitForBit) {
  // Contract: the stream carries exactly the in-process systems::Pendulum doubles (no rounding).
  v1::StepPendulumRequest request = PendulumRequest(
      {1.0, 2.0}, {1.0, 0.7}, {0.5, 1.0}, {0.0, 0.3}, v1::CONSTRAINT_METHOD_RATTLE, 1e-3, 500, 50);
  std::vector<v1::PendulumFrame> frames;
  ASSERT_TRUE(StepPendulum(request, &frames).ok());
  ASSERT_EQ(frames.size(), 10u);

  systems::PendulumSpec spec;
  spec.masses = {1.0, 2.0};
  spec.lengths = {1.0, 0.7};
  spec.angles = {0.5, 1.0};
  spec.angular_velocities = {0.0, 0.3};
  auto pendulum = systems::Pendulum::Create(spec, constraints::Method::kRattle, {}, 1e-3);
  ASSERT_TRUE(pendulum.ok()) << pendulum.status();
  for (int step = 1, f = 0; step <= 500; ++step) {
    ASSERT_TRUE(pendulum->Step().ok());
    if (step % 50 != 0) continue;
    const v1::PendulumFrame& frame = frames[f++];
    EXPECT_EQ(frame.step(), step);
    EXPECT_EQ(frame.time(), pendulum->time());
    const std::vector<double> angles = pendulum->Angles();
    const std::vector<double> rates = pendulum->AngularVelocities();
    ASSERT_EQ(frame.angles_size(), 2);
    ASSERT_EQ(frame.positions_size(), 3);
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(frame.angles(k), angles[k]);
      EXPECT_EQ(frame.angular_velocities(k), rates[k]);
    }
    for (int s = 0; s < 3; ++s) {
      EXPECT_EQ(frame.positions(s).x(), pendulum->positions()(0, s));
      EXPECT_EQ(frame.positions(s).y(), pendulum->positions()(1, s));
      EXPECT_EQ(frame.positions(s).z(), pendulum->positions()(2, s));
    }
    EXPECT_EQ(frame.total_energy(), pendulum->TotalEnergy());
  }
}

TEST_F(SimulationServiceTest, ShakeChainKeepsConstraintsWithinToleranceOnEveryFrame) {
  // A 10-link chain pinned at one end falling under gravity: max |r_ij - l| / l <= 1e-10 (the
  // requested tolerance, Bailey eq. 24) on every frame, recomputed here from the returned
  // positions (1e-14 allowed for the rounding of |r_ij| at |r| ~ 10); the reported figure is
  // that value (consistency, 1e-14), and the free end actually falls.
  v1::StepChainRequest request = HorizontalChain(10, v1::CONSTRAINT_METHOD_SHAKE);
  request.set_steps(2000);
  request.set_stride(20);
  std::vector<v1::ChainFrame> frames;
  grpc::Status status = StepChain(request, &frames);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(frames.size(), 100u);
  for (const v1::ChainFrame& frame : frames) {
    ASSERT_EQ(frame.positions_size(), 11);
    const double violation = ChainViolation(frame, 1.0);
    ASSERT_LE(violation, 1e-10 + 1e-14) << "step " << frame.step();
    EXPECT_NEAR(frame.max_relative_violation(), violation, 1e-14) << "step " << frame.step();
    EXPECT_GT(frame.iterations(), 0);
  }
  EXPECT_LT(frames.back().positions(10).y(), -1.0);
  EXPECT_EQ(frames.back().positions(0).x(), 0.0);  // the fixed site never moves
}

TEST_F(SimulationServiceTest, BrownianWalkIsDeterministicForASeed) {
  // Contract: the same seed reproduces the walk bit for bit, another seed does not; the bonds
  // (k, k + 1) of length 1 stay within the tolerance 1e-10 (Kramers chain, Vesely sec. VII C),
  // recomputed from the returned positions, and the walk has moved the sites.
  v1::StepChainRequest request;
  v1::GeneratedChain* chain = request.mutable_generated();
  chain->set_shape(v1::GeneratedChain::SHAPE_COIL);
  chain->set_num_sites(8);
  chain->set_link(1.0);
  chain->set_seed(3);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_AUTO);
  request.set_dt(0.01);
  request.set_steps(200);
  request.set_stride(50);
  request.mutable_brownian()->set_diffusion(0.01);
  request.mutable_brownian()->set_seed(7);

  std::vector<v1::ChainFrame> first, second, other;
  ASSERT_TRUE(StepChain(request, &first).ok());
  ASSERT_TRUE(StepChain(request, &second).ok());
  request.mutable_brownian()->set_seed(8);
  ASSERT_TRUE(StepChain(request, &other).ok());
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(second.size(), 4u);
  for (size_t k = 0; k < first.size(); ++k) {
    EXPECT_TRUE(MessageDifferencer::Equals(first[k], second[k])) << "frame " << k;
    ASSERT_EQ(first[k].positions_size(), 8);
    const double violation = ChainViolation(first[k], 1.0);
    EXPECT_LE(violation, 1e-10 + 1e-14) << "frame " << k;
    EXPECT_NEAR(first[k].max_relative_violation(), violation, 1e-14) << "frame " << k;
    EXPECT_EQ(first[k].velocities_size(), 0);
  }
  EXPECT_FALSE(MessageDifferencer::Equals(first.back(), other.back()));
  // The bonds are not trivially kept: the walks of seeds 7 and 8 end apart.
  double apart = 0.0;
  for (int s = 0; s < 8; ++s) {
    const v1::Vector3& a = first.back().positions(s);
    const v1::Vector3& b = other.back().positions(s);
    apart = std::max(apart, std::hypot(a.x() - b.x(), a.y() - b.y(), a.z() - b.z()));
  }
  EXPECT_GT(apart, 1e-3);
}

TEST_F(SimulationServiceTest, StateBeyondTheRangeOfDoublesEndsWithOutOfRange) {
  // Fuzzer finding (docs/fuzzing.md): a chain of 1.8e307 m links has sites far enough apart
  // that |r_ij| overflows; its frame would carry an infinite violation. No frame with a
  // non-finite figure is answered: OUT_OF_RANGE naming the step, every frame sent finite.
  v1::StepChainRequest request;
  v1::GeneratedChain* chain = request.mutable_generated();
  chain->set_shape(v1::GeneratedChain::SHAPE_COIL);
  chain->set_num_sites(12);
  chain->set_link(1.797693134862316e+307);
  chain->set_planar(true);
  chain->set_seed(3);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_AUTO);
  request.set_dt(0.001);
  request.set_steps(37);
  request.set_stride(5);
  request.mutable_brownian()->set_diffusion(0.01);
  request.mutable_brownian()->set_seed(5);
  std::vector<v1::ChainFrame> frames;
  const grpc::Status status = StepChain(request, &frames);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("beyond the range of doubles"));
  for (const v1::ChainFrame& frame : frames) {
    EXPECT_TRUE(std::isfinite(frame.max_relative_violation())) << "step " << frame.step();
    for (const v1::Vector3& p : frame.positions()) {
      EXPECT_TRUE(std::isfinite(p.x()) && std::isfinite(p.y()) && std::isfinite(p.z()))
          << "step " << frame.step();
    }
  }
}

TEST_F(SimulationServiceTest, StrideGivesStepsOverStrideFrames) {
  // Contract: a frame after every stride steps and after the last: ceil(steps / stride).
  std::vector<v1::PendulumFrame> frames;
  ASSERT_TRUE(StepPendulum(PendulumRequest({1}, {1}, {0.3}, {0}, v1::CONSTRAINT_METHOD_SHAKE,
                                           1e-3, 1000, 100),
                           &frames)
                  .ok());
  ASSERT_EQ(frames.size(), 10u);
  for (size_t k = 0; k < frames.size(); ++k) EXPECT_EQ(frames[k].step(), 100 * (k + 1));

  frames.clear();
  ASSERT_TRUE(StepPendulum(PendulumRequest({1}, {1}, {0.3}, {0}, v1::CONSTRAINT_METHOD_MILC_SHAKE,
                                           1e-3, 1001, 100),
                           &frames)
                  .ok());
  ASSERT_EQ(frames.size(), 11u);
  EXPECT_EQ(frames.back().step(), 1001);
}

TEST_F(SimulationServiceTest, BadConstraintIndexNamesTheField) {
  // Contract: INVALID_ARGUMENT with a BadRequest violation at the request path of the index.
  v1::StepChainRequest request = HorizontalChain(3, v1::CONSTRAINT_METHOD_SHAKE);
  request.set_steps(10);
  request.mutable_chain()->mutable_constraints(1)->set_i(7);
  std::vector<v1::ChainFrame> frames;
  grpc::Status status = StepChain(request, &frames);
  EXPECT_EQ(ViolatedField(status), "chain.constraints[1].i");
  EXPECT_THAT(status.error_message(), HasSubstr("[0, 4)"));
  EXPECT_TRUE(frames.empty());

  request = HorizontalChain(3, v1::CONSTRAINT_METHOD_SHAKE);
  request.set_steps(10);
  request.mutable_chain()->mutable_sites(2)->clear_inertia();
  EXPECT_EQ(ViolatedField(StepChain(request, &frames)), "chain.sites[2].mass");

  request = HorizontalChain(3, v1::CONSTRAINT_METHOD_UNSPECIFIED);
  request.set_steps(10);
  EXPECT_EQ(ViolatedField(StepChain(request, &frames)), "projection.method");

  // A branch at site 1 makes a tree: MILC SHAKE (chains and rings only) does not apply.
  request = HorizontalChain(3, v1::CONSTRAINT_METHOD_MILC_SHAKE);
  request.set_steps(10);
  v1::Site* branch = request.mutable_chain()->add_sites();
  *branch->mutable_position() = Vec(1, 1, 0);
  branch->set_mass(1.0);
  v1::DistanceConstraint* limb = request.mutable_chain()->add_constraints();
  limb->set_i(1);
  limb->set_j(4);
  limb->set_length(1.0);
  EXPECT_EQ(ViolatedField(StepChain(request, &frames)), "projection.method");
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_AUTO);
  EXPECT_TRUE(StepChain(request, &frames).ok());

  std::vector<v1::PendulumFrame> pendulum_frames;
  EXPECT_EQ(ViolatedField(StepPendulum(PendulumRequest({1, -2}, {1, 1}, {0, 0}, {0, 0},
                                                       v1::CONSTRAINT_METHOD_RATTLE, 1e-3, 10, 1),
                                       &pendulum_frames)),
            "masses[1]");
}

TEST_F(SimulationServiceTest, TooManyStepsNamesStepsAndItsBound) {
  // Contract: steps beyond the server limit (default 10000000) and frames beyond 100000.
  v1::StepChainRequest request = HorizontalChain(3, v1::CONSTRAINT_METHOD_SHAKE);
  request.set_steps(10'000'001);
  request.set_stride(1000);
  std::vector<v1::ChainFrame> frames;
  grpc::Status status = StepChain(request, &frames);
  EXPECT_EQ(ViolatedField(status), "steps");
  EXPECT_THAT(status.error_message(), HasSubstr("10000000"));

  request.set_steps(1'000'000);
  request.set_stride(1);
  status = StepChain(request, &frames);
  EXPECT_EQ(ViolatedField(status), "stride");
  EXPECT_THAT(status.error_message(), HasSubstr("100000"));
}

TEST_F(SimulationServiceTest, NonConvergenceMidRunEndsWithAbortedAfterTheFramesSent) {
  // Contract: SHAKE capped at 20 sweeps meets 1e-10 on the first steps of a falling 10-link
  // chain but not once it speeds up (its linear convergence slows): frames, then ABORTED naming
  // the failing step and the violation. Every frame sent meets 1e-10, recomputed from its
  // positions.
  v1::StepChainRequest request = HorizontalChain(10, v1::CONSTRAINT_METHOD_SHAKE);
  request.mutable_projection()->set_max_iterations(20);
  request.set_steps(100);
  std::vector<v1::ChainFrame> frames;
  grpc::Status status = StepChain(request, &frames);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ABORTED) << status.error_message();
  EXPECT_GE(frames.size(), 1u);
  EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("step ", frames.size() + 1, ":")));
  EXPECT_THAT(status.error_message(), HasSubstr("max relative violation"));
  for (const v1::ChainFrame& frame : frames) {
    ASSERT_EQ(frame.positions_size(), 11);
    const double violation = ChainViolation(frame, 1.0);
    EXPECT_LE(violation, 1e-10 + 1e-14) << "step " << frame.step();
    EXPECT_NEAR(frame.max_relative_violation(), violation, 1e-14) << "step " << frame.step();
  }
}

TEST_F(SimulationServiceTest, CancellationMidStreamEndsWithCancelledAndServerKeepsServing) {
  // Contract: TryCancel stops a long run (10^7 steps) at once; the next call is served.
  v1::StepChainRequest request = HorizontalChain(10, v1::CONSTRAINT_METHOD_RATTLE);
  request.set_steps(10'000'000);
  request.set_stride(100);
  grpc::ClientContext context;
  SetDeadline(context);
  auto reader = stub_->StepChain(&context, request);
  v1::ChainFrame frame;
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(reader->Read(&frame));
  const auto start = std::chrono::steady_clock::now();
  context.TryCancel();
  while (reader->Read(&frame)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

  std::vector<v1::PendulumFrame> frames;
  ASSERT_TRUE(StepPendulum(PendulumRequest({1}, {1}, {0.3}, {0}, v1::CONSTRAINT_METHOD_RATTLE,
                                           1e-3, 100, 10),
                           &frames)
                  .ok());
  EXPECT_EQ(frames.size(), 10u);
}

TEST_F(SimulationServiceTest, MotionOnEllipseAndSphereKeepsSigmaSmall) {
  // Vesely Table I/II: |sigma| / |grad sigma| <= tolerance x size (1e-12 x 2 on the ellipse,
  // 1e-12 x 1 on the sphere, plus rounding 1e-14) at every reported point, recomputed here from
  // the returned position (ellipse: sigma = (x/a)^2 + (y/b)^2 - 1 in the plane z = 0; sphere:
  // the exact distance ||r| - 1|), the reported distance agreeing to 1e-14; speed constant on
  // the ellipse to 1e-6 (constant-speed mode).
  v1::FollowShapeRequest request;
  request.mutable_curve()->set_type(v1::Curve::TYPE_ELLIPSE);
  request.mutable_curve()->set_a(2.0);
  request.mutable_curve()->set_b(1.0);
  *request.mutable_position() = Vec(2, 0, 0);
  *request.mutable_velocity() = Vec(0, 1, 0);
  request.set_mode(v1::FOLLOW_MODE_CONSTANT_SPEED);
  request.set_dt(1e-3);
  request.set_steps(5000);
  request.set_stride(100);
  v1::FollowShapeResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = stub_->FollowShape(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outcome(), v1::PROJECTION_OUTCOME_CONVERGED);
  EXPECT_EQ(response.steps_completed(), 5000);
  ASSERT_EQ(response.frames_size(), 51);
  for (const v1::ShapeFrame& frame : response.frames()) {
    const double x = frame.position().x(), y = frame.position().y(), a = 2.0, b = 1.0;
    const double sigma = (x / a) * (x / a) + (y / b) * (y / b) - 1.0;
    const double grad = std::hypot(2 * x / (a * a), 2 * y / (b * b));
    const double distance = std::hypot(sigma / grad, frame.position().z());
    EXPECT_LE(distance, 2e-12 + 1e-14) << "step " << frame.step();
    EXPECT_NEAR(frame.distance(), distance, 1e-14) << "step " << frame.step();
    if (!frame.has_velocity()) continue;
    const double speed = std::hypot(frame.velocity().x(), frame.velocity().y());
    EXPECT_NEAR(speed, 1.0, 1e-6) << "step " << frame.step();
  }
  EXPECT_FALSE(response.frames(0).has_velocity());
  EXPECT_FALSE(response.frames(50).has_velocity());

  v1::FollowShapeRequest sphere;
  sphere.mutable_surface()->set_type(v1::Surface::TYPE_SPHERE);
  sphere.mutable_surface()->set_r(1.0);
  *sphere.mutable_position() = Vec(1, 0, 0);
  *sphere.mutable_velocity() = Vec(0, 1, 0.5);
  *sphere.mutable_gravity() = Vec(0, 0, -9.81);
  sphere.set_mode(v1::FOLLOW_MODE_FREE_FLIGHT);
  sphere.set_dt(1e-3);
  sphere.set_steps(2000);
  sphere.set_stride(50);
  grpc::ClientContext sphere_context;
  SetDeadline(sphere_context);
  status = stub_->FollowShape(&sphere_context, sphere, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outcome(), v1::PROJECTION_OUTCOME_CONVERGED);
  ASSERT_EQ(response.frames_size(), 41);
  for (const v1::ShapeFrame& frame : response.frames()) {
    const v1::Vector3& p = frame.position();
    const double distance = std::abs(std::hypot(p.x(), p.y(), p.z()) - 1.0);
    EXPECT_LE(distance, 1e-12 + 1e-14) << "step " << frame.step();
    EXPECT_NEAR(frame.distance(), distance, 1e-14) << "step " << frame.step();
  }
}

TEST_F(SimulationServiceTest, ResponseMatrixOfAFreeDimer) {
  // Dimer along x, masses 1 and 3: N = W - W B^T B W / (w1 + w2) (thesis eq. 4.38): every
  // x-x entry 1/(m1 + m2) = 0.25 (rigid motion along the bond), y-y diagonal 1/m_i, y1-y2 0;
  // the projector E = I - B^T B / 2 has x-x entries +-0.5 (to 1e-15).
  v1::ResponseMatrixRequest request;
  v1::Site* a = request.mutable_system()->add_sites();
  *a->mutable_position() = Vec(0, 0, 0);
  a->set_mass(1.0);
  v1::Site* b = request.mutable_system()->add_sites();
  *b->mutable_position() = Vec(1.5, 0, 0);
  b->set_mass(3.0);
  v1::DistanceConstraint* c = request.mutable_system()->add_constraints();
  c->set_i(0);
  c->set_j(1);
  c->set_length(1.5);
  request.set_kind(v1::RESPONSE_KIND_MOBILITY);

  v1::ResponseMatrixResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = stub_->ResponseMatrix(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::Matrix& n = response.response();
  ASSERT_EQ(n.rows(), 6);
  ASSERT_EQ(n.cols(), 6);
  ASSERT_EQ(n.values_size(), 36);
  auto at = [&n](int r, int col) { return n.values(r * n.cols() + col); };
  for (int r : {0, 3}) {
    for (int col : {0, 3}) EXPECT_NEAR(at(r, col), 0.25, 1e-15);
  }
  EXPECT_NEAR(at(1, 1), 1.0, 1e-15);
  EXPECT_NEAR(at(4, 4), 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(at(1, 4), 0.0, 1e-15);
  EXPECT_EQ(response.isotropic().rows(), 2);

  request.set_kind(v1::RESPONSE_KIND_PROJECTOR);
  grpc::ClientContext projector_context;
  SetDeadline(projector_context);
  ASSERT_TRUE(stub_->ResponseMatrix(&projector_context, request, &response).ok());
  const v1::Matrix& e = response.response();
  EXPECT_NEAR(e.values(0 * 6 + 0), 0.5, 1e-15);
  EXPECT_NEAR(e.values(0 * 6 + 3), 0.5, 1e-15);
  EXPECT_NEAR(e.values(1 * 6 + 1), 1.0, 1e-15);

  request.mutable_system()->mutable_constraints(0)->set_j(0);
  grpc::ClientContext bad_context;
  SetDeadline(bad_context);
  EXPECT_EQ(ViolatedField(stub_->ResponseMatrix(&bad_context, request, &response)),
            "system.constraints[0].j");
}

}  // namespace
}  // namespace ikd::server
