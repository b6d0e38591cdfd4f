#include "ikd/systems/pendulum.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ikd::systems {

using constraints::ConstrainedIntegrator;
using constraints::ConstraintModel;
using constraints::DistanceConstraint;
using constraints::ForceField;
using constraints::Method;
using constraints::ProjectionOptions;
using constraints::StepReport;
using constraints::UniformGravity;

namespace {

absl::Status CheckSize(const std::vector<double>& values, const char* field, size_t expected,
                       const char* what) {
  if (values.size() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must hold ", expected, " values (", what, "), got ", values.size()));
}

absl::Status CheckEach(const std::vector<double>& values, const char* field, bool positive) {
  for (size_t k = 0; k < values.size(); ++k) {
    if (!std::isfinite(values[k]) || (positive && values[k] <= 0.0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, "[", k, "] must be finite", positive ? " and > 0" : "", ", got ", values[k]));
    }
  }
  return absl::OkStatus();
}

// Unit vector of a rod and its time derivative per unit angular rate(s).
void RodDirection(const PendulumSpec& spec, int k, Eigen::Vector3d& direction,
                  Eigen::Vector3d& rate) {
  if (spec.planar) {
    const double phi = spec.angles[k], omega = spec.angular_velocities[k];
    direction << std::sin(phi), -std::cos(phi), 0.0;
    rate << omega * std::cos(phi), omega * std::sin(phi), 0.0;
    return;
  }
  const double t = spec.angles[2 * k], a = spec.angles[2 * k + 1];
  const double t_rate = spec.angular_velocities[2 * k], a_rate = spec.angular_velocities[2 * k + 1];
  direction << std::sin(t) * std::cos(a), std::sin(t) * std::sin(a), -std::cos(t);
  rate =
      t_rate * Eigen::Vector3d(std::cos(t) * std::cos(a), std::cos(t) * std::sin(a), std::sin(t)) +
      a_rate * Eigen::Vector3d(-std::sin(t) * std::sin(a), std::sin(t) * std::cos(a), 0.0);
}

}  // namespace

absl::Status PendulumSpec::Validate() const {
  const size_t n = masses.size();
  if (n < 1 || n > static_cast<size_t>(kMaxBobs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("masses must hold between 1 and ", kMaxBobs, " bobs, got ", n));
  }
  const size_t per_rod = angles_per_rod();
  const char* layout = planar ? "one per rod" : "polar and azimuthal per rod";
  if (absl::Status s = CheckSize(lengths, "lengths", n, "one per bob"); !s.ok()) return s;
  if (absl::Status s = CheckSize(angles, "angles", per_rod * n, layout); !s.ok()) return s;
  if (absl::Status s = CheckSize(angular_velocities, "angular_velocities", per_rod * n, layout);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckEach(masses, "masses", /*positive=*/true); !s.ok()) return s;
  if (absl::Status s = CheckEach(lengths, "lengths", /*positive=*/true); !s.ok()) return s;
  if (absl::Status s = CheckEach(angles, "angles", /*positive=*/false); !s.ok()) return s;
  if (absl::Status s = CheckEach(angular_velocities, "angular_velocities", /*positive=*/false);
      !s.ok()) {
    return s;
  }
  if (!std::isfinite(gravity) || gravity < 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gravity must be finite and >= 0, got ", gravity));
  }
  return absl::OkStatus();
}

void PendulumSpec::InitialState(Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& velocities) const {
  const int n = num_bobs();
  positions = Eigen::Matrix3Xd::Zero(3, n + 1);
  velocities = Eigen::Matrix3Xd::Zero(3, n + 1);
  for (int k = 0; k < n; ++k) {
    Eigen::Vector3d direction, rate;
    RodDirection(*this, k, direction, rate);
    positions.col(k + 1) = positions.col(k) + lengths[k] * direction;
    velocities.col(k + 1) = velocities.col(k) + lengths[k] * rate;
  }
}

