#include "ikd/constraints/integrators.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ikd::constraints {
namespace {

// Finite input can still overflow within a step (coordinates or velocities near the largest
// double, a tiny dt against them, huge masses): such a step fails like a non-finite projection
// (OUT_OF_RANGE) instead of handing back infinities, and the caller's state stays untouched.
absl::Status CheckFiniteStep(const Eigen::Matrix3Xd& positions,
                             const Eigen::Matrix3Xd& velocities, const Eigen::Matrix3Xd& forces,
                             double potential, double kinetic) {
  if (positions.allFinite() && velocities.allFinite() && forces.allFinite() &&
      std::isfinite(potential) && std::isfinite(kinetic)) {
    return absl::OkStatus();
  }
  return absl::OutOfRangeError(
      "the step overflowed: non-finite positions, velocities, forces or energies (coordinates, "
      "velocities or masses too large for dt)");
}

}  // namespace

absl::StatusOr<ConstrainedIntegrator> ConstrainedIntegrator::Create(
    const ConstraintModel& model, Method method, const ProjectionOptions& options,
    const ForceField* field, double dt) {
  if (!std::isfinite(dt) || dt <= 0.0) {
    return absl::InvalidArgumentError(absl::StrCat("dt must be finite and > 0, got ", dt));
  }
  auto solver = MakeConstraintSolver(method, model, options);
  if (!solver.ok()) return solver.status();
  return ConstrainedIntegrator(model, method, *std::move(solver), field, dt);
}

ConstrainedIntegrator::ConstrainedIntegrator(const ConstraintModel& model, Method method,
                                             std::unique_ptr<ConstraintSolver> solver,
                                             const ForceField* field, double dt)
    : model_(&model), method_(method), solver_(std::move(solver)), field_(field), dt_(dt) {}

double ConstrainedIntegrator::KineticEnergy(const ConstraintModel& model,
                                            const Eigen::Matrix3Xd& velocities) {
  const Eigen::VectorXd& w = model.inverse_masses();
  double energy = 0.0;
  for (Eigen::Index k = 0; k < velocities.cols(); ++k) {
    if (w[k] > 0.0) energy += 0.5 * velocities.col(k).squaredNorm() / w[k];
  }
  return energy;
}

double ConstrainedIntegrator::Forces(const Eigen::Matrix3Xd& positions,
                                     Eigen::Matrix3Xd& forces) const {
  if (field_ == nullptr || field_->empty()) {
    forces.setZero(3, positions.cols());
    return 0.0;
  }
  return field_->Evaluate(positions, forces);
}

absl::StatusOr<StepReport> ConstrainedIntegrator::Step(DynamicsState& state) {
  if (absl::Status s = model_->CheckCoordinates(state.positions, "state.positions"); !s.ok()) {
    return s;
  }
  if (absl::Status s = model_->CheckCoordinates(state.velocities, "state.velocities"); !s.ok()) {
    return s;
  }
  if (!forces_valid_ || forces_at_ != state.positions) {
    potential_ = Forces(state.positions, forces_);
    forces_at_ = state.positions;
    forces_valid_ = true;
  }
  return method_ == Method::kShake ? StepPositionVerlet(state) : StepVelocityVerlet(state);
}

// Vesely eq. 1 as r(t+dt) = r(t) + dt v(t-dt/2) + dt^2 W f(t); first step from v(0) (Vesely
// problem 5's start), then SHAKE along r_ij(t) (eq. 11-13).
absl::StatusOr<StepReport> ConstrainedIntegrator::StepPositionVerlet(DynamicsState& state) {
  const Eigen::VectorXd& w = model_->inverse_masses();
  const double kick = started_ ? dt_ : 0.5 * dt_;
  Eigen::Matrix3Xd half_velocities = state.velocities;
  for (Eigen::Index k = 0; k < half_velocities.cols(); ++k) {
    half_velocities.col(k) += (kick * w[k]) * forces_.col(k);
  }
  Eigen::Matrix3Xd next = state.positions + dt_ * half_velocities;
  auto summary = solver_->ProjectPositions(state.positions, next);
  if (!summary.ok()) return summary.status();
  if (!summary->converged()) return summary->ToStatus();
  Eigen::Matrix3Xd velocities = (next - state.positions) / dt_;
  Eigen::Matrix3Xd next_forces;
  const double potential = Forces(next, next_forces);
  const double kinetic = KineticEnergy(*model_, velocities);
  if (absl::Status s = CheckFiniteStep(next, velocities, next_forces, potential, kinetic);
      !s.ok()) {
    return s;
  }
  StepReport report;
  report.positions = *summary;
  state.velocities = std::move(velocities);
  state.positions = std::move(next);
  started_ = true;
  forces_ = std::move(next_forces);
  forces_at_ = state.positions;
  report.potential_energy = potential_ = potential;
  report.kinetic_energy = kinetic;
  return report;
}

