#include "ikd/systems/pendulum.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ikd {
namespace {

absl::Status CheckValues(const std::vector<double>& values, const char* field, bool positive) {
  for (size_t k = 0; k < values.size(); ++k) {
    if (!std::isfinite(values[k]) || (positive && values[k] <= 0.0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, "[", k, "] must be finite", positive ? " and > 0" : "", ", got ", values[k]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PendulumSpec::Validate() const {
  const size_t n = masses.size();
  if (n < 1 || n > static_cast<size_t>(kMaxBobs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("masses: need between 1 and ", kMaxBobs, " bobs, got ", n));
  }
  const size_t per_rod = planar ? 1 : 2;
  if (lengths.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("lengths: need ", n, " values (one per bob), got ", lengths.size()));
  }
  if (angles.size() != per_rod * n) {
    return absl::InvalidArgumentError(
        absl::StrCat("angles: need ", per_rod * n, " values, got ", angles.size()));
  }
  if (angular_velocities.size() != per_rod * n) {
    return absl::InvalidArgumentError(absl::StrCat("angular_velocities: need ", per_rod * n,
                                                   " values, got ", angular_velocities.size()));
  }
  if (absl::Status s = CheckValues(masses, "masses", true); !s.ok()) return s;
  if (absl::Status s = CheckValues(lengths, "lengths", true); !s.ok()) return s;
  if (absl::Status s = CheckValues(angles, "angles", false); !s.ok()) return s;
  if (absl::Status s = CheckValues(angular_velocities, "angular_velocities", false); !s.ok()) {
    return s;
  }
  if (!std::isfinite(gravity) || gravity < 0.0) {
    return absl::InvalidArgumentError(absl::StrCat("gravity must be finite and >= 0, got ", gravity));
  }
  return absl::OkStatus();
}

void PendulumSpec::InitialState(Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& velocities) const {
  const int n = static_cast<int>(masses.size());
  positions = Eigen::Matrix3Xd::Zero(3, n + 1);
  velocities = Eigen::Matrix3Xd::Zero(3, n + 1);
  for (int k = 0; k < n; ++k) {
    Eigen::Vector3d dir, rate;
    if (planar) {
      const double phi = angles[k], omega = angular_velocities[k];
      dir << std::sin(phi), -std::cos(phi), 0.0;
      rate << omega * std::cos(phi), omega * std::sin(phi), 0.0;
    } else {
      const double t = angles[2 * k], a = angles[2 * k + 1];
      const double dt = angular_velocities[2 * k], da = angular_velocities[2 * k + 1];
      dir << std::sin(t) * std::cos(a), std::sin(t) * std::sin(a), -std::cos(t);
      rate = dt * Eigen::Vector3d(std::cos(t) * std::cos(a), std::cos(t) * std::sin(a), std::sin(t)) +
             da * Eigen::Vector3d(-std::sin(t) * std::sin(a), std::sin(t) * std::cos(a), 0.0);
    }
    positions.col(k + 1) = positions.col(k) + lengths[k] * dir;
    velocities.col(k + 1) = velocities.col(k) + lengths[k] * rate;
  }
}

absl::StatusOr<Pendulum> Pendulum::Create(const PendulumSpec& spec, Method method,
                                          const ProjectionOptions& options, double dt) {
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  const int n = static_cast<int>(spec.masses.size());
  Eigen::VectorXd inverse_masses(n + 1);
  inverse_masses[0] = 0.0;  // the pivot
  std::vector<DistanceConstraint> rods;
  for (int k = 0; k < n; ++k) {
    inverse_masses[k + 1] = 1.0 / spec.masses[k];
    rods.push_back({k, k + 1, spec.lengths[k]});
  }
  auto model = ConstraintModel::Create(inverse_masses, rods);
  if (!model.ok()) return model.status();
  Pendulum p;
  p.spec_ = spec;
  p.model_ = std::make_unique<ConstraintModel>(*std::move(model));
  p.field_ = std::make_unique<ForceField>();
  const Eigen::Vector3d g = spec.planar ? Eigen::Vector3d(0, -spec.gravity, 0)
                                        : Eigen::Vector3d(0, 0, -spec.gravity);
  p.field_->Add(std::make_shared<UniformGravity>(g, inverse_masses));
  auto integrator = ConstrainedIntegrator::Create(*p.model_, method, options, p.field_.get(), dt);
  if (!integrator.ok()) return integrator.status();
  p.integrator_ = std::make_unique<ConstrainedIntegrator>(*std::move(integrator));
  spec.InitialState(p.state_.positions, p.state_.velocities);
  return p;
}

absl::Status Pendulum::Step() {
  auto report = integrator_->Step(state_);
  if (!report.ok()) return report.status();
  report_ = *report;
  time_ += integrator_->dt();
  return absl::OkStatus();
}

std::vector<double> Pendulum::RodAngles() const {
  std::vector<double> angles;
  for (Eigen::Index k = 1; k < state_.positions.cols(); ++k) {
    const Eigen::Vector3d d = state_.positions.col(k) - state_.positions.col(k - 1);
    angles.push_back(spec_.planar ? std::atan2(d.x(), -d.y())
                                  : std::atan2(d.head<2>().norm(), -d.z()));
  }
  return angles;
}

double Pendulum::KineticEnergy() const {
  return ConstrainedIntegrator::KineticEnergy(*model_, state_.velocities);
}

double Pendulum::PotentialEnergy() const {
  Eigen::Matrix3Xd forces;
  return field_->Evaluate(state_.positions, forces);
}

}  // namespace ikd
