#include "ikd/constraints/integrators.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <Eigen/Geometry>

#include "ikd/systems/chains.h"

namespace ikd::constraints {
namespace {

using ::ikd::systems::ChainConstraints;
using ::ikd::systems::HelixChain;
using ::ikd::systems::PerturbGaussian;
using ::ikd::systems::RandomCoil;
using ::testing::HasSubstr;

struct FilamentRun {
  double fitted_drift;   // least-squares slope of E(t)/E(0) times the run length
  double max_deviation;  // max |E(t) - E(0)| / E(0)
  double mean_iterations;
};

// Bailey sec. 3: 100-site helix (radius 5, pitch 2, unit links, unit masses), at rest, under
// the bending potential U = (A l / 2) sum theta^2 with A = 1, integrated by velocity Verlet.
FilamentRun RunFilament(Method method, double tolerance, double dt, int steps) {
  const int n = 100;
  auto model = *ConstraintModel::Create(Eigen::VectorXd::Ones(n), ChainConstraints(n, 1.0, false));
  ForceField field;
  field.Add(std::make_shared<BendingPotential>(*BendingPotential::ForChain(0, n, 1.0, 1.0)));
  ProjectionOptions options;
  options.tolerance = tolerance;
  options.max_iterations = 100000;
  auto integrator = *ConstrainedIntegrator::Create(model, method, options, &field, dt);
  DynamicsState state{*HelixChain(n, 5.0, 2.0, 1.0), Eigen::Matrix3Xd::Zero(3, n)};
  Eigen::Matrix3Xd unused;
  const double e0 = field.Evaluate(state.positions, unused);
  double st = 0, se = 0, stt = 0, ste = 0, worst = 0, iterations = 0;
  for (int k = 0; k < steps; ++k) {
    auto report = integrator.Step(state);
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) break;
    const double e = (report->potential_energy + report->kinetic_energy) / e0;
    st += k, se += e, stt += double(k) * k, ste += k * e;
    worst = std::max(worst, std::abs(e - 1.0));
    iterations += report->positions.iterations + report->velocities.iterations;
  }
  const double slope = (steps * ste - st * se) / (steps * stt - st * st);
  return {slope * steps, worst, iterations / steps};
}

class FilamentTest : public ::testing::TestWithParam<Method> {};

// Bailey sec. 4: at tau = 1e-8 the relative total-energy drift stays below 1e-4. dt = 0.05
// (pre-projection violation ~2e-4); at dt = 0.1 Verlet's own O(dt^2) error is already 1.5e-4.
TEST_P(FilamentTest, EnergyDriftBelow1e4AtTau1e8) {
  const FilamentRun run = RunFilament(GetParam(), 1e-8, 0.05, 10000);
  EXPECT_LT(std::abs(run.fitted_drift), 1e-4);
  EXPECT_LT(run.max_deviation, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(VelocityVerletSolvers, FilamentTest,
                         ::testing::Values(Method::kRattle, Method::kMilcShake, Method::kMatrix),
                         [](const auto& info) { return std::string(MethodName(info.param)); });

// The check has teeth: RATTLE stopped at tau = 1e-3 leaks energy at the percent level.
TEST(FilamentToleranceTest, LooseRattleToleranceDrifts) {
  const FilamentRun run = RunFilament(Method::kRattle, 1e-3, 0.05, 10000);
  EXPECT_GT(std::abs(run.fitted_drift), 1e-3);
}

// MILC needs a few chord iterations per step where RATTLE needs hundreds (Bailey Fig. 1).
TEST(FilamentToleranceTest, MilcNeedsFarFewerIterationsThanRattle) {
  const FilamentRun milc = RunFilament(Method::kMilcShake, 1e-8, 0.05, 500);
  const FilamentRun rattle = RunFilament(Method::kRattle, 1e-8, 0.05, 500);
  EXPECT_LT(milc.mean_iterations * 20, rattle.mean_iterations);
}

// Free rotation of a rigid dumbbell: angular momentum L = sum m r x v is conserved exactly by
// the central constraint forces, and |r_01| stays at l (tolerance 1e-12) with every method.
TEST(ConstrainedIntegratorTest, DumbbellConservesAngularMomentum) {
  for (Method m : {Method::kShake, Method::kRattle, Method::kMilcShake, Method::kMatrix}) {
    auto model = *ConstraintModel::Create(Eigen::Vector2d(1.0, 0.5), {{0, 1, 1.0}});
    ProjectionOptions options;
    options.tolerance = 1e-12;
    auto integrator = *ConstrainedIntegrator::Create(model, m, options, nullptr, 0.01);
    DynamicsState s{Eigen::Matrix3Xd::Zero(3, 2), Eigen::Matrix3Xd::Zero(3, 2)};
    s.positions(0, 1) = 1.0;
    s.velocities.col(0) << 0.0, -0.5, 0.2;
    s.velocities.col(1) << 0.0, 0.5, -0.1;  // total momentum (0,0,0)
    auto angular = [&](const DynamicsState& st) {
      return Eigen::Vector3d(st.positions.col(0).cross(st.velocities.col(0)) / 1.0 +
                             st.positions.col(1).cross(st.velocities.col(1)) / 0.5);
    };
    // Position Verlet reports half-step velocities; compare it after its first step.
    ASSERT_TRUE(integrator.Step(s).ok());
    const Eigen::Vector3d l0 = angular(s);
    for (int k = 0; k < 2000; ++k) ASSERT_TRUE(integrator.Step(s).ok());
    EXPECT_LT((angular(s) - l0).norm(), 1e-10 * l0.norm()) << MethodName(m);
    EXPECT_LE(model.MaxRelativeViolation(s.positions), 1e-12) << MethodName(m);
  }
}

TEST(ConstrainedIntegratorTest, RejectsBadInput) {
  auto model = *ConstraintModel::Create(Eigen::Vector2d(1.0, 1.0), {{0, 1, 1.0}});
  EXPECT_THAT(std::string(ConstrainedIntegrator::Create(model, Method::kRattle, ProjectionOptions(),
                                                        nullptr, 0.0)
                              .status()
                              .message()),
              HasSubstr("dt must be finite and > 0"));
  auto integrator =
      *ConstrainedIntegrator::Create(model, Method::kRattle, ProjectionOptions(), nullptr, 0.1);
  DynamicsState bad{Eigen::Matrix3Xd::Zero(3, 2), Eigen::Matrix3Xd::Zero(3, 3)};
  bad.positions(0, 1) = 1.0;
  EXPECT_THAT(std::string(integrator.Step(bad).status().message()),
              HasSubstr("state.velocities: expected 3 x 2"));
}

// A step whose projection cannot converge fails with ABORTED and leaves the state as it was.
TEST(ConstrainedIntegratorTest, NonConvergenceLeavesStateUntouched) {
  const int n = 50;
  auto model = *ConstraintModel::Create(Eigen::VectorXd::Ones(n), ChainConstraints(n, 1.0, false));
  ProjectionOptions options;
  options.tolerance = 1e-14;
  options.max_iterations = 2;
  auto integrator = *ConstrainedIntegrator::Create(model, Method::kShake, options, nullptr, 0.1);
  std::mt19937_64 rng(4);
  DynamicsState s{*HelixChain(n, 5.0, 2.0, 1.0), Eigen::Matrix3Xd::Zero(3, n)};
  PerturbGaussian(1.0, rng, s.velocities);
  const DynamicsState before = s;
  auto report = integrator.Step(s);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("max_iterations=2"));
  EXPECT_EQ(s.positions, before.positions);
  EXPECT_EQ(s.velocities, before.velocities);
}

// Fuzzing finding (constraint_engine_fuzzer): a driven site (inverse mass 0) at x = -6.6e307
// moving at the largest double; SHAKE's velocity (r(t+dt) - r(t)) / dt overflowed and the step
// returned OK with v = -inf. Now every method either steps to a finite state or fails
// OUT_OF_RANGE with the state untouched, and SHAKE fails.
TEST(ConstrainedIntegratorTest, OverflowingStepFailsAndLeavesStateUntouched) {
  auto model = *ConstraintModel::Create(Eigen::VectorXd::Zero(1), {});
  for (Method method : {Method::kShake, Method::kRattle, Method::kMilcShake, Method::kMatrix}) {
    auto integrator =
        *ConstrainedIntegrator::Create(model, method, ProjectionOptions(), nullptr, 0.001);
    DynamicsState s{Eigen::Matrix3Xd::Zero(3, 1), Eigen::Matrix3Xd::Zero(3, 1)};
    s.positions(0, 0) = -6.6267910560135753e307;
    s.velocities(0, 0) = -std::numeric_limits<double>::max();
    const DynamicsState before = s;
    auto report = integrator.Step(s);
    if (report.ok()) {
      EXPECT_TRUE(s.positions.allFinite() && s.velocities.allFinite()) << MethodName(method);
      EXPECT_TRUE(std::isfinite(report->kinetic_energy)) << MethodName(method);
    } else {
      EXPECT_EQ(report.status().code(), absl::StatusCode::kOutOfRange) << MethodName(method);
      EXPECT_EQ(s.positions, before.positions) << MethodName(method);
      EXPECT_EQ(s.velocities, before.velocities) << MethodName(method);
    }
    if (method == Method::kShake) {
      EXPECT_THAT(std::string(report.status().message()), HasSubstr("overflowed"));
    }
  }
}

// A free unit-mass site at 1e200 m/s: its kinetic energy (5e399 J) overflows, so every method
// fails OUT_OF_RANGE instead of reporting an infinite energy.
TEST(ConstrainedIntegratorTest, OverflowingEnergyFailsTheStep) {
  auto model = *ConstraintModel::Create(Eigen::VectorXd::Ones(1), {});
  for (Method method : {Method::kShake, Method::kRattle, Method::kMilcShake, Method::kMatrix}) {
    auto integrator =
        *ConstrainedIntegrator::Create(model, method, ProjectionOptions(), nullptr, 0.001);
    DynamicsState s{Eigen::Matrix3Xd::Zero(3, 1), Eigen::Matrix3Xd::Zero(3, 1)};
    s.velocities(1, 0) = 1e200;
    auto report = integrator.Step(s);
    EXPECT_EQ(report.status().code(), absl::StatusCode::kOutOfRange) << MethodName(method);
    EXPECT_EQ(s.velocities(1, 0), 1e200) << MethodName(method);
  }
}

// Brownian kicks followed by projection keep every bond at its length (tolerance 1e-10).
TEST(BrownianStepTest, KeepsBondsAndIsDeterministicForASeed) {
  const int n = 20;
  auto model = *ConstraintModel::Create(Eigen::VectorXd::Ones(n), ChainConstraints(n, 1.0, false));
  auto solver = *MakeConstraintSolver(Method::kAuto, model, ProjectionOptions());
  std::mt19937_64 rng_a(42), rng_b(42);
  std::mt19937_64 coil_rng(1);
  Eigen::Matrix3Xd a = RandomCoil(n, 1.0, false, coil_rng), b = a;
  for (int k = 0; k < 200; ++k) {
    ASSERT_TRUE(BrownianStep(model, *solver, 0.05, false, rng_a, a)->converged());
    ASSERT_TRUE(BrownianStep(model, *solver, 0.05, false, rng_b, b)->converged());
  }
  EXPECT_LE(model.MaxRelativeViolation(a), 1e-10);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(BrownianStep(model, *solver, -1.0, false, rng_a, a).ok());
}

}  // namespace
}  // namespace ikd::constraints
