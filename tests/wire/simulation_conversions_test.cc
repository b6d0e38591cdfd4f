// SimulationService conversions (simulation_conversions.h): requests -> validated set-ups, checked
// through what the set-ups do (the model's masses and constraints, the force field's forces and
// energy, the shape's sigma), every SimulationLimits bound and the request paths of refusals;
// and solver results -> frames, matrices and outcomes.
#include "simulation_conversions.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/eigen_matchers.h"
#include "testing/field_violation.h"
#include "testing/proto_vector.h"

namespace ikd::server {
namespace {

using ::ikd::testing::Vec;
using ::ikd::testing::CompareMatrices;
using ::ikd::testing::IsFieldViolation;
using ::testing::ElementsAre;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

v1::Site* AddSite(v1::ChainSystem& system, const v1::Vector3& position, double mass) {
  v1::Site* site = system.add_sites();
  *site->mutable_position() = position;
  site->set_mass(mass);
  return site;
}

void AddConstraint(v1::ChainSystem& system, int i, int j, double length) {
  v1::DistanceConstraint* c = system.add_constraints();
  c->set_i(i);
  c->set_j(j);
  c->set_length(length);
}

// Three sites of 1 kg at (0, 0, 0), (1, 0, 0), (1, 1, 0) joined by two unit constraints:
// 1000 steps of 1 ms, AUTO projection.
v1::StepChainRequest Corner() {
  v1::StepChainRequest request;
  v1::ChainSystem* chain = request.mutable_chain();
  AddSite(*chain, Vec(0, 0, 0), 1.0);
  AddSite(*chain, Vec(1, 0, 0), 1.0);
  AddSite(*chain, Vec(1, 1, 0), 1.0);
  AddConstraint(*chain, 0, 1, 1.0);
  AddConstraint(*chain, 1, 2, 1.0);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_AUTO);
  request.set_dt(1e-3);
  request.set_steps(1000);
  return request;
}

absl::Status ChainStatus(const v1::StepChainRequest& request,
                         const SimulationLimits& limits = SimulationLimits()) {
  return ChainSetupFromProto(request, limits).status();
}

// ---------------------------------------------------------------------------------------------
// StepChain

// Masses, velocities, options and plan arrive; the field exerts m g on movable sites and the
// external forces, and gives U = -sum m g . r - sum f . r.
TEST(ChainSetupFromProtoTest, ExplicitChainArrivesWithItsForces) {
  v1::StepChainRequest request = Corner();
  v1::ChainSystem* chain = request.mutable_chain();
  chain->mutable_sites(0)->set_mass(2.0);
  *chain->mutable_sites(1)->mutable_velocity() = Vec(0, 0.5, 0);
  chain->mutable_sites(2)->set_inverse_mass(0.0);  // fixed
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_RATTLE);
  request.mutable_projection()->set_tolerance(1e-8);
  request.mutable_projection()->set_max_iterations(50);
  request.set_stride(300);
  *request.mutable_potentials()->mutable_gravity() = Vec(0, 0, -10);
  v1::SiteForce* push = request.mutable_potentials()->add_external_forces();
  push->set_site(1);
  *push->mutable_force() = Vec(1, 0, 0);
  *request.mutable_potentials()->add_external_forces() = *push;  // forces on one site add up

  const absl::StatusOr<ChainSetup> setup = ChainSetupFromProto(request, SimulationLimits());
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_EQ(setup->model->inverse_masses(), Eigen::Vector3d(0.5, 1.0, 0.0));
  ASSERT_EQ(setup->model->constraints().size(), 2u);
  EXPECT_EQ(setup->model->constraints()[1].i, 1);
  EXPECT_EQ(setup->model->constraints()[1].j, 2);
  EXPECT_EQ(setup->model->constraints()[1].length, 1.0);
  EXPECT_EQ(setup->state.positions.col(2), Eigen::Vector3d(1, 1, 0));
  EXPECT_EQ(setup->state.velocities.col(1), Eigen::Vector3d(0, 0.5, 0));
  EXPECT_EQ(setup->state.velocities.col(0), Eigen::Vector3d::Zero());
  EXPECT_EQ(setup->method, constraints::Method::kRattle);
  EXPECT_EQ(setup->projection.tolerance, 1e-8);
  EXPECT_EQ(setup->projection.max_iterations, 50);
  EXPECT_EQ(setup->plan.dt, 1e-3);
  EXPECT_EQ(setup->plan.steps, 1000);
  EXPECT_EQ(setup->plan.stride, 300);
  EXPECT_FALSE(setup->brownian.has_value());

  ASSERT_NE(setup->field, nullptr);
  Eigen::Matrix3Xd positions(3, 3);
  positions << 0, 1, 1,  //
      0, 0, 1,           //
      1, 2, 3;           // heights 1, 2, 3 m
  Eigen::Matrix3Xd forces;
  const double energy = setup->field->Evaluate(positions, forces);
  Eigen::Matrix3Xd expected(3, 3);
  expected << 0, 2, 0,  //
      0, 0, 0,          //
      -20, -10, 0;
  EXPECT_TRUE(CompareMatrices(forces, expected, 1e-12));
  EXPECT_NEAR(energy, 2 * 10 * 1 + 1 * 10 * 2 - 2 * 1, 1e-12);
}

