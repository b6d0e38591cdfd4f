#include "pose_conversions.h"

#include "absl/strings/str_cat.h"
#include "conversions.h"
#include "errors.h"

namespace ikd::server {
namespace {

pose::SkeletonSpec SpecFromProto(const v1::SkeletonSpec& wire) {
  pose::SkeletonSpec spec;
  spec.sites.assign(wire.sites().begin(), wire.sites().end());
  for (const v1::SkeletonBone& b : wire.bones()) spec.bones.push_back({b.i(), b.j(), b.length()});
  for (const v1::SkeletonLabel& l : wire.labels()) spec.labels.push_back({l.label(), l.site()});
  for (const v1::SkeletonAngleLimit& l : wire.limits()) {
    spec.limits.push_back({l.a(), l.center(), l.b(), l.min(), l.max()});
  }
  if (wire.rest_positions_size() > 0) {
    spec.rest_positions.resize(3, wire.rest_positions_size());
    for (int k = 0; k < wire.rest_positions_size(); ++k) {
      spec.rest_positions.col(k) = FromProto(wire.rest_positions(k));
    }
  }
  spec.allow_cycles = wire.allow_cycles();
  return spec;
}

}  // namespace

absl::StatusOr<pose::Skeleton> SkeletonFromProto(const v1::SkeletonSpec& spec,
                                                 const std::string& path,
                                                 const ModelLimits& limits) {
  if (spec.sites_size() > limits.max_skeleton_sites) {
    return FieldViolation(absl::StrCat(path, ".sites"),
                          absl::StrCat("at most ", limits.max_skeleton_sites, " sites, got ",
                                       spec.sites_size()));
  }
  for (const auto& [field, count] : {std::pair{"bones", spec.bones_size()},
                                     std::pair{"limits", spec.limits_size()}}) {
    if (count > limits.max_skeleton_bones) {
      return FieldViolation(absl::StrCat(path, ".", field),
                            absl::StrCat("at most ", limits.max_skeleton_bones, " ", field,
                                         ", got ", count));
    }
  }
  absl::StatusOr<pose::Skeleton> skeleton = pose::Skeleton::Create(SpecFromProto(spec));
  if (skeleton.ok()) return skeleton;
  return SolverFieldViolation(skeleton.status(), [&](const std::string& field) {
    return field.empty() ? path : absl::StrCat(path, ".", field);
  });
}

}  // namespace ikd::server
