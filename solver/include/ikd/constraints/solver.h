// The constraint solvers behind one interface: SHAKE/RATTLE, MILC SHAKE and the matrix method.
//
//   auto solver = ikd::constraints::MakeConstraintSolver(ikd::constraints::Method::kAuto, model,
//                                                        options);
//   auto summary = (*solver)->ProjectPositions(r_old, r_new);   // r_new corrected in place
//   if (summary.ok() && !summary->converged()) { ... summary->message ... }
#pragma once

#include <memory>
#include <string_view>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/model.h"
#include "ikd/constraints/types.h"

namespace ikd::constraints {

class ConstraintSolver {
 public:
  virtual ~ConstraintSolver() = default;
  virtual Method method() const = 0;

  // Moves `positions` (the unconstrained r~(t+dt)) along the link vectors of `reference`
  // (r(t)), weighted by inverse masses, until every |r_ij| = l_ij within the tolerance
  // (Vesely eq. 6-7, Bailey eq. 5-7). Fixed sites never move. Errors: bad shapes, non-finite
  // input, a violated constraint between two fixed sites. Numerical failure: the summary.
  virtual absl::StatusOr<ProjectionSummary> ProjectPositions(const Eigen::Matrix3Xd& reference,
                                                             Eigen::Matrix3Xd& positions) = 0;

  // Removes the relative velocity along every link so that r_ij . v_ij = 0 (Bailey eq. 15,
  // 18-20), weighted by inverse masses.
  virtual absl::StatusOr<ProjectionSummary> ProjectVelocities(const Eigen::Matrix3Xd& positions,
                                                              Eigen::Matrix3Xd& velocities) = 0;
};

// The method kAuto resolves to for this model (never kAuto, kShake or kRattle).
Method ResolveAutoMethod(const ConstraintModel& model);

// A solver for `model`. kShake and kRattle both give the Gauss-Seidel solver. Errors:
// invalid options; kMilcShake on a model that is not made of chains and rings.
// The model must outlive the solver.
absl::StatusOr<std::unique_ptr<ConstraintSolver>> MakeConstraintSolver(
    Method method, const ConstraintModel& model, const ProjectionOptions& options);

}  // namespace ikd::constraints