// Zero settings are the solver's defaults; stride 0 is 1.
TEST(ChainSetupFromProtoTest, ZeroSettingsAreTheDefaults) {
  const absl::StatusOr<ChainSetup> setup = ChainSetupFromProto(Corner(), SimulationLimits());
  ASSERT_TRUE(setup.ok()) << setup.status();
  const constraints::ProjectionOptions defaults;
  EXPECT_EQ(setup->method, constraints::Method::kAuto);
  EXPECT_EQ(setup->projection.tolerance, defaults.tolerance);
  EXPECT_EQ(setup->projection.max_iterations, defaults.max_iterations);
  EXPECT_EQ(setup->plan.stride, 1);
  ASSERT_NE(setup->field, nullptr);
  EXPECT_TRUE(setup->field->empty());
}

// Generated chains: exact links along x, a ring closed by one more constraint, fixed sites.
TEST(ChainSetupFromProtoTest, GeneratedChainsHaveExactLinksAndFixedSites) {
  v1::StepChainRequest request = Corner();
  v1::GeneratedChain* g = request.mutable_generated();  // replaces the explicit chain
  g->set_shape(v1::GeneratedChain::SHAPE_STRAIGHT);
  g->set_num_sites(4);
  g->set_link(0.5);
  g->set_mass(4.0);
  g->add_fixed_sites(0);
  const absl::StatusOr<ChainSetup> straight = ChainSetupFromProto(request, SimulationLimits());
  ASSERT_TRUE(straight.ok()) << straight.status();
  Eigen::Matrix3Xd on_x = Eigen::Matrix3Xd::Zero(3, 4);
  on_x.row(0) << 0, 0.5, 1.0, 1.5;
  EXPECT_TRUE(CompareMatrices(straight->state.positions, on_x, 1e-15));
  EXPECT_EQ(straight->model->inverse_masses(), Eigen::Vector4d(0, 0.25, 0.25, 0.25));
  EXPECT_EQ(straight->model->constraints().size(), 3u);

  g->set_shape(v1::GeneratedChain::SHAPE_RING);
  g->set_num_sites(5);
  g->clear_fixed_sites();
  const absl::StatusOr<ChainSetup> ring = ChainSetupFromProto(request, SimulationLimits());
  ASSERT_TRUE(ring.ok()) << ring.status();
  ASSERT_EQ(ring->model->constraints().size(), 5u);
  for (const constraints::DistanceConstraint& c : ring->model->constraints()) {
    const double r = (ring->state.positions.col(c.i) - ring->state.positions.col(c.j)).norm();
    EXPECT_NEAR(r, 0.5, 1e-12) << c.i << "-" << c.j;
  }
}

// Brownian: sigma = sqrt(2 D dt) per coordinate, no force field; never with potentials.
TEST(ChainSetupFromProtoTest, BrownianWalkPlan) {
  v1::StepChainRequest request = Corner();
  request.set_dt(0.01);
  request.mutable_brownian()->set_diffusion(0.5);
  request.mutable_brownian()->set_planar(true);
  request.mutable_brownian()->set_seed(42);
  const absl::StatusOr<ChainSetup> setup = ChainSetupFromProto(request, SimulationLimits());
  ASSERT_TRUE(setup.ok()) << setup.status();
  ASSERT_TRUE(setup->brownian.has_value());
  EXPECT_NEAR(setup->brownian->step_sigma, 0.1, 1e-15);
  EXPECT_TRUE(setup->brownian->planar);
  EXPECT_EQ(setup->brownian->seed, 42u);
  EXPECT_EQ(setup->field, nullptr);

  request.mutable_brownian()->set_diffusion(0.0);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(request), "brownian.diffusion",
                               "must be finite and > 0, got 0"));
  request.mutable_brownian()->set_diffusion(0.5);
  *request.mutable_potentials()->mutable_gravity() = Vec(0, 0, -9.81);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(request), "potentials", "must be absent with brownian"));
}

// SimulationLimits: max_sites, max_constraints, max_constraints_per_site, max_steps, max_frames,
// max_projection_iterations; each at the bound accepted, beyond it refused.
TEST(ChainSetupFromProtoTest, EveryLimitIsABound) {
  SimulationLimits limits;
  limits.max_sites = 3;
  limits.max_constraints = 2;
  limits.max_constraints_per_site = 2;
  limits.max_steps = 1000;
  limits.max_frames = 10;
  limits.max_projection_iterations = 50;
  v1::StepChainRequest request = Corner();
  request.set_stride(100);  // 10 frames
  request.mutable_projection()->set_max_iterations(50);
  ASSERT_TRUE(ChainStatus(request, limits).ok()) << ChainStatus(request, limits);

  v1::StepChainRequest sites = request;
  AddSite(*sites.mutable_chain(), Vec(2, 2, 0), 1.0);
  EXPECT_TRUE(
      IsFieldViolation(ChainStatus(sites, limits), "chain.sites", "must hold 1 to 3 sites, got 4"));
  v1::StepChainRequest count = request;
  AddConstraint(*count.mutable_chain(), 0, 2, std::sqrt(2.0));
  EXPECT_TRUE(IsFieldViolation(ChainStatus(count, limits), "chain.constraints",
                               "at most 2 constraints, got 3"));
  limits.max_constraints = 3;
  limits.max_constraints_per_site = 1;  // site 1 has two
  EXPECT_TRUE(IsFieldViolation(ChainStatus(request, limits), "chain.constraints[1]",
                               "site 1 would have more than 1 constraints"));
  limits.max_constraints_per_site = 2;

  v1::StepChainRequest steps = request;
  steps.set_steps(1001);
  EXPECT_TRUE(
      IsFieldViolation(ChainStatus(steps, limits), "steps", "must be in [1, 1000], got 1001"));
  v1::StepChainRequest frames = request;
  frames.set_stride(99);  // ceil(1000 / 99) = 11 frames
  EXPECT_TRUE(IsFieldViolation(ChainStatus(frames, limits), "stride",
                               "gives 11 frames (steps / stride, rounded up); at most 10"));
  v1::StepChainRequest iterations = request;
  iterations.mutable_projection()->set_max_iterations(51);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(iterations, limits), "projection.max_iterations",
                               "at most 50 (--max_projection_iterations), got 51"));
}

