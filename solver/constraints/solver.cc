#include "ikd/constraints/solver.h"

#include "absl/strings/str_cat.h"
#include "solvers.h"

namespace ikd::constraints {

Method ResolveAutoMethod(const ConstraintModel& model) {
  // MILC's O(n) tridiagonal solve beats a general sparse factorization wherever it applies.
  return model.topology().AllChainsOrRings() ? Method::kMilcShake : Method::kMatrix;
}

absl::StatusOr<std::unique_ptr<ConstraintSolver>> MakeConstraintSolver(
    Method method, const ConstraintModel& model, const ProjectionOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (method == Method::kAuto) method = ResolveAutoMethod(model);
  if (options.newton && method != Method::kMatrix) {
    return absl::InvalidArgumentError(
        absl::StrCat("newton: only the MATRIX method relinearizes its iterations, got ",
                     MethodName(method)));
  }
  switch (method) {
    case Method::kShake:
    case Method::kRattle:
      return internal::MakeShakeSolver(model, options, method);
    case Method::kMilcShake:
      if (!model.topology().AllChainsOrRings()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "method MILC_SHAKE needs every constraint component to be an open chain or a ring; "
            "this model is a ", TopologyName(model.topology().kind),
            " (use MATRIX or AUTO)"));
      }
      return internal::MakeMilcSolver(model, options);
    case Method::kMatrix:
      return internal::MakeMatrixSolver(model, options);
    case Method::kAuto:
      break;
  }
  return absl::InvalidArgumentError("method: unknown value");
}

}  // namespace ikd::constraints
