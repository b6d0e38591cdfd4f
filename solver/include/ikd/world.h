#pragma once
// The extent of the world every ikd model lives in. Coordinates, lengths and sizes beyond it are
// refused at the API: their squared distances (and sums of them) would leave the double range
// and turn errors, clearances and costs into inf or NaN (fuzzer findings 2, 3, 8, 10 and 12 of
// docs/fuzzing.md). A million metres is far beyond any robot cell and far inside the range.
#include <string>

#include <Eigen/Core>

#include "absl/status/status.h"

namespace ikd {

inline constexpr double kWorldExtent = 1e6;  // m

// OK when every coordinate of `v` is finite and within [-kWorldExtent, kWorldExtent]; otherwise
// InvalidArgument naming `field`, the bound and the value.
absl::Status CheckInWorld(const Eigen::Vector3d& v, const std::string& field);

// OK when `length` is finite and within [0, kWorldExtent] (and > 0 unless `zero_allowed`).
absl::Status CheckWorldLength(double length, const std::string& field, bool zero_allowed);

}  // namespace ikd
