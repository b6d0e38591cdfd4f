// The constraint engine with arbitrary sites and distance constraints (no server): the bytes
// give the sites (reference positions, a displacement, velocities, inverse masses - zero, small,
// huge or raw doubles), the constraints (chain, ring, tree or random pairs; lengths consistent
// with the reference or arbitrary), the tolerance and the iteration cap. Every solver (SHAKE,
// RATTLE, MILC, the matrix method, auto) projects positions and velocities, each integrator takes
// a few steps, and a Brownian step runs. Invariants, trapped so that libFuzzer reports them:
//   - an OK converged projection has finite positions, fixed sites unmoved and every constraint
//     within the tolerance (recomputed here, with slack for the last rounding);
//   - an OK integrator step leaves a finite state within the tolerance; a failed one leaves the
//     state untouched (integrators.h);
//   - nothing crashes or hangs (the iteration cap bounds every loop).
// IKD_FUZZ_VERBOSE=1 prints each decoded input (to turn a finding into a readable test).
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "ikd/constraints/integrators.h"
#include "ikd/constraints/model.h"
#include "ikd/constraints/potentials.h"
#include "ikd/constraints/solver.h"

using ikd::constraints::BrownianStep;
using ikd::constraints::ConstrainedIntegrator;
using ikd::constraints::ConstraintModel;
using ikd::constraints::DistanceConstraint;
using ikd::constraints::DynamicsState;
using ikd::constraints::ForceField;
using ikd::constraints::MakeConstraintSolver;
using ikd::constraints::Method;
using ikd::constraints::MethodName;
using ikd::constraints::ProjectionOptions;
using ikd::constraints::UniformGravity;

namespace {

constexpr int kMaxSites = 24;
constexpr int kMaxIterations = 300;
// A converged result may exceed the tolerance by the rounding of its last update.
constexpr double kToleranceSlack = 4.0;

[[noreturn]] void Fail(const char* what, Method method, double value, double bound) {
  std::fprintf(stderr, "invariant broken (%s): %s, value %.17g, bound %.17g\n", MethodName(method),
               what, value, bound);
  __builtin_trap();
}

double ConsumeCoordinate(FuzzedDataProvider& in, double scale) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return in.ConsumeFloatingPoint<double>();  // anything, NaN and infinities included
    case 1: return 0.0;
    default: return in.ConsumeFloatingPointInRange(-scale, scale);
  }
}

double ConsumeInverseMass(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 9)) {
    case 0: return 0.0;
    case 1: return 0.0;
    case 2: return 1e-9;
    case 3: return 1e9;
    case 4: return in.ConsumeFloatingPoint<double>();
    default: return in.ConsumeFloatingPointInRange(0.1, 10.0);
  }
}

Eigen::Matrix3Xd ConsumeMatrix(FuzzedDataProvider& in, int n, double scale) {
  Eigen::Matrix3Xd m(3, n);
  for (int k = 0; k < n; ++k) {
    for (int d = 0; d < 3; ++d) m(d, k) = ConsumeCoordinate(in, scale);
  }
  return m;
}

bool AllFinite(const Eigen::Matrix3Xd& m) { return m.allFinite(); }

void PrintMatrix(const char* name, const Eigen::Matrix3Xd& m) {
  std::fprintf(stderr, "%s:", name);
  for (int k = 0; k < m.cols(); ++k) {
    std::fprintf(stderr, " (%.17g, %.17g, %.17g)", m(0, k), m(1, k), m(2, k));
  }
  std::fprintf(stderr, "\n");
}

