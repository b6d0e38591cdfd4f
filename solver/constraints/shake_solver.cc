// SHAKE (Ryckaert 1977) and the velocity half of RATTLE (Andersen 1983): one constraint at a
// time, swept until every constraint holds (Gauss-Seidel-Newton).
#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "solver_base.h"
#include "solvers.h"

namespace ikd::constraints::internal {
namespace {

class ShakeSolver final : public SolverBase {
 public:
  ShakeSolver(const ConstraintModel& model, const ProjectionOptions& options, Method method)
      : SolverBase(model, options), method_(method) {}
  Method method() const override { return method_; }

 protected:
  ProjectionSummary DoProjectPositions(const Eigen::Matrix3Xd& reference,
                                       Eigen::Matrix3Xd& positions) override {
    const Eigen::VectorXd& w = model_.inverse_masses();
    const auto& constraints = model_.constraints();
    for (int sweep = 1; sweep <= options_.max_iterations; ++sweep) {
      double worst = 0.0;
      for (int k : model_.active()) {
        const DistanceConstraint& c = constraints[k];
        const Eigen::Vector3d d = positions.col(c.i) - positions.col(c.j);
        const double d2 = d.squaredNorm();
        const double l2 = c.length * c.length;
        const double violation = std::abs(std::sqrt(d2) - c.length) / c.length;
        worst = MaxKeepingNan(worst, violation);
        if (violation <= options_.tolerance) continue;
        const Eigen::Vector3d d_ref = reference.col(c.i) - reference.col(c.j);
        const double alignment = d.dot(d_ref);
        // Vesely eq. 13 / Bailey eq. 8: g = (l^2 - d^2) / (2 (w_i + w_j) d . d_ref).
        if (!(alignment > 1e-10 * l2)) {
          return Singular(sweep, absl::StrFormat(
              "constraints[%d]: link turned 90 degrees or more away from its reference "
              "direction (r_ij . r_ij(ref) = %.3g); reduce the step",
              k, alignment));
        }
        const double g = (l2 - d2) / (2.0 * (w[c.i] + w[c.j]) * alignment);
        positions.col(c.i) += (w[c.i] * g) * d_ref;
        positions.col(c.j) -= (w[c.j] * g) * d_ref;
      }
      if (worst <= options_.tolerance) return Converged(sweep, worst);
    }
    return NotConverged(options_.max_iterations, model_.MaxRelativeViolation(positions));
  }

  ProjectionSummary DoProjectVelocities(const Eigen::Matrix3Xd& positions,
                                        Eigen::Matrix3Xd& velocities) override {
    const Eigen::VectorXd& w = model_.inverse_masses();
    const auto& constraints = model_.constraints();
    for (int sweep = 1; sweep <= options_.max_iterations; ++sweep) {
      // The scale of the current velocities, as MaxVelocityViolation measures it: a sweep that
      // changes nothing then reports exactly the violation of its output.
      double v_scale = 0.0;
      for (int k : model_.active()) {
        const DistanceConstraint& c = constraints[k];
        v_scale = MaxKeepingNan(v_scale, (velocities.col(c.i) - velocities.col(c.j)).norm());
      }
      if (v_scale == 0.0) return Converged(sweep - 1, 0.0);
      double worst = 0.0;
      for (int k : model_.active()) {
        const DistanceConstraint& c = constraints[k];
        const Eigen::Vector3d d = positions.col(c.i) - positions.col(c.j);
        const double along = d.dot(velocities.col(c.i) - velocities.col(c.j));
        const double violation = std::abs(along) / (c.length * v_scale);
        worst = MaxKeepingNan(worst, violation);
        if (violation <= options_.tolerance) continue;
        // Vesely eq. 16: delta^V = mu (r_ij . v'_ij) / l^2, with the current |r_ij|^2.
        const double g = -along / ((w[c.i] + w[c.j]) * d.squaredNorm());
        velocities.col(c.i) += (w[c.i] * g) * d;
        velocities.col(c.j) -= (w[c.j] * g) * d;
      }
      if (worst <= options_.tolerance) return Converged(sweep, worst);
    }
    return NotConverged(options_.max_iterations,
                        model_.MaxVelocityViolation(positions, velocities));
  }

 private:
  Method method_;
};

}  // namespace

std::unique_ptr<ConstraintSolver> MakeShakeSolver(const ConstraintModel& model,
                                                  const ProjectionOptions& options,
                                                  Method method) {
  return std::make_unique<ShakeSolver>(model, options, method);
}

}  // namespace ikd::constraints::internal
