// SimulationService requests -> validated solver set-ups, and solver results -> wire frames.
// Validation happens here, before any work is queued: every error is INVALID_ARGUMENT with a
// google.rpc.BadRequest field violation whose path is the request's (e.g.
// "chain.constraints[3].j", "potentials.bending.stiffness", "steps"). The solver's own checks
// (ConstraintModel::Create, PendulumSpec::Validate, MakeCurve, FollowOptions::Validate, ...) run
// here too, their messages mapped onto request paths with SolverFieldViolation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/integrators.h"
#include "ikd/constraints/model.h"
#include "ikd/constraints/potentials.h"
#include "ikd/constraints/types.h"
#include "ikd/systems/curves.h"
#include "ikd/systems/pendulum.h"
#include "ikd/systems/response.h"
#include "ikd/v1/simulation_service.pb.h"

namespace ikd::server {

// Bounds on SimulationService requests (beyond them: INVALID_ARGUMENT naming field and bound).
struct SimulationLimits {
  int max_sites = 100'000;          // StepChain sites (explicit or generated)
  int max_constraints = 400'000;    // StepChain constraints
  // Constraints on one site: bounds the matrix method's B W B^T (its non-zeros grow with the
  // square of a site's constraint count), which a few dense sites would otherwise blow up.
  int max_constraints_per_site = 64;
  // projection.max_iterations of StepChain and StepPendulum: corrections per step.
  int max_projection_iterations = 100'000;
  int64_t max_steps = 10'000'000;   // StepChain, StepPendulum
  int64_t max_frames = 100'000;     // frames of one stream (steps / stride, rounded up)
  int max_follow_steps = systems::FollowOptions::kMaxSteps;
  int max_follow_frames = 10'000;   // frames of one FollowShape response (one message)
  // ResponseMatrix sites: the answer holds (3 n)^2 doubles, 2.9 MB at 200 sites, under the
  // 4 MB a default gRPC client accepts.
  int max_response_sites = 200;
};

// Steps, output stride and frame count of a stream.
struct StreamPlan {
  double dt = 0.0;
  int64_t steps = 0;
  int64_t stride = 1;
};

struct BrownianPlan {
  double step_sigma = 0.0;  // sqrt(2 D dt) per coordinate
  bool planar = false;
  uint64_t seed = 0;
};

// Everything StepChain needs, validated. Held by pointer-stable members because the integrator
// keeps pointers to the model and the force field.
struct ChainSetup {
  std::unique_ptr<constraints::ConstraintModel> model;
  std::unique_ptr<constraints::ForceField> field;  // empty when no potential was given
  constraints::DynamicsState state;
  constraints::Method method = constraints::Method::kAuto;
  constraints::ProjectionOptions projection;
  StreamPlan plan;
  std::optional<BrownianPlan> brownian;
};

struct PendulumSetup {
  systems::PendulumSpec spec;
  constraints::Method method = constraints::Method::kAuto;
  constraints::ProjectionOptions projection;
  StreamPlan plan;
};

struct FollowSetup {
  std::unique_ptr<systems::ConstraintShape> shape;
  Eigen::Vector3d r0 = Eigen::Vector3d::Zero();
  Eigen::Vector3d v0 = Eigen::Vector3d::Zero();
  systems::FollowOptions options;
  int stride = 1;
};

struct ResponseSetup {
  v1::ResponseKind kind = v1::RESPONSE_KIND_UNSPECIFIED;
  Eigen::Matrix3Xd positions;
  Eigen::VectorXd inverse_masses;  // RESPONSE_KIND_MOBILITY only
  std::vector<constraints::DistanceConstraint> constraints;
  systems::ResponseOptions options;
};

absl::StatusOr<ChainSetup> ChainSetupFromProto(const v1::StepChainRequest& request,
                                               const SimulationLimits& limits);
absl::StatusOr<PendulumSetup> PendulumSetupFromProto(const v1::StepPendulumRequest& request,
                                                     const SimulationLimits& limits);
absl::StatusOr<FollowSetup> FollowSetupFromProto(const v1::FollowShapeRequest& request,
                                                 const SimulationLimits& limits);
absl::StatusOr<ResponseSetup> ResponseSetupFromProto(const v1::ResponseMatrixRequest& request,
                                                     const SimulationLimits& limits);

// FollowConstraint's field names (r0, v0, ...) as request paths (position, velocity, ...).
std::string FollowFieldPath(const std::string& field);

// Frames a stream sends: ceil(steps / stride).
int64_t FrameCount(const StreamPlan& plan);

// The frames of a (possibly shortened) motion: steps 0, stride, 2 stride, ... and the last
// completed one, with sigma and the distance from the shape at each; plus the run's outcome.
v1::FollowShapeResponse FollowResponse(const systems::ConstrainedMotion& motion,
                                       const systems::ConstraintShape& shape, int stride);

v1::ProjectionOutcome OutcomeToProto(constraints::ProjectionOutcome outcome);
// Row-major with its dimensions.
v1::Matrix MatrixToProto(const Eigen::MatrixXd& matrix);
// Columns of a 3 x n matrix as Vector3s.
void AppendColumns(const Eigen::Matrix3Xd& columns,
                   google::protobuf::RepeatedPtrField<v1::Vector3>* out);

}  // namespace ikd::server