void PrintInput(const Eigen::VectorXd& inverse_masses,
                const std::vector<DistanceConstraint>& constraints,
                const ProjectionOptions& options, const Eigen::Matrix3Xd& reference,
                const Eigen::Matrix3Xd& moved, const Eigen::Matrix3Xd& velocities, double dt,
                const Eigen::Vector3d& g, int steps) {
  std::fprintf(stderr, "inverse masses:");
  for (double w : inverse_masses) std::fprintf(stderr, " %.17g", w);
  std::fprintf(stderr, "\nconstraints:");
  for (const auto& c : constraints) std::fprintf(stderr, " {%d, %d, %.17g}", c.i, c.j, c.length);
  std::fprintf(stderr, "\ntolerance %g, max_iterations %d, dt %.17g, g_z %.17g, steps %d\n",
               options.tolerance, options.max_iterations, dt, g.z(), steps);
  PrintMatrix("reference", reference);
  PrintMatrix("moved", moved);
  PrintMatrix("velocities", velocities);
}

// Constraints of the chosen shape; lengths from `reference` (the constraints hold there) or
// from the input.
std::vector<DistanceConstraint> ConsumeConstraints(FuzzedDataProvider& in, int n,
                                                   const Eigen::Matrix3Xd& reference) {
  std::vector<std::pair<int, int>> pairs;
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:  // open chain
      for (int k = 0; k + 1 < n; ++k) pairs.emplace_back(k, k + 1);
      break;
    case 1:  // ring
      for (int k = 0; k + 1 < n; ++k) pairs.emplace_back(k, k + 1);
      if (n >= 3) pairs.emplace_back(n - 1, 0);
      break;
    case 2:  // tree: each site hangs from an earlier one
      for (int k = 1; k < n; ++k) pairs.emplace_back(in.ConsumeIntegralInRange(0, k - 1), k);
      break;
    default: {  // any pairs, out-of-range and repeated ones included (the model must refuse)
      const int count = in.ConsumeIntegralInRange(0, 3 * n);
      for (int c = 0; c < count; ++c) {
        pairs.emplace_back(in.ConsumeIntegralInRange(-1, n), in.ConsumeIntegralInRange(-1, n));
      }
    }
  }
  const bool consistent = in.ConsumeBool();
  std::vector<DistanceConstraint> constraints;
  for (const auto& [i, j] : pairs) {
    double length = 1.0;
    if (consistent && i >= 0 && i < n && j >= 0 && j < n) {
      length = (reference.col(i) - reference.col(j)).norm();
    } else {
      length = in.ConsumeBool() ? in.ConsumeFloatingPointInRange(1e-3, 3.0)
                                : in.ConsumeFloatingPoint<double>();
    }
    constraints.push_back({i, j, length});
  }
  return constraints;
}

Method ConsumeMethodOrder(int k) {
  static constexpr Method kMethods[] = {Method::kShake, Method::kRattle, Method::kMilcShake,
                                        Method::kMatrix, Method::kAuto};
  return kMethods[k];
}

void CheckConverged(const ConstraintModel& model, Method method, const ProjectionOptions& options,
                    const Eigen::Matrix3Xd& before, const Eigen::Matrix3Xd& after) {
  if (!AllFinite(after)) Fail("converged with non-finite positions", method, 0, 0);
  for (int k = 0; k < model.num_sites(); ++k) {
    if (model.inverse_masses()(k) == 0.0 && after.col(k) != before.col(k)) {
      Fail("a fixed site moved", method, k, 0);
    }
  }
  const double violation = model.MaxRelativeViolation(after);
  const double bound = kToleranceSlack * options.tolerance;
  if (!(violation <= bound)) Fail("converged above the tolerance", method, violation, bound);
}

void ProjectWithEveryMethod(const ConstraintModel& model, const ProjectionOptions& options,
                            const Eigen::Matrix3Xd& reference, const Eigen::Matrix3Xd& moved,
                            const Eigen::Matrix3Xd& velocities) {
  for (int m = 0; m < 5; ++m) {
    const Method method = ConsumeMethodOrder(m);
    auto solver = MakeConstraintSolver(method, model, options);
    if (!solver.ok()) continue;  // e.g. MILC on a tree
    Eigen::Matrix3Xd positions = moved;
    auto summary = (*solver)->ProjectPositions(reference, positions);
    if (!summary.ok() || !summary->converged()) continue;
    CheckConverged(model, method, options, moved, positions);
    Eigen::Matrix3Xd v = velocities;
    auto velocity_summary = (*solver)->ProjectVelocities(positions, v);
    if (velocity_summary.ok() && velocity_summary->converged() && !AllFinite(v)) {
      Fail("converged with non-finite velocities", method, 0, 0);
    }
  }
}

