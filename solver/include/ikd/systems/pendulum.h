// The n-fold pendulum of Vesely sec. VII A (problems 1-3) in Cartesian coordinates: a fixed pivot
// (inverse mass 0) and n bobs joined by rigid rods, stepped by the constraint engine with SHAKE
// (position Verlet), RATTLE, MILC SHAKE or the matrix method (velocity Verlet).
//
// Planar pendulums swing in the x-y plane with gravity along -y; angles[k] is rod k's angle from
// the downward vertical (counter-clockwise positive), angular_velocities[k] its rate.
// Spatial pendulums have gravity along -z; rod k has a polar angle theta from the downward
// vertical and an azimuth alpha about +z: direction (sin t cos a, sin t sin a, -cos t);
// angles = [theta_0, alpha_0, theta_1, alpha_1, ...], rates likewise.
//
//   ikd::PendulumSpec spec;
//   spec.masses = {1, 1}; spec.lengths = {1, 1}; spec.angles = {0.5, 1.0};
//   spec.angular_velocities = {0, 0};
//   auto pendulum = ikd::Pendulum::Create(spec, ikd::Method::kRattle, {}, /*dt=*/1e-3);
//   for (int n = 0; n < 1000; ++n) pendulum->Step();
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/integrators.h"

namespace ikd {

struct PendulumSpec {
  bool planar = true;
  std::vector<double> masses;              // n bobs, each finite and > 0
  std::vector<double> lengths;             // n rods, each finite and > 0
  std::vector<double> angles;              // planar: n values; spatial: 2 n
  std::vector<double> angular_velocities;  // same size as angles
  double gravity = 9.81;                   // finite, >= 0 (m/s^2)

  static constexpr int kMaxBobs = 100000;
  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
  // Bob positions and velocities (3 x (n + 1), pivot first at the origin, at rest).
  void InitialState(Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& velocities) const;
};

class Pendulum {
 public:
  static absl::StatusOr<Pendulum> Create(const PendulumSpec& spec, Method method,
                                         const ProjectionOptions& options, double dt);

  // One time step; a projection failure comes back as its status (state unchanged).
  absl::Status Step();

  double time() const { return time_; }
  const Eigen::Matrix3Xd& positions() const { return state_.positions; }
  // For Method::kShake the half-step velocities (see DynamicsState).
  const Eigen::Matrix3Xd& velocities() const { return state_.velocities; }
  // Planar: rod angles from the downward vertical, in (-pi, pi]; spatial: polar angles.
  std::vector<double> RodAngles() const;
  double KineticEnergy() const;
  double PotentialEnergy() const;
  double TotalEnergy() const { return KineticEnergy() + PotentialEnergy(); }
  const ConstraintModel& model() const { return *model_; }
  const StepReport& last_report() const { return report_; }

 private:
  Pendulum() = default;
  PendulumSpec spec_;
  // Heap-held so that the integrator's pointers stay valid when a Pendulum is moved.
  std::unique_ptr<ConstraintModel> model_;
  std::unique_ptr<ForceField> field_;
  std::unique_ptr<ConstrainedIntegrator> integrator_;
  DynamicsState state_;
  StepReport report_;
  double time_ = 0.0;
};

}  // namespace ikd