absl::StatusOr<Pendulum> Pendulum::Create(const PendulumSpec& spec, Method method,
                                          const ProjectionOptions& options, double dt) {
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  if (!std::isfinite(dt) || dt <= 0.0) {
    return absl::InvalidArgumentError(absl::StrCat("dt must be finite and > 0, got ", dt));
  }
  const int n = spec.num_bobs();
  Eigen::VectorXd inverse_masses(n + 1);
  inverse_masses[0] = 0.0;  // the pivot never moves
  std::vector<DistanceConstraint> rods;
  rods.reserve(n);
  for (int k = 0; k < n; ++k) {
    inverse_masses[k + 1] = 1.0 / spec.masses[k];
    rods.push_back({k, k + 1, spec.lengths[k]});
  }
  auto model = ConstraintModel::Create(inverse_masses, std::move(rods));
  if (!model.ok()) return model.status();

  Pendulum p;
  p.spec_ = spec;
  p.model_ = std::make_unique<ConstraintModel>(*std::move(model));
  p.field_ = std::make_unique<ForceField>();
  const Eigen::Vector3d g =
      spec.planar ? Eigen::Vector3d(0, -spec.gravity, 0) : Eigen::Vector3d(0, 0, -spec.gravity);
  p.field_->Add(std::make_shared<UniformGravity>(g, inverse_masses));
  auto integrator = ConstrainedIntegrator::Create(*p.model_, method, options, p.field_.get(), dt);
  if (!integrator.ok()) return integrator.status();
  p.integrator_ = std::make_unique<ConstrainedIntegrator>(*std::move(integrator));
  spec.InitialState(p.state_.positions, p.state_.velocities);
  return p;
}

absl::StatusOr<StepReport> Pendulum::Step() {
  auto report = integrator_->Step(state_);
  if (report.ok()) time_ += integrator_->dt();
  return report;
}

std::vector<double> Pendulum::Angles() const {
  std::vector<double> angles;
  angles.reserve(spec_.angles.size());
  for (Eigen::Index k = 1; k < state_.positions.cols(); ++k) {
    const Eigen::Vector3d d = state_.positions.col(k) - state_.positions.col(k - 1);
    if (spec_.planar) {
      angles.push_back(std::atan2(d.x(), -d.y()));
    } else {
      angles.push_back(std::atan2(d.head<2>().norm(), -d.z()));
      angles.push_back(std::atan2(d.y(), d.x()));  // atan2(0, 0) = 0 on the vertical
    }
  }
  return angles;
}

std::vector<double> Pendulum::AngularVelocities() const {
  std::vector<double> rates;
  rates.reserve(spec_.angular_velocities.size());
  for (Eigen::Index k = 1; k < state_.positions.cols(); ++k) {
    const Eigen::Vector3d d = state_.positions.col(k) - state_.positions.col(k - 1);
    const Eigen::Vector3d u = state_.velocities.col(k) - state_.velocities.col(k - 1);
    const double l2 = d.squaredNorm();
    if (spec_.planar) {
      rates.push_back((d.x() * u.y() - d.y() * u.x()) / l2);  // (d x u)_z = l^2 phi'
      continue;
    }
    // theta = atan2(rho, -z), alpha = atan2(y, x) differentiated along u.
    const double rho = d.head<2>().norm();
    if (rho <= 1e-12 * std::sqrt(l2)) {
      rates.push_back(u.head<2>().norm() / std::sqrt(l2));
      rates.push_back(0.0);
      continue;
    }
    const double rho_rate = (d.x() * u.x() + d.y() * u.y()) / rho;
    rates.push_back((rho * u.z() - d.z() * rho_rate) / l2);
    rates.push_back((d.x() * u.y() - d.y() * u.x()) / (rho * rho));
  }
  return rates;
}

double Pendulum::KineticEnergy() const {
  return ConstrainedIntegrator::KineticEnergy(*model_, state_.velocities);
}

double Pendulum::PotentialEnergy() const {
  const int height_axis = spec_.planar ? 1 : 2;
  double energy = 0.0;
  for (int k = 0; k < num_bobs(); ++k) {
    energy += spec_.masses[k] * spec_.gravity * state_.positions(height_axis, k + 1);
  }
  return energy;
}

}  // namespace ikd::systems