// Vesely eq. 14a-c / Bailey sec. 2.3: half kick, drift, position constraints (which also
// correct the half-step velocity), new forces, half kick, velocity constraints.
absl::StatusOr<StepReport> ConstrainedIntegrator::StepVelocityVerlet(DynamicsState& state) {
  const Eigen::VectorXd& w = model_->inverse_masses();
  Eigen::Matrix3Xd velocities = state.velocities;
  for (Eigen::Index k = 0; k < velocities.cols(); ++k) {
    velocities.col(k) += (0.5 * dt_ * w[k]) * forces_.col(k);
  }
  const Eigen::Matrix3Xd drifted = state.positions + dt_ * velocities;
  Eigen::Matrix3Xd next = drifted;
  auto position_summary = solver_->ProjectPositions(state.positions, next);
  if (!position_summary.ok()) return position_summary.status();
  if (!position_summary->converged()) return position_summary->ToStatus();
  velocities += (next - drifted) / dt_;  // the constraint impulse of eq. 14a

  Eigen::Matrix3Xd next_forces;
  const double potential = Forces(next, next_forces);
  for (Eigen::Index k = 0; k < velocities.cols(); ++k) {
    velocities.col(k) += (0.5 * dt_ * w[k]) * next_forces.col(k);
  }
  auto velocity_summary = solver_->ProjectVelocities(next, velocities);
  if (!velocity_summary.ok()) return velocity_summary.status();
  if (!velocity_summary->converged()) return velocity_summary->ToStatus();
  const double kinetic = KineticEnergy(*model_, velocities);
  if (absl::Status s = CheckFiniteStep(next, velocities, next_forces, potential, kinetic);
      !s.ok()) {
    return s;
  }

  state.positions = std::move(next);
  state.velocities = std::move(velocities);
  forces_ = std::move(next_forces);
  forces_at_ = state.positions;
  potential_ = potential;
  StepReport report;
  report.positions = *position_summary;
  report.velocities = *velocity_summary;
  report.potential_energy = potential;
  report.kinetic_energy = kinetic;
  return report;
}

absl::StatusOr<ProjectionSummary> BrownianStep(const ConstraintModel& model,
                                               ConstraintSolver& solver, double step_sigma,
                                               bool planar, std::mt19937_64& rng,
                                               Eigen::Matrix3Xd& positions) {
  if (!std::isfinite(step_sigma) || step_sigma <= 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("step_sigma must be finite and > 0, got ", step_sigma));
  }
  if (absl::Status s = model.CheckCoordinates(positions, "positions"); !s.ok()) return s;
  std::normal_distribution<double> gauss(0.0, step_sigma);
  const Eigen::Matrix3Xd before = positions;
  const Eigen::VectorXd& w = model.inverse_masses();
  for (Eigen::Index k = 0; k < positions.cols(); ++k) {
    if (w[k] == 0.0) continue;
    positions(0, k) += gauss(rng);
    positions(1, k) += gauss(rng);
    if (!planar) positions(2, k) += gauss(rng);
  }
  // Vesely sec. VII C: random kicks, then the bond constraints along the old bond vectors.
  auto summary = solver.ProjectPositions(before, positions);
  if (!summary.ok() || !summary->converged()) positions = before;
  return summary;
}

}  // namespace ikd::constraints