TEST(ChainSetupFromProtoTest, BadSitesNameTheSite) {
  struct Case {
    std::string field;
    std::string bound;
    void (*set)(v1::ChainSystem&);
  };
  const Case cases[] = {
      {"chain.sites", "must hold 1 to 100000 sites, got 0",
       [](v1::ChainSystem& c) {
         c.clear_sites();
         c.clear_constraints();
       }},
      {"chain.sites[1].position", "is required",
       [](v1::ChainSystem& c) { c.mutable_sites(1)->clear_position(); }},
      {"chain.sites[2].position", "must be finite",
       [](v1::ChainSystem& c) { c.mutable_sites(2)->mutable_position()->set_z(kNaN); }},
      {"chain.sites[0].velocity", "must be finite",
       [](v1::ChainSystem& c) { *c.mutable_sites(0)->mutable_velocity() = Vec(kInf, 0, 0); }},
      {"chain.sites[1].mass", "must be finite and > 0, got 0",
       [](v1::ChainSystem& c) { c.mutable_sites(1)->set_mass(0.0); }},
      {"chain.sites[1].inverse_mass", "must be finite and >= 0 (0 = fixed), got -1",
       [](v1::ChainSystem& c) { c.mutable_sites(1)->set_inverse_mass(-1.0); }},
      {"chain.sites[2].mass", "set mass (> 0) or inverse_mass (>= 0, 0 = fixed)",
       [](v1::ChainSystem& c) { c.mutable_sites(2)->clear_inertia(); }},
  };
  for (const Case& c : cases) {
    v1::StepChainRequest request = Corner();
    c.set(*request.mutable_chain());
    EXPECT_TRUE(IsFieldViolation(ChainStatus(request), c.field, c.bound)) << c.field;
  }
}

TEST(ChainSetupFromProtoTest, BadConstraintsNameTheConstraint) {
  struct Case {
    std::string field;
    std::string bound;
    void (*set)(v1::ChainSystem&);
  };
  const Case cases[] = {
      {"chain.constraints[1].i", "site index must be in [0, 3), got -1",
       [](v1::ChainSystem& c) { c.mutable_constraints(1)->set_i(-1); }},
      {"chain.constraints[0].j", "site index must be in [0, 3), got 3",
       [](v1::ChainSystem& c) { c.mutable_constraints(0)->set_j(3); }},
      {"chain.constraints[1].j", "must differ from i (1)",
       [](v1::ChainSystem& c) { c.mutable_constraints(1)->set_j(1); }},
      {"chain.constraints[0].length", "must be finite and > 0, got inf",
       [](v1::ChainSystem& c) { c.mutable_constraints(0)->set_length(kInf); }},
      // The solver's checks, named at the request path.
      {"chain.constraints[1]", "duplicate constraint on sites (1, 0)",
       [](v1::ChainSystem& c) {
         c.mutable_constraints(1)->set_i(1);
         c.mutable_constraints(1)->set_j(0);
       }},
      {"chain.constraints[0]", "joins fixed sites 0 and 1",
       [](v1::ChainSystem& c) {
         c.mutable_sites(0)->set_inverse_mass(0.0);
         c.mutable_sites(1)->set_inverse_mass(0.0);
         c.mutable_constraints(0)->set_length(2.0);  // they are 1 m apart
       }},
  };
  for (const Case& c : cases) {
    v1::StepChainRequest request = Corner();
    c.set(*request.mutable_chain());
    EXPECT_TRUE(IsFieldViolation(ChainStatus(request), c.field, c.bound)) << c.field;
  }
}

TEST(ChainSetupFromProtoTest, BadPlanProjectionAndSystemNameTheirField) {
  v1::StepChainRequest none = Corner();
  none.clear_chain();
  EXPECT_TRUE(IsFieldViolation(ChainStatus(none), "system", "set chain or generated"));

  v1::StepChainRequest method = Corner();
  method.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_UNSPECIFIED);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(method), "projection.method",
                               "must be one of SHAKE, RATTLE, MILC_SHAKE, MATRIX, AUTO"));
  v1::StepChainRequest tolerance = Corner();
  tolerance.mutable_projection()->set_tolerance(0.5);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(tolerance), "projection.tolerance",
                               "must be in [1e-15, 0.1], got 0.5"));
  v1::StepChainRequest dt = Corner();
  dt.set_dt(-1e-3);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(dt), "dt", "must be finite and > 0"));
  v1::StepChainRequest steps = Corner();
  steps.set_steps(0);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(steps), "steps", "must be in [1, 10000000], got 0"));
  v1::StepChainRequest stride = Corner();
  stride.set_stride(-1);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(stride), "stride", "must be >= 0, got -1"));

  // MILC SHAKE needs chains or rings: a star of three constraints is neither.
  v1::StepChainRequest star = Corner();
  AddSite(*star.mutable_chain(), Vec(1, -1, 0), 1.0);
  AddConstraint(*star.mutable_chain(), 1, 3, 1.0);
  star.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_MILC_SHAKE);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(star), "projection.method",
                               "MILC_SHAKE needs every constraint component to be an open chain"));
  star.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_MATRIX);
  EXPECT_TRUE(ChainStatus(star).ok());
}

