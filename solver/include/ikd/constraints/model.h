// A validated constraint model: sites with inverse masses, distance constraints and their
// topology. Built once, shared by every solver and integrator.
//
//   auto model = ikd::constraints::ConstraintModel::Create(inverse_masses, constraints);
//   if (!model.ok()) return model.status();  // names the bad field
#pragma once

#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/topology.h"
#include "ikd/constraints/types.h"

namespace ikd::constraints {

class ConstraintModel {
 public:
  // inverse_masses[i] = 1/m_i, 0 for a fixed or kinematically driven site. Errors
  // (InvalidArgument): no sites, a negative or non-finite inverse mass, a site index out of
  // [0, n), i == j, a non-positive or non-finite length, two constraints on the same pair.
  static absl::StatusOr<ConstraintModel> Create(Eigen::VectorXd inverse_masses,
                                                std::vector<DistanceConstraint> constraints);

  int num_sites() const { return static_cast<int>(inverse_masses_.size()); }
  const Eigen::VectorXd& inverse_masses() const { return inverse_masses_; }
  // All constraints as given.
  const std::vector<DistanceConstraint>& constraints() const { return constraints_; }
  // Indices of constraints with at least one movable site: the ones solvers act on.
  const std::vector<int>& active() const { return active_; }
  // Indices of constraints between two fixed sites: checked, never moved.
  const std::vector<int>& frozen() const { return frozen_; }
  // Topology of the active constraints; component constraint indices refer to constraints().
  const ConstraintTopology& topology() const { return topology_; }

  // Max |r_ij - l| / l over all constraints (Bailey eq. 24).
  double MaxRelativeViolation(const Eigen::Matrix3Xd& positions) const;
  // Max |r_ij . v_ij| / (l_ij * max_ij |v_ij|) over all constraints (0 when nothing moves).
  double MaxVelocityViolation(const Eigen::Matrix3Xd& positions,
                              const Eigen::Matrix3Xd& velocities) const;

  // InvalidArgument when the matrix is not 3 x num_sites or holds a non-finite value;
  // `what` names the argument in the message.
  absl::Status CheckCoordinates(const Eigen::Matrix3Xd& m, const char* what) const;
  // InvalidArgument when a frozen constraint (both sites fixed) is violated beyond `tolerance`.
  absl::Status CheckFrozen(const Eigen::Matrix3Xd& positions, double tolerance) const;

 private:
  ConstraintModel() = default;
  Eigen::VectorXd inverse_masses_;
  std::vector<DistanceConstraint> constraints_;
  std::vector<int> active_;
  std::vector<int> frozen_;
  ConstraintTopology topology_;
};

}  // namespace ikd::constraints
