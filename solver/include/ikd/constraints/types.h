// Basic value types of the constraint engine: distance constraints, solver options and the
// summary every projection returns.
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace ikd::constraints {

// A rigid distance |r_i - r_j| = length between two sites (a bond, a limb).
struct DistanceConstraint {
  int i = 0;
  int j = 0;
  double length = 0.0;
};

// Which algorithm restores the constraints.
enum class Method {
  kShake,      // Gauss-Seidel over constraints (Ryckaert 1977); with position Verlet.
  kRattle,     // SHAKE iteration for positions and velocities (Andersen 1983); velocity Verlet.
  kMilcShake,  // Tridiagonal (cyclic for rings) chord iteration (Bailey 2008); chains and rings.
  kMatrix,     // Sparse LDLT of B W B^T, chord iteration (Ciccotti-Ryckaert); any topology.
  kAuto,       // MILC SHAKE where every component is a chain or ring, else the matrix method.
};
const char* MethodName(Method method);

// Options shared by every projection method.
struct ProjectionOptions {
  // Largest accepted relative violation |r_ij - l| / l (Bailey eq. 24); for velocities the
  // largest |r_ij . v_ij| / (l_ij * max|v_ij|).
  double tolerance = 1e-10;
  // Iteration cap (SHAKE sweeps, chord iterations). Hitting it is an outcome, not a crash.
  int max_iterations = 1000;
  // MATRIX only (other methods refuse it): after the first correction along the reference
  // links, relinearize at the current iterate whenever an iteration shrank the violation less
  // than 100-fold and one more step at that rate would not reach the tolerance (Newton's
  // method on the constraints, keeping the factorization while it converges fast) instead of
  // chord iterations with the reference links' matrix. Near the
  // constraint surface that converges (super)quadratically, where the chord iteration converges
  // linearly at a rate set by how far the links turn; the result is a point of the surface near
  // the input, not the constrained dynamics' step (the constraint forces no longer lie along the
  // reference links). For inverse kinematics, where only the configuration matters. A violation
  // that grows from the fourth iteration on ends the projection as not converged (diverging).
  bool newton = false;

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

enum class ProjectionOutcome {
  kConverged,
  kNotConverged,  // iteration cap reached; positions hold the last iterate
  kSingular,      // linearized constraint matrix singular (collinear/rank-deficient/over-rotated)
  kNonFinite,     // NaN or infinity appeared
};
const char* OutcomeName(ProjectionOutcome outcome);

// What one projection did. Numerical failure is reported here, inside an OK StatusOr.
struct ProjectionSummary {
  ProjectionOutcome outcome = ProjectionOutcome::kConverged;
  int iterations = 0;
  double max_relative_violation = 0.0;
  std::string message;  // empty when converged

  bool converged() const { return outcome == ProjectionOutcome::kConverged; }
  // OK when converged; otherwise a non-OK status carrying `message` (ABORTED for
  // non-convergence, FAILED_PRECONDITION for a singular system, OUT_OF_RANGE for non-finite).
  absl::Status ToStatus() const;
};

// max(a, b) that keeps a NaN (std::max drops a NaN second argument): a violation computed from
// non-finite coordinates must never look like 0 and so "converged".
inline double MaxKeepingNan(double a, double b) { return (b > a || std::isnan(b)) ? b : a; }

}  // namespace ikd::constraints