TEST(ChainSetupFromProtoTest, BadGeneratedChainsNameTheirField) {
  struct Case {
    std::string field;
    std::string bound;
    void (*set)(v1::GeneratedChain&);
  };
  const Case cases[] = {
      {"generated.num_sites", "must be in [3, 100000], got 2",
       [](v1::GeneratedChain& g) {
         g.set_shape(v1::GeneratedChain::SHAPE_RING);
         g.set_num_sites(2);
       }},
      {"generated.num_sites", "must be in [2, 100000], got 1",
       [](v1::GeneratedChain& g) { g.set_num_sites(1); }},
      {"generated.link", "must be finite and > 0, got 0",
       [](v1::GeneratedChain& g) { g.set_link(0.0); }},
      {"generated.mass", "must be finite and > 0, got -1",
       [](v1::GeneratedChain& g) { g.set_mass(-1.0); }},
      {"generated.shape", "must be one of STRAIGHT, HELIX, RING, COIL",
       [](v1::GeneratedChain& g) { g.set_shape(v1::GeneratedChain::SHAPE_UNSPECIFIED); }},
      {"generated.radius", "radius and link must be finite and > 0",
       [](v1::GeneratedChain& g) { g.set_shape(v1::GeneratedChain::SHAPE_HELIX); }},
      {"generated.fixed_sites[1]", "must be in [0, 4), got 4",
       [](v1::GeneratedChain& g) {
         g.add_fixed_sites(0);
         g.add_fixed_sites(4);
       }},
  };
  for (const Case& c : cases) {
    v1::StepChainRequest request = Corner();
    v1::GeneratedChain* g = request.mutable_generated();
    g->set_shape(v1::GeneratedChain::SHAPE_STRAIGHT);
    g->set_num_sites(4);
    g->set_link(1.0);
    c.set(*g);
    EXPECT_TRUE(IsFieldViolation(ChainStatus(request), c.field, c.bound)) << c.field;
  }
}

// Bending: (A l / 2) sum theta^2 over every consecutive triple by default; the corner's right
// angle at site 1 gives (2 x 1 / 2) (pi / 2)^2.
TEST(ChainSetupFromProtoTest, BendingOverConsecutiveTriplesAndItsErrors) {
  v1::StepChainRequest request = Corner();
  v1::Bending* bending = request.mutable_potentials()->mutable_bending();
  bending->set_stiffness(2.0);
  bending->set_segment_length(1.0);
  const absl::StatusOr<ChainSetup> setup = ChainSetupFromProto(request, SimulationLimits());
  ASSERT_TRUE(setup.ok()) << setup.status();
  Eigen::Matrix3Xd forces;
  EXPECT_NEAR(setup->field->Evaluate(setup->state.positions, forces),
              std::pow(std::numbers::pi / 2, 2), 1e-12);

  v1::StepChainRequest stiffness = request;
  stiffness.mutable_potentials()->mutable_bending()->set_stiffness(-1.0);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(stiffness), "potentials.bending.stiffness",
                               "must be finite and >= 0, got -1"));
  v1::StepChainRequest triple = request;
  v1::SiteTriple* t = triple.mutable_potentials()->mutable_bending()->add_triples();
  t->set_a(0);
  t->set_b(1);
  t->set_c(3);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(triple), "potentials.bending.triples[0]",
                               "site indices must be in [0, 3), got 3"));
  t->set_c(0);
  EXPECT_TRUE(
      IsFieldViolation(ChainStatus(triple), "potentials.bending.triples[0]", "three distinct"));
  v1::StepChainRequest short_chain = request;
  short_chain.mutable_chain()->mutable_sites()->RemoveLast();
  short_chain.mutable_chain()->mutable_constraints()->RemoveLast();
  EXPECT_TRUE(
      IsFieldViolation(ChainStatus(short_chain), "potentials.bending", "needs at least 3 sites"));
}

TEST(ChainSetupFromProtoTest, BadGravityAndForcesNameTheirField) {
  v1::StepChainRequest gravity = Corner();
  *gravity.mutable_potentials()->mutable_gravity() = Vec(0, kNaN, 0);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(gravity), "potentials.gravity", "must be finite"));

  v1::StepChainRequest site = Corner();
  site.mutable_potentials()->add_external_forces()->set_site(0);
  site.mutable_potentials()->add_external_forces()->set_site(3);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(site), "potentials.external_forces[1].site",
                               "must be in [0, 3), got 3"));
  v1::StepChainRequest force = Corner();
  *force.mutable_potentials()->add_external_forces()->mutable_force() = Vec(0, 0, -kInf);
  EXPECT_TRUE(IsFieldViolation(ChainStatus(force), "potentials.external_forces[0].force",
                               "must be finite"));
}

// ---------------------------------------------------------------------------------------------
// StepPendulum

v1::StepPendulumRequest DoublePendulum() {
  v1::StepPendulumRequest request;
  request.set_planar(true);
  for (const double m : {1.0, 2.0}) request.add_masses(m);
  for (const double l : {1.0, 0.5}) request.add_lengths(l);
  for (const double a : {0.1, 0.2}) request.add_angles(a);
  for (const double w : {0.0, -1.0}) request.add_angular_velocities(w);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_SHAKE);
  request.set_dt(1e-3);
  request.set_steps(100);
  request.set_stride(10);
  return request;
}

