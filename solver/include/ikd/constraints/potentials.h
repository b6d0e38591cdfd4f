// Potentials acting on sites: uniform gravity, the bending potential of an elastic filament
// (Bailey eq. 22-23) and constant external forces. Each adds its force -dU/dr and returns U.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"

namespace ikd::constraints {

class Potential {
 public:
  virtual ~Potential() = default;
  // Adds -dU/dr to `forces` (3 x n) and returns U at `positions`.
  virtual double AddForces(const Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& forces) const = 0;
};

// U = -sum_i m_i g . r_i over movable sites (fixed sites, inverse mass 0, are skipped).
class UniformGravity final : public Potential {
 public:
  UniformGravity(const Eigen::Vector3d& g, Eigen::VectorXd inverse_masses);
  double AddForces(const Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& forces) const override;

 private:
  Eigen::Vector3d g_;
  Eigen::VectorXd inverse_masses_;
};

// U = (A l / 2) sum_i theta_i^2, theta_i the angle between consecutive segments at the middle
// site of each triple (Bailey eq. 22-23).
class BendingPotential final : public Potential {
 public:
  // Triples (i-1, i, i+1); stiffness A >= 0 and segment length l > 0 (InvalidArgument otherwise).
  static absl::StatusOr<BendingPotential> Create(std::vector<std::array<int, 3>> triples,
                                                 double stiffness, double segment_length);
  // All consecutive triples of the chain of sites first .. first + count - 1.
  static absl::StatusOr<BendingPotential> ForChain(int first, int count, double stiffness,
                                                   double segment_length);
  double AddForces(const Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& forces) const override;

 private:
  BendingPotential(std::vector<std::array<int, 3>> triples, double prefactor)
      : triples_(std::move(triples)), prefactor_(prefactor) {}
  std::vector<std::array<int, 3>> triples_;
  double prefactor_;  // A l / 2
};

// Constant forces f_i; U = -sum_i f_i . r_i.
class ExternalForces final : public Potential {
 public:
  explicit ExternalForces(Eigen::Matrix3Xd forces) : forces_(std::move(forces)) {}
  double AddForces(const Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& forces) const override;

 private:
  Eigen::Matrix3Xd forces_;
};

// A sum of potentials.
class ForceField {
 public:
  void Add(std::shared_ptr<const Potential> term) { terms_.push_back(std::move(term)); }
  bool empty() const { return terms_.empty(); }
  // Sets `forces` to the total force (3 x n) and returns the total potential energy.
  double Evaluate(const Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& forces) const;

 private:
  std::vector<std::shared_ptr<const Potential>> terms_;
};

}  // namespace ikd::constraints
