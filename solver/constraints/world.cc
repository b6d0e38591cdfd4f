#include "ikd/world.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ikd {

absl::Status CheckInWorld(const Eigen::Vector3d& v, const std::string& field) {
  if (v.allFinite() && v.cwiseAbs().maxCoeff() <= kWorldExtent) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be finite and within ", kWorldExtent,
                   " m of the origin in every coordinate, got (", v.x(), ", ", v.y(), ", ", v.z(),
                   ")"));
}

absl::Status CheckWorldLength(double length, const std::string& field, bool zero_allowed) {
  const bool positive = zero_allowed ? length >= 0.0 : length > 0.0;
  if (std::isfinite(length) && positive && length <= kWorldExtent) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be finite and in ",
                                                 zero_allowed ? "[0, " : "(0, ", kWorldExtent,
                                                 "] m, got ", length));
}

}  // namespace ikd