TEST(PendulumSetupFromProtoTest, SpecArrivesGravityDefaultsTo981) {
  const absl::StatusOr<PendulumSetup> setup =
      PendulumSetupFromProto(DoublePendulum(), SimulationLimits());
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_TRUE(setup->spec.planar);
  EXPECT_THAT(setup->spec.masses, ElementsAre(1.0, 2.0));
  EXPECT_THAT(setup->spec.lengths, ElementsAre(1.0, 0.5));
  EXPECT_THAT(setup->spec.angles, ElementsAre(0.1, 0.2));
  EXPECT_THAT(setup->spec.angular_velocities, ElementsAre(0.0, -1.0));
  EXPECT_EQ(setup->spec.gravity, 9.81);
  EXPECT_EQ(setup->method, constraints::Method::kShake);
  EXPECT_EQ(setup->plan.steps, 100);
  EXPECT_EQ(setup->plan.stride, 10);

  v1::StepPendulumRequest weightless = DoublePendulum();
  weightless.set_gravity(0.0);  // present: zero, not the default
  EXPECT_EQ(PendulumSetupFromProto(weightless, SimulationLimits())->spec.gravity, 0.0);
}

TEST(PendulumSetupFromProtoTest, BadSpecsPlansAndProjectionsNameTheirField) {
  struct Case {
    std::string field;
    std::string bound;
    void (*set)(v1::StepPendulumRequest&);
  };
  const Case cases[] = {
      {"masses", "between 1 and 10000 bobs, got 0",
       [](v1::StepPendulumRequest& r) { r.clear_masses(); }},
      {"masses[1]", "must be finite and > 0, got 0",
       [](v1::StepPendulumRequest& r) { r.set_masses(1, 0.0); }},
      {"lengths", "must hold 2 values", [](v1::StepPendulumRequest& r) { r.add_lengths(1.0); }},
      {"angles", "must hold 4 values", [](v1::StepPendulumRequest& r) { r.set_planar(false); }},
      {"angular_velocities[0]", "must be finite",
       [](v1::StepPendulumRequest& r) { r.set_angular_velocities(0, kNaN); }},
      {"gravity", "must be finite and >= 0, got -1",
       [](v1::StepPendulumRequest& r) { r.set_gravity(-1.0); }},
      {"projection.method", "must be one of",
       [](v1::StepPendulumRequest& r) { r.clear_projection(); }},
      {"projection.max_iterations", "at most 100000 (--max_projection_iterations)",
       [](v1::StepPendulumRequest& r) { r.mutable_projection()->set_max_iterations(100001); }},
      {"dt", "must be finite and > 0, got inf", [](v1::StepPendulumRequest& r) { r.set_dt(kInf); }},
      {"steps", "must be in [1, 10000000], got 10000001",
       [](v1::StepPendulumRequest& r) { r.set_steps(10'000'001); }},
      {"stride", "at most 100000 per stream",
       [](v1::StepPendulumRequest& r) {
         r.set_steps(1'000'000);
         r.set_stride(9);
       }},
  };
  for (const Case& c : cases) {
    v1::StepPendulumRequest request = DoublePendulum();
    c.set(request);
    EXPECT_TRUE(IsFieldViolation(PendulumSetupFromProto(request, SimulationLimits()).status(),
                                 c.field, c.bound))
        << c.field;
  }
}

// ---------------------------------------------------------------------------------------------
// FollowShape

// An ellipse (x/2)^2 + y^2 - 1 from (2, 0, 0), 100 steps of 1 ms, a frame every 10.
v1::FollowShapeRequest OnEllipse() {
  v1::FollowShapeRequest request;
  request.mutable_curve()->set_type(v1::Curve::TYPE_ELLIPSE);
  request.mutable_curve()->set_a(2.0);
  request.mutable_curve()->set_b(1.0);
  *request.mutable_position() = Vec(2, 0, 0);
  *request.mutable_velocity() = Vec(0, 1, 0);
  request.set_mode(v1::FOLLOW_MODE_FREE_FLIGHT);
  request.set_dt(1e-3);
  request.set_steps(100);
  request.set_stride(10);
  return request;
}

TEST(FollowSetupFromProtoTest, CurveStartAndOptionsArrive) {
  v1::FollowShapeRequest request = OnEllipse();
  *request.mutable_gravity() = Vec(0, -9.81, 0);
  request.set_tolerance(1e-10);
  request.set_max_iterations(50);
  request.set_start_tolerance(0.0);  // present: zero, not the default
  const absl::StatusOr<FollowSetup> setup = FollowSetupFromProto(request, SimulationLimits());
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_TRUE(setup->shape->planar());
  EXPECT_EQ(setup->shape->Sigma(Eigen::Vector3d(2, 0, 0)), 0.0);  // on the ellipse
  EXPECT_EQ(setup->shape->Sigma(Eigen::Vector3d(0, -1, 5)), 0.0);
  EXPECT_NE(setup->shape->Sigma(Eigen::Vector3d(1, 0, 0)), 0.0);
  EXPECT_EQ(setup->r0, Eigen::Vector3d(2, 0, 0));
  EXPECT_EQ(setup->v0, Eigen::Vector3d(0, 1, 0));
  EXPECT_EQ(setup->options.mode, systems::FollowMode::kFreeFlight);
  EXPECT_EQ(setup->options.gravity, Eigen::Vector3d(0, -9.81, 0));
  EXPECT_EQ(setup->options.dt, 1e-3);
  EXPECT_EQ(setup->options.steps, 100);
  EXPECT_EQ(setup->options.tolerance, 1e-10);
  EXPECT_EQ(setup->options.max_iterations, 50);
  EXPECT_EQ(setup->options.start_tolerance, 0.0);
  EXPECT_EQ(setup->stride, 10);
}

