// Internal to the pose area: the input checks and the robust statistics that the calibrator
// (calibrator.cc) and the fitter (pose_fitter.cc) share.
#pragma once

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "ikd/pose/pose_fitter.h"

namespace ikd::pose::internal {

// InvalidArgument "<field> must be <bound>, got <got>".
absl::Status RangeError(const char* field, const char* bound, double got);

// x is finite and within [lo, hi].
bool InRange(double x, double lo, double hi);

// Median of `values` (reordered); 0 when empty.
double Median(std::vector<double>& values);

// Observation k of a frame: finite, within the world's extent, confidence in [0, 1]; else
// InvalidArgument naming the field and the label.
absl::Status CheckObservation(const Observation& o, size_t k);

// InvalidArgument: observation k's label is not one of the skeleton's.
absl::Status UnknownLabel(const Observation& o, size_t k);

}  // namespace ikd::pose::internal
