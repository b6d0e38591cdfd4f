// The n-fold pendulum of Vesely sec. VII A (problems 1-3) in Cartesian coordinates: a fixed pivot
// (site 0, inverse mass 0) and n bobs joined by rigid rods, stepped by the constraint engine with
// SHAKE (position Verlet), or RATTLE, MILC SHAKE, the matrix method or kAuto (velocity Verlet).
//
// Planar pendulums swing in the x-y plane with gravity along -y: angles[k] is rod k's absolute
// angle from the downward vertical (counter-clockwise positive) and angular_velocities[k] its rate,
// so rod k points along (sin phi, -cos phi, 0).
// Spatial pendulums have gravity along -z: rod k has a polar angle theta from the downward
// vertical and an azimuth alpha about +z, pointing along (sin t cos a, sin t sin a, -cos t);
// angles = [theta_0, alpha_0, theta_1, alpha_1, ...] and angular_velocities likewise.
//
//   ikd::systems::PendulumSpec spec;
//   spec.masses = {1, 1};
//   spec.lengths = {1, 1};
//   spec.angles = {0.5, 1.0};
//   spec.angular_velocities = {0, 0};
//   auto pendulum = ikd::systems::Pendulum::Create(spec, ikd::constraints::Method::kRattle, {},
//                                                  /*dt=*/1e-3);
//   if (!pendulum.ok()) return pendulum.status();   // names the bad field
//   for (int n = 0; n < 1000; ++n) {
//     auto report = pendulum->Step();                // non-convergence -> non-OK status
//   }
//   double energy = pendulum->TotalEnergy();
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/integrators.h"

namespace ikd::systems {

struct PendulumSpec {
  bool planar = true;
  std::vector<double> masses;              // n bobs, 1 <= n <= kMaxBobs, each finite and > 0
  std::vector<double> lengths;             // n rods, each finite and > 0
  std::vector<double> angles;              // radians; planar: n values, spatial: 2 n
  std::vector<double> angular_velocities;  // rad/s; same size as angles
  double gravity = 9.81;                   // g >= 0, finite (length units / s^2)

  // Beyond a few thousand links a pendulum is a polymer: use the chain tools instead.
  static constexpr int kMaxBobs = 10000;

  int num_bobs() const { return static_cast<int>(masses.size()); }
  // Angles per rod: 1 (planar) or 2 (spatial).
  int angles_per_rod() const { return planar ? 1 : 2; }
  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
  // Positions and velocities (3 x (n + 1)), the pivot first at the origin and at rest.
  // Requires a valid spec.
  void InitialState(Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& velocities) const;
};

class Pendulum {
 public:
  // Errors (InvalidArgument): an invalid spec, options or dt (finite and > 0).
  static absl::StatusOr<Pendulum> Create(const PendulumSpec& spec, constraints::Method method,
                                         const constraints::ProjectionOptions& options, double dt);

  // Advances by dt. A projection that does not converge comes back as its status (ABORTED,
  // FAILED_PRECONDITION, OUT_OF_RANGE; see ConstrainedIntegrator::Step) and leaves the state.
  absl::StatusOr<constraints::StepReport> Step();

  int num_bobs() const { return spec_.num_bobs(); }
  constraints::Method method() const { return integrator_->method(); }
  double dt() const { return integrator_->dt(); }
  double time() const { return time_; }
  // 3 x (n + 1): the pivot (column 0, the origin) and the bobs.
  const Eigen::Matrix3Xd& positions() const { return state_.positions; }
  // On-step velocities, except for Method::kShake after the first step: position Verlet only
  // has the half-step velocities (r(t) - r(t - dt)) / dt (see DynamicsState).
  const Eigen::Matrix3Xd& velocities() const { return state_.velocities; }

  // Same layout as PendulumSpec::angles. Planar: absolute rod angles in (-pi, pi]. Spatial:
  // polar angle in [0, pi] and azimuth in (-pi, pi] (0 when the rod is vertical).
  std::vector<double> Angles() const;
  // Same layout as PendulumSpec::angular_velocities, from velocities() (see the kShake caveat).
  // Spatial, rod along the vertical: the polar rate is |horizontal relative velocity| / l and
  // the azimuthal rate 0 (the azimuth is undefined there).
  std::vector<double> AngularVelocities() const;

  // sum m v^2 / 2 over the bobs (with velocities(): half-step values for kShake).
  double KineticEnergy() const;
  // sum m g h over the bobs, h the height above the pivot.
  double PotentialEnergy() const;
  double TotalEnergy() const { return KineticEnergy() + PotentialEnergy(); }

  const PendulumSpec& spec() const { return spec_; }
  const constraints::ConstraintModel& model() const { return *model_; }

 private:
  Pendulum() = default;
  PendulumSpec spec_;
  // Heap-held so that the integrator's pointers stay valid when a Pendulum is moved.
  std::unique_ptr<constraints::ConstraintModel> model_;
  std::unique_ptr<constraints::ForceField> field_;
  std::unique_ptr<constraints::ConstrainedIntegrator> integrator_;
  constraints::DynamicsState state_;
  double time_ = 0.0;
};

}  // namespace ikd::systems
