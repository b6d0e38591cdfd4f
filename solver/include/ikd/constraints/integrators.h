// Time stepping with constraints: position Verlet + SHAKE (Vesely eq. 1, 11-13), velocity
// Verlet + RATTLE / MILC SHAKE / matrix method (Vesely eq. 14-16, Bailey sec. 2.3), and the
// Brownian random walk of a Kramers chain (Vesely sec. VII C).
//
//   auto integrator = ikd::constraints::ConstrainedIntegrator::Create(
//       model, ikd::constraints::Method::kMilcShake, options, field, /*dt=*/1e-3);
//   ikd::constraints::DynamicsState state{positions, velocities};
//   for (int n = 0; n < steps; ++n) {
//     auto report = integrator->Step(state);   // non-convergence -> ABORTED status
//   }
#pragma once

#include <memory>
#include <random>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/model.h"
#include "ikd/constraints/potentials.h"
#include "ikd/constraints/solver.h"

namespace ikd::constraints {

struct DynamicsState {
  Eigen::Matrix3Xd positions;
  // Velocities at the same time as positions. For Method::kShake (position Verlet), after the
  // first step these are the half-step velocities (r(t) - r(t - dt)) / dt: Verlet has no
  // on-step velocity.
  Eigen::Matrix3Xd velocities;
};

struct StepReport {
  ProjectionSummary positions;   // the position projection
  ProjectionSummary velocities;  // the velocity projection (iterations 0 for kShake)
  double potential_energy = 0.0;  // at the new positions
  double kinetic_energy = 0.0;    // at the new velocities, movable sites only
};

class ConstrainedIntegrator {
 public:
  // Errors: dt not finite and positive, invalid options, a method that does not apply.
  // `field` may be null (free motion); model and field must outlive the integrator.
  static absl::StatusOr<ConstrainedIntegrator> Create(const ConstraintModel& model, Method method,
                                                      const ProjectionOptions& options,
                                                      const ForceField* field, double dt);

  // Advances `state` by one dt. Errors: bad shapes or non-finite state (InvalidArgument);
  // a projection that does not converge (its ToStatus(): ABORTED, FAILED_PRECONDITION, ...),
  // in which case `state` is left unchanged.
  absl::StatusOr<StepReport> Step(DynamicsState& state);

  Method method() const { return method_; }
  double dt() const { return dt_; }

  // sum_i v_i^2 / (2 w_i) over movable sites.
  static double KineticEnergy(const ConstraintModel& model, const Eigen::Matrix3Xd& velocities);

 private:
  ConstrainedIntegrator(const ConstraintModel& model, Method method,
                        std::unique_ptr<ConstraintSolver> solver, const ForceField* field,
                        double dt);
  absl::StatusOr<StepReport> StepPositionVerlet(DynamicsState& state);
  absl::StatusOr<StepReport> StepVelocityVerlet(DynamicsState& state);
  double Forces(const Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& forces) const;

  const ConstraintModel* model_;
  Method method_;
  std::unique_ptr<ConstraintSolver> solver_;
  const ForceField* field_;
  double dt_;
  bool started_ = false;  // kShake: velocities already hold half-step values
  Eigen::Matrix3Xd forces_;     // forces at forces_at_, reused by the next step
  Eigen::Matrix3Xd forces_at_;
  double potential_ = 0.0;      // potential energy at forces_at_
  bool forces_valid_ = false;
};

// One step of a Kramers chain in a heat bath: every movable site takes an independent Gaussian
// displacement of standard deviation `step_sigma` per coordinate (only x, y when `planar`),
// then the solver restores the constraints along the old link vectors.
absl::StatusOr<ProjectionSummary> BrownianStep(const ConstraintModel& model,
                                               ConstraintSolver& solver, double step_sigma,
                                               bool planar, std::mt19937_64& rng,
                                               Eigen::Matrix3Xd& positions);

}  // namespace ikd::constraints