void StepEveryIntegrator(const ConstraintModel& model, const ProjectionOptions& options,
                         const ForceField& field, double dt, const Eigen::Matrix3Xd& positions,
                         const Eigen::Matrix3Xd& velocities, int steps) {
  for (int m = 0; m < 5; ++m) {
    const Method method = ConsumeMethodOrder(m);
    auto integrator = ConstrainedIntegrator::Create(model, method, options, &field, dt);
    if (!integrator.ok()) continue;
    DynamicsState state{positions, velocities};
    for (int s = 0; s < steps; ++s) {
      const DynamicsState before = state;
      auto report = integrator->Step(state);
      if (!report.ok()) {
        if (state.positions != before.positions || state.velocities != before.velocities) {
          Fail("a failed step changed the state", method, s, 0);
        }
        break;
      }
      if (!AllFinite(state.positions) || !AllFinite(state.velocities)) {
        PrintMatrix("positions", state.positions);
        PrintMatrix("velocities", state.velocities);
        Fail("an OK step left a non-finite state", method, s, 0);
      }
      const double violation = model.MaxRelativeViolation(state.positions);
      const double bound = kToleranceSlack * options.tolerance;
      if (!(violation <= bound)) Fail("an OK step above the tolerance", method, violation, bound);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int n = in.ConsumeIntegralInRange(1, kMaxSites);
  const double scale = in.ConsumeBool() ? 2.0 : 1e3;
  Eigen::VectorXd inverse_masses(n);
  for (int k = 0; k < n; ++k) inverse_masses(k) = ConsumeInverseMass(in);
  const Eigen::Matrix3Xd reference = ConsumeMatrix(in, n, scale);
  std::vector<DistanceConstraint> constraints = ConsumeConstraints(in, n, reference);

  ProjectionOptions options;
  static constexpr double kTolerances[] = {1e-10, 1e-6, 1e-12, 1e-15, 1e-3};
  options.tolerance = kTolerances[in.ConsumeIntegralInRange(0, 4)];
  options.max_iterations = in.ConsumeIntegralInRange(1, kMaxIterations);
  const double displacement = in.ConsumeBool() ? 0.05 : 1.0;
  Eigen::Matrix3Xd moved = reference + ConsumeMatrix(in, n, displacement);
  const Eigen::Matrix3Xd velocities = ConsumeMatrix(in, n, 1.0);
  const double dt = in.ConsumeBool() ? 1e-3 : in.ConsumeFloatingPoint<double>();
  const Eigen::Vector3d g(0.0, 0.0, in.ConsumeFloatingPointInRange(-20.0, 20.0));
  const int steps = in.ConsumeIntegralInRange(1, 3);
  const uint64_t seed = in.ConsumeIntegral<uint64_t>();

  static const bool verbose = std::getenv("IKD_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    PrintInput(inverse_masses, constraints, options, reference, moved, velocities, dt, g, steps);
  }
  auto model = ConstraintModel::Create(inverse_masses, constraints);
  if (!model.ok()) return 0;  // refused input: fine, it named the field

  ProjectWithEveryMethod(*model, options, reference, moved, velocities);

  ForceField field;
  field.Add(std::make_shared<UniformGravity>(g, inverse_masses));
  StepEveryIntegrator(*model, options, field, dt, reference, velocities, steps);

  auto solver = MakeConstraintSolver(Method::kAuto, *model, options);
  if (solver.ok()) {
    std::mt19937_64 rng(seed);
    Eigen::Matrix3Xd positions = reference;
    auto summary = BrownianStep(*model, **solver, 0.01, false, rng, positions);
    if (summary.ok() && summary->converged()) {
      CheckConverged(*model, Method::kAuto, options, reference, positions);
    }
  }
  return 0;
}
