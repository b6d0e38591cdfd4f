// Internal: constructors of the concrete solvers; callers use MakeConstraintSolver.
#pragma once

#include <memory>

#include "ikd/constraints/solver.h"

namespace ikd::constraints::internal {

// Gauss-Seidel SHAKE/RATTLE; `method` is kShake or kRattle (only the reported name differs).
std::unique_ptr<ConstraintSolver> MakeShakeSolver(const ConstraintModel& model,
                                                  const ProjectionOptions& options, Method method);
// Requires model.topology().AllChainsOrRings().
std::unique_ptr<ConstraintSolver> MakeMilcSolver(const ConstraintModel& model,
                                                 const ProjectionOptions& options);
std::unique_ptr<ConstraintSolver> MakeMatrixSolver(const ConstraintModel& model,
                                                   const ProjectionOptions& options);

}  // namespace ikd::constraints::internal