// Zero tolerance, iterations and stride, and an absent start_tolerance, are the defaults.
TEST(FollowSetupFromProtoTest, SurfaceWithDefaults) {
  v1::FollowShapeRequest request = OnEllipse();
  request.mutable_surface()->set_type(v1::Surface::TYPE_SPHERE);
  request.mutable_surface()->set_r(2.0);
  request.set_mode(v1::FOLLOW_MODE_CONSTANT_SPEED);
  request.set_stride(0);
  const absl::StatusOr<FollowSetup> setup = FollowSetupFromProto(request, SimulationLimits());
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_FALSE(setup->shape->planar());
  EXPECT_EQ(setup->shape->Sigma(Eigen::Vector3d(0, 0, 2)), 0.0);
  EXPECT_NE(setup->shape->Sigma(Eigen::Vector3d(0, 0, 1)), 0.0);
  EXPECT_EQ(setup->options.mode, systems::FollowMode::kConstantSpeed);
  const systems::FollowOptions defaults;
  EXPECT_EQ(setup->options.tolerance, defaults.tolerance);
  EXPECT_EQ(setup->options.max_iterations, defaults.max_iterations);
  EXPECT_EQ(setup->options.start_tolerance, defaults.start_tolerance);
  EXPECT_EQ(setup->stride, 1);
}

TEST(FollowSetupFromProtoTest, BadRequestsNameTheirField) {
  struct Case {
    std::string field;
    std::string bound;
    void (*set)(v1::FollowShapeRequest&);
  };
  const Case cases[] = {
      {"shape", "set curve or surface", [](v1::FollowShapeRequest& r) { r.clear_curve(); }},
      {"curve.type", "must be PARABOLA, ELLIPSE",
       [](v1::FollowShapeRequest& r) { r.mutable_curve()->set_type(v1::Curve::TYPE_UNSPECIFIED); }},
      {"curve.b", "must be finite and > 0, got 0",
       [](v1::FollowShapeRequest& r) { r.mutable_curve()->set_b(0.0); }},
      {"curve.n", "must be finite and > 1, got 1",
       [](v1::FollowShapeRequest& r) {
         r.mutable_curve()->set_type(v1::Curve::TYPE_SUPERELLIPSE);
         r.mutable_curve()->set_n(1.0);
       }},
      {"surface.type", "must be SPHERE, PARABOLOID",
       [](v1::FollowShapeRequest& r) { r.mutable_surface(); }},
      {"surface.c", "must be finite and > 0, got 0",
       [](v1::FollowShapeRequest& r) {
         r.mutable_surface()->set_type(v1::Surface::TYPE_HYPERBOLOID);
         r.mutable_surface()->set_a(1.0);
       }},
      {"mode", "must be FREE_FLIGHT or CONSTANT_SPEED",
       [](v1::FollowShapeRequest& r) { r.set_mode(v1::FOLLOW_MODE_UNSPECIFIED); }},
      {"steps", "must be in [1, 1000000], got 0",
       [](v1::FollowShapeRequest& r) { r.set_steps(0); }},
      {"stride", "must be >= 0, got -2", [](v1::FollowShapeRequest& r) { r.set_stride(-2); }},
      {"dt", "must be finite and > 0, got 0", [](v1::FollowShapeRequest& r) { r.set_dt(0.0); }},
      {"tolerance", "must be in [1e-15, 0.1], got 1",
       [](v1::FollowShapeRequest& r) { r.set_tolerance(1.0); }},
      {"max_iterations", "must be in [1, 10000], got 20000",
       [](v1::FollowShapeRequest& r) { r.set_max_iterations(20000); }},
      {"start_tolerance", "must be in [0, 0.1], got 0.5",
       [](v1::FollowShapeRequest& r) { r.set_start_tolerance(0.5); }},
      {"gravity", "must be finite",
       [](v1::FollowShapeRequest& r) { r.mutable_gravity()->set_x(kNaN); }},
      {"position", "every component must be finite",
       [](v1::FollowShapeRequest& r) { r.mutable_position()->set_y(kInf); }},
      {"velocity", "every component must be finite",
       [](v1::FollowShapeRequest& r) { r.mutable_velocity()->set_z(kNaN); }},
  };
  for (const Case& c : cases) {
    v1::FollowShapeRequest request = OnEllipse();
    c.set(request);
    EXPECT_TRUE(IsFieldViolation(FollowSetupFromProto(request, SimulationLimits()).status(),
                                 c.field, c.bound))
        << c.field;
  }
}

// max_follow_steps and max_follow_frames (points 0, stride, ..., and the last).
TEST(FollowSetupFromProtoTest, StepAndFrameLimitsAreBounds) {
  SimulationLimits limits;
  limits.max_follow_steps = 100;
  limits.max_follow_frames = 10;
  v1::FollowShapeRequest request = OnEllipse();
  request.set_stride(12);  // 0, 12, ..., 96, 100: 10 frames
  EXPECT_TRUE(FollowSetupFromProto(request, limits).ok());
  request.set_stride(11);  // 0, 11, ..., 99, 100: 11 frames
  EXPECT_TRUE(IsFieldViolation(FollowSetupFromProto(request, limits).status(), "stride",
                               "gives 11 frames; at most 10"));
  request.set_stride(12);
  request.set_steps(101);
  EXPECT_TRUE(IsFieldViolation(FollowSetupFromProto(request, limits).status(), "steps",
                               "must be in [1, 100], got 101"));
}

