#include "observations.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ikd/world.h"

namespace ikd::pose::internal {

absl::Status RangeError(const char* field, const char* bound, double got) {
  return absl::InvalidArgumentError(absl::StrCat(field, " must be ", bound, ", got ", got));
}

bool InRange(double x, double lo, double hi) { return std::isfinite(x) && x >= lo && x <= hi; }

// Median of `values` (reordered); 0 when empty.
double Median(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + values.size() / 2;
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return 0.5 * (*middle + *std::max_element(values.begin(), middle));
}

absl::Status CheckObservation(const Observation& o, size_t k) {
  if (!o.position.allFinite()) {
    return absl::InvalidArgumentError(absl::StrCat("observations[", k, "].position (label \"",
                                                   o.label, "\"): non-finite coordinate"));
  }
  // A head at z = -2e289 (found by fuzzing) gave infinite residuals and noise: see ikd/world.h.
  if (o.position.cwiseAbs().maxCoeff() > kWorldExtent) {
    return absl::InvalidArgumentError(absl::StrCat("observations[", k, "].position (label \"",
                                                   o.label, "\"): a coordinate beyond ",
                                                   kWorldExtent, " m"));
  }
  if (!InRange(o.confidence, 0.0, 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("observations[", k, "].confidence (label \"",
                                                   o.label, "\") must be in [0, 1], got ",
                                                   o.confidence));
  }
  return absl::OkStatus();
}

absl::Status UnknownLabel(const Observation& o, size_t k) {
  return absl::InvalidArgumentError(absl::StrCat("observations[", k, "].label: \"", o.label,
                                                 "\" is not a label of the skeleton"));
}

}  // namespace ikd::pose::internal
