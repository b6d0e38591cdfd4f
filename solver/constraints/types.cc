#include "ikd/constraints/types.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ikd::constraints {

const char* MethodName(Method method) {
  switch (method) {
    case Method::kShake: return "SHAKE";
    case Method::kRattle: return "RATTLE";
    case Method::kMilcShake: return "MILC_SHAKE";
    case Method::kMatrix: return "MATRIX";
    case Method::kAuto: return "AUTO";
  }
  return "UNKNOWN";
}

const char* OutcomeName(ProjectionOutcome outcome) {
  switch (outcome) {
    case ProjectionOutcome::kConverged: return "CONVERGED";
    case ProjectionOutcome::kNotConverged: return "NOT_CONVERGED";
    case ProjectionOutcome::kSingular: return "SINGULAR";
    case ProjectionOutcome::kNonFinite: return "NON_FINITE";
  }
  return "UNKNOWN";
}

absl::Status ProjectionOptions::Validate() const {
  // Below ~1e-15 relative the rounding of |r|^2 itself dominates: such a tolerance never holds.
  if (!std::isfinite(tolerance) || tolerance < 1e-15 || tolerance > 0.1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tolerance must be in [1e-15, 0.1], got ", tolerance));
  }
  if (max_iterations < 1 || max_iterations > 10'000'000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_iterations must be in [1, 10000000], got ", max_iterations));
  }
  return absl::OkStatus();
}

absl::Status ProjectionSummary::ToStatus() const {
  switch (outcome) {
    case ProjectionOutcome::kConverged: return absl::OkStatus();
    case ProjectionOutcome::kNotConverged: return absl::AbortedError(message);
    case ProjectionOutcome::kSingular: return absl::FailedPreconditionError(message);
    case ProjectionOutcome::kNonFinite: return absl::OutOfRangeError(message);
  }
  return absl::InternalError(message);
}

}  // namespace ikd::constraints