TEST(FollowFieldPathTest, StartFieldsAreTheRequestsPositionAndVelocity) {
  EXPECT_EQ(FollowFieldPath("r0"), "position");
  EXPECT_EQ(FollowFieldPath("v0"), "velocity");
  EXPECT_EQ(FollowFieldPath("v0.z"), "velocity.z");  // a member keeps its name
  EXPECT_EQ(FollowFieldPath("dt"), "dt");
  EXPECT_EQ(FollowFieldPath("start_tolerance"), "start_tolerance");
}

// ---------------------------------------------------------------------------------------------
// ResponseMatrix

v1::ResponseMatrixRequest Triangle(v1::ResponseKind kind) {
  v1::ResponseMatrixRequest request;
  request.set_kind(kind);
  v1::ChainSystem* system = request.mutable_system();
  for (const v1::Vector3& p : {Vec(0, 0, 0), Vec(1, 0, 0), Vec(0, 1, 0)}) {
    *system->add_sites()->mutable_position() = p;
  }
  AddConstraint(*system, 0, 1, 1.0);
  AddConstraint(*system, 0, 2, 1.0);
  return request;
}

// A projector ignores inertia (unit where unset); a mobility matrix needs it.
TEST(ResponseSetupFromProtoTest, ProjectorIgnoresInertiaMobilityNeedsIt) {
  const absl::StatusOr<ResponseSetup> projector =
      ResponseSetupFromProto(Triangle(v1::RESPONSE_KIND_PROJECTOR), SimulationLimits());
  ASSERT_TRUE(projector.ok()) << projector.status();
  EXPECT_EQ(projector->kind, v1::RESPONSE_KIND_PROJECTOR);
  EXPECT_EQ(projector->positions.col(2), Eigen::Vector3d(0, 1, 0));
  ASSERT_EQ(projector->constraints.size(), 2u);
  EXPECT_EQ(projector->constraints[1].j, 2);
  EXPECT_EQ(projector->options.dimension, 3);
  EXPECT_EQ(projector->options.rank_tolerance, systems::ResponseOptions().rank_tolerance);

  v1::ResponseMatrixRequest mobility = Triangle(v1::RESPONSE_KIND_MOBILITY);
  EXPECT_TRUE(IsFieldViolation(ResponseSetupFromProto(mobility, SimulationLimits()).status(),
                               "system.sites[0].mass", "set mass"));
  for (int k = 0; k < 3; ++k) mobility.mutable_system()->mutable_sites(k)->set_mass(k + 1.0);
  mobility.mutable_system()->mutable_sites(1)->set_inverse_mass(0.0);
  mobility.set_dimension(2);
  mobility.set_rank_tolerance(1e-6);
  const absl::StatusOr<ResponseSetup> setup = ResponseSetupFromProto(mobility, SimulationLimits());
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_EQ(setup->inverse_masses, Eigen::Vector3d(1.0, 0.0, 1.0 / 3.0));
  EXPECT_EQ(setup->options.dimension, 2);
  EXPECT_EQ(setup->options.rank_tolerance, 1e-6);
}

// max_response_sites bounds the sites and (3 x) the constraints.
TEST(ResponseSetupFromProtoTest, BadRequestsAndLimitsNameTheirField) {
  SimulationLimits limits;
  limits.max_response_sites = 3;
  const v1::ResponseMatrixRequest triangle = Triangle(v1::RESPONSE_KIND_PROJECTOR);
  EXPECT_TRUE(ResponseSetupFromProto(triangle, limits).ok());

  v1::ResponseMatrixRequest sites = triangle;
  *sites.mutable_system()->add_sites()->mutable_position() = Vec(1, 1, 0);
  EXPECT_TRUE(IsFieldViolation(ResponseSetupFromProto(sites, limits).status(), "system.sites",
                               "must hold 1 to 3 sites, got 4"));
  v1::ResponseMatrixRequest constraints = triangle;
  for (int k = 0; k < 8; ++k) AddConstraint(*constraints.mutable_system(), 1, 2, 1.0);
  EXPECT_TRUE(IsFieldViolation(ResponseSetupFromProto(constraints, limits).status(),
                               "system.constraints", "at most 9 constraints, got 10"));

  v1::ResponseMatrixRequest kind = triangle;
  kind.set_kind(v1::RESPONSE_KIND_UNSPECIFIED);
  EXPECT_TRUE(IsFieldViolation(ResponseSetupFromProto(kind, limits).status(), "kind",
                               "must be PROJECTOR or MOBILITY"));
  v1::ResponseMatrixRequest dimension = triangle;
  dimension.set_dimension(4);
  EXPECT_TRUE(IsFieldViolation(ResponseSetupFromProto(dimension, limits).status(), "dimension",
                               "must be 2 or 3, got 4"));
  v1::ResponseMatrixRequest rank = triangle;
  rank.set_rank_tolerance(1.0);
  EXPECT_TRUE(IsFieldViolation(ResponseSetupFromProto(rank, limits).status(), "rank_tolerance",
                               "must be in (0, 1), got 1"));
  v1::ResponseMatrixRequest index = triangle;
  index.mutable_system()->mutable_constraints(0)->set_j(7);
  EXPECT_TRUE(IsFieldViolation(ResponseSetupFromProto(index, limits).status(),
                               "system.constraints[0].j", "site index must be in [0, 3), got 7"));
}

// ---------------------------------------------------------------------------------------------
// Answers

