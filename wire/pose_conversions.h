// Conversion of the wire skeleton (proto/ikd/v1/pose_service.proto) into the pose solver's
// (solver/include/ikd/pose/skeleton.h), shared by ModelService (stored skeletons) and
// PoseService (inline ones). Errors are INVALID_ARGUMENT naming the request path below `path`
// ("skeleton.spec.bones[2].length").
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "ikd/pose/skeleton.h"
#include "ikd/v1/pose_service.pb.h"
#include "validation.h"

namespace ikd::server {

absl::StatusOr<pose::Skeleton> SkeletonFromProto(const v1::SkeletonSpec& spec,
                                                 const std::string& path,
                                                 const ModelLimits& limits);

}  // namespace ikd::server