TEST(FrameCountTest, StepsOverStrideRoundedUp) {
  EXPECT_EQ(FrameCount({.dt = 1, .steps = 9, .stride = 3}), 3);
  EXPECT_EQ(FrameCount({.dt = 1, .steps = 10, .stride = 3}), 4);
  EXPECT_EQ(FrameCount({.dt = 1, .steps = 1, .stride = 1}), 1);
  EXPECT_EQ(FrameCount({.dt = 1, .steps = 5, .stride = 100}), 1);
}

// Points 0 .. 4 at dt 0.1 on the unit circle's plane, stride 3: frames at steps 0, 3 and the
// last, 4; derivatives only at the interior point 3; sigma = x^2 + y^2 - 1 and its distance
// estimate |sigma| / |grad sigma| computed by hand; the outcome copied.
TEST(FollowResponseTest, FramesAtTheStrideAndTheLastStep) {
  systems::CurveSpec circle;  // the default ellipse: a = b = 1
  const absl::StatusOr<std::unique_ptr<systems::Curve>> shape = systems::MakeCurve(circle);
  ASSERT_TRUE(shape.ok()) << shape.status();
  systems::ConstrainedMotion motion;
  motion.dt = 0.1;
  for (int n = 0; n <= 4; ++n) motion.positions.push_back(Eigen::Vector3d(1.0 + n, 0, 0));
  for (int n = 1; n <= 3; ++n) {
    motion.velocities.push_back(Eigen::Vector3d(n, 0, 0));
    motion.accelerations.push_back(Eigen::Vector3d(0, n, 0));
    motion.constraint_accelerations.push_back(Eigen::Vector3d(0, 0, n));
  }
  motion.projection.outcome = constraints::ProjectionOutcome::kNotConverged;
  motion.projection.message = "step 5: 7 iterations";
  motion.projection.iterations = 7;
  motion.projection.max_relative_violation = 1e-3;

  const v1::FollowShapeResponse response = FollowResponse(motion, **shape, 3);
  ASSERT_EQ(response.frames_size(), 3);
  const v1::ShapeFrame& first = response.frames(0);
  const v1::ShapeFrame& third = response.frames(1);
  const v1::ShapeFrame& last = response.frames(2);
  EXPECT_EQ(first.step(), 0);
  EXPECT_EQ(first.position().x(), 1.0);
  EXPECT_EQ(first.sigma(), 0.0);
  EXPECT_FALSE(first.has_velocity());
  EXPECT_EQ(third.step(), 3);
  EXPECT_NEAR(third.time(), 0.3, 1e-15);
  EXPECT_EQ(third.position().x(), 4.0);
  ASSERT_TRUE(third.has_velocity());
  EXPECT_EQ(third.velocity().x(), 3.0);  // entry n - 1 = 2 belongs to point 3
  EXPECT_EQ(third.acceleration().y(), 3.0);
  EXPECT_EQ(third.constraint_acceleration().z(), 3.0);
  EXPECT_EQ(third.sigma(), 15.0);
  EXPECT_NEAR(third.distance(), 15.0 / 8.0, 1e-12);
  EXPECT_EQ(last.step(), 4);
  EXPECT_FALSE(last.has_velocity());
  EXPECT_EQ(response.steps_completed(), 4);
  EXPECT_EQ(response.outcome(), v1::PROJECTION_OUTCOME_NOT_CONVERGED);
  EXPECT_EQ(response.message(), "step 5: 7 iterations");
  EXPECT_EQ(response.max_iterations_used(), 7);
  EXPECT_EQ(response.max_relative_distance(), 1e-3);
}

TEST(OutcomeToProtoTest, EveryOutcomeHasItsWireValue) {
  using constraints::ProjectionOutcome;
  EXPECT_EQ(OutcomeToProto(ProjectionOutcome::kConverged), v1::PROJECTION_OUTCOME_CONVERGED);
  EXPECT_EQ(OutcomeToProto(ProjectionOutcome::kNotConverged), v1::PROJECTION_OUTCOME_NOT_CONVERGED);
  EXPECT_EQ(OutcomeToProto(ProjectionOutcome::kSingular), v1::PROJECTION_OUTCOME_SINGULAR);
  EXPECT_EQ(OutcomeToProto(ProjectionOutcome::kNonFinite), v1::PROJECTION_OUTCOME_NON_FINITE);
}

TEST(MatrixToProtoTest, RowMajorWithItsDimensions) {
  Eigen::MatrixXd m(2, 3);
  m << 1, 2, 3,  //
      4, 5, 6;
  const v1::Matrix wire = MatrixToProto(m);
  EXPECT_EQ(wire.rows(), 2);
  EXPECT_EQ(wire.cols(), 3);
  EXPECT_THAT(wire.values(), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(MatrixToProto(Eigen::MatrixXd(0, 4)).values_size(), 0);
}

TEST(AppendColumnsTest, AppendsEachColumnAfterWhatIsThere) {
  google::protobuf::RepeatedPtrField<v1::Vector3> out;
  *out.Add() = Vec(9, 9, 9);
  Eigen::Matrix3Xd columns(3, 2);
  columns << 1, 4,  //
      2, 5,         //
      3, 6;
  AppendColumns(columns, &out);
  ASSERT_EQ(out.size(), 3);
  EXPECT_EQ(out[0].x(), 9.0);
  EXPECT_EQ(out[1].x(), 1.0);
  EXPECT_EQ(out[1].y(), 2.0);
  EXPECT_EQ(out[1].z(), 3.0);
  EXPECT_EQ(out[2].x(), 4.0);
  EXPECT_EQ(out[2].z(), 6.0);
}

}  // namespace
}  // namespace ikd::server
