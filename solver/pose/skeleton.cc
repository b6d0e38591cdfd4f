#include "ikd/pose/skeleton.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <queue>
#include <set>

#include <Eigen/Geometry>

#include "absl/strings/str_cat.h"

namespace ikd::pose {
namespace {

using SortedIndex = std::vector<std::pair<std::string, int>>;

absl::Status FieldError(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

std::optional<int> Lookup(const SortedIndex& index, std::string_view key) {
  auto it = std::lower_bound(index.begin(), index.end(), key,
                             [](const auto& entry, std::string_view k) { return entry.first < k; });
  if (it == index.end() || it->first != key) return std::nullopt;
  return it->second;
}

absl::Status CheckNames(const SkeletonSpec& spec) {
  if (spec.sites.size() < 2) return FieldError("sites", "a skeleton needs at least 2 sites");
  std::set<std::string_view> seen;
  for (size_t k = 0; k < spec.sites.size(); ++k) {
    const std::string field = absl::StrCat("sites[", k, "]");
    if (spec.sites[k].empty()) return FieldError(field, "empty name");
    if (!seen.insert(spec.sites[k]).second) {
      return FieldError(field, absl::StrCat("name \"", spec.sites[k], "\" is repeated"));
    }
  }
  for (size_t k = 0; k < spec.labels.size(); ++k) {
    const std::string field = absl::StrCat("labels[", k, "]");
    if (spec.labels[k].label.empty()) return FieldError(field + ".label", "empty label");
    if (!seen.insert(spec.labels[k].label).second) {
      return FieldError(field + ".label", absl::StrCat("\"", spec.labels[k].label,
                                                       "\" is already a site name or label"));
    }
    if (std::find(spec.sites.begin(), spec.sites.end(), spec.labels[k].site) == spec.sites.end()) {
      return FieldError(field + ".site",
                        absl::StrCat("no site named \"", spec.labels[k].site, "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBones(const SkeletonSpec& spec) {
  const int n = static_cast<int>(spec.sites.size());
  if (spec.bones.empty()) return FieldError("bones", "a skeleton needs at least 1 bone");
  std::set<std::pair<int, int>> pairs;
  for (size_t k = 0; k < spec.bones.size(); ++k) {
    const Bone& b = spec.bones[k];
    const std::string field = absl::StrCat("bones[", k, "]");
    if (b.i < 0 || b.i >= n)
      return FieldError(field + ".i", absl::StrCat("site ", b.i, " not in [0, ", n, ")"));
    if (b.j < 0 || b.j >= n)
      return FieldError(field + ".j", absl::StrCat("site ", b.j, " not in [0, ", n, ")"));
    if (b.i == b.j) return FieldError(field, "a bone joins two different sites (i == j)");
    if (!std::isfinite(b.length) || b.length <= 0.0) {
      return FieldError(field + ".length", absl::StrCat("must be finite and > 0, got ", b.length));
    }
    if (!pairs.insert(std::minmax(b.i, b.j)).second) {
      return FieldError(field,
                        absl::StrCat("sites ", b.i, " and ", b.j, " are already joined by a bone"));
    }
  }
  return absl::OkStatus();
}

// Union-find over the bones: connectivity, and a cycle whenever a bone joins one component.
absl::Status CheckGraph(const SkeletonSpec& spec) {
  const int n = static_cast<int>(spec.sites.size());
  std::vector<int> root(n);
  for (int k = 0; k < n; ++k) root[k] = k;
  auto find = [&](int k) {
    while (root[k] != k) k = root[k] = root[root[k]];
    return k;
  };
  int components = n;
  for (size_t k = 0; k < spec.bones.size(); ++k) {
    const int a = find(spec.bones[k].i), b = find(spec.bones[k].j);
    if (a == b) {
      if (spec.allow_cycles) continue;
      return FieldError(absl::StrCat("bones[", k, "]"),
                        "closes a cycle; a tree is required (set allow_cycles for a graph)");
    }
    root[a] = b;
    --components;
  }
  if (components > 1) {
    for (int k = 1; k < n; ++k) {
      if (find(k) != find(0)) {
        return FieldError("bones",
                          absl::StrCat("the skeleton is disconnected: site \"", spec.sites[k],
                                       "\" is not connected to \"", spec.sites[0], "\""));
      }
    }
  }
  return absl::OkStatus();
}

bool Joined(const SkeletonSpec& spec, int a, int b) {
  return std::any_of(spec.bones.begin(), spec.bones.end(), [&](const Bone& bone) {
    return (bone.i == a && bone.j == b) || (bone.i == b && bone.j == a);
  });
}

absl::Status CheckLimits(const SkeletonSpec& spec) {
  const int n = static_cast<int>(spec.sites.size());
  std::set<std::pair<int, int>> spans;
  for (size_t k = 0; k < spec.limits.size(); ++k) {
    const AngleLimit& l = spec.limits[k];
    const std::string field = absl::StrCat("limits[", k, "]");
    for (int s : {l.a, l.center, l.b}) {
      if (s < 0 || s >= n)
        return FieldError(field, absl::StrCat("site ", s, " not in [0, ", n, ")"));
    }
    if (l.a == l.b) return FieldError(field, "a and b must differ");
    if (!Joined(spec, l.a, l.center) || !Joined(spec, l.b, l.center)) {
      return FieldError(field, "a and b must each be joined to center by a bone");
    }
    if (Joined(spec, l.a, l.b))
      return FieldError(field, "a and b are joined by a bone: the angle is fixed");
    if (!(l.min >= 0.0 && l.min <= l.max && l.max <= std::numbers::pi)) {
      return FieldError(field,
                        absl::StrCat("need 0 <= min <= max <= pi, got [", l.min, ", ", l.max, "]"));
    }
    if (!spans.insert(std::minmax(l.a, l.b)).second) {
      return FieldError(field, "a second limit on the same pair of sites");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckRest(const SkeletonSpec& spec) {
  if (spec.rest_positions.size() == 0) return absl::OkStatus();
  if (spec.rest_positions.cols() != static_cast<Eigen::Index>(spec.sites.size())) {
    return FieldError("rest_positions", absl::StrCat("need 3 x ", spec.sites.size(), ", got 3 x ",
                                                     spec.rest_positions.cols()));
  }
  if (!spec.rest_positions.allFinite()) return FieldError("rest_positions", "non-finite value");
  return absl::OkStatus();
}

// A fixed, well-spread unit direction per site (golden-angle spiral) for generated rest poses.
Eigen::Vector3d SpreadDirection(int k) {
  const double z = 1.0 - 2.0 * ((k * 0.618033988749895) - std::floor(k * 0.618033988749895));
  const double phi = 2.399963229728653 * k;
  const double rho = std::sqrt(std::max(0.0, 1.0 - z * z));
  return {rho * std::cos(phi), rho * std::sin(phi), z};
}

}  // namespace

absl::StatusOr<Skeleton> Skeleton::Create(SkeletonSpec spec) {
  for (absl::Status s : {CheckNames(spec), CheckBones(spec)}) {
    if (!s.ok()) return s;
  }
  for (absl::Status s : {CheckGraph(spec), CheckLimits(spec), CheckRest(spec)}) {
    if (!s.ok()) return s;
  }
  return Skeleton(std::move(spec));
}

Skeleton::Skeleton(SkeletonSpec spec) : spec_(std::move(spec)) {
  BuildIndex();
  BuildRestPose();
}

void Skeleton::BuildIndex() {
  for (int k = 0; k < num_sites(); ++k) {
    site_index_.emplace_back(spec_.sites[k], k);
    label_index_.emplace_back(spec_.sites[k], k);
  }
  for (const LabelAlias& alias : spec_.labels) {
    label_index_.emplace_back(alias.label, *Lookup(site_index_, alias.site));
  }
  std::sort(site_index_.begin(), site_index_.end());
  std::sort(label_index_.begin(), label_index_.end());
}

// Breadth-first from site 0: each child sits at its parent plus the bone length along the rest
// direction, so every spanning-tree bone has its exact length.
void Skeleton::BuildRestPose() {
  const int n = num_sites();
  std::vector<std::vector<std::pair<int, double>>> neighbours(n);
  for (const Bone& b : spec_.bones) {
    neighbours[b.i].push_back({b.j, b.length});
    neighbours[b.j].push_back({b.i, b.length});
  }
  const bool given = spec_.rest_positions.size() != 0;
  rest_pose_ = Eigen::Matrix3Xd::Zero(3, n);
  if (given) rest_pose_.col(0) = spec_.rest_positions.col(0);
  std::vector<bool> placed(n, false);
  placed[0] = true;
  tree_order_.clear();
  tree_parents_.assign(n, -1);
  std::queue<int> queue;
  queue.push(0);
  while (!queue.empty()) {
    const int parent = queue.front();
    queue.pop();
    tree_order_.push_back(parent);
    for (const auto& [child, length] : neighbours[parent]) {
      if (placed[child]) continue;
      Eigen::Vector3d direction = SpreadDirection(child);
      if (given) {
        const Eigen::Vector3d d =
            spec_.rest_positions.col(child) - spec_.rest_positions.col(parent);
        if (d.norm() > 0.0) direction = d.normalized();
      }
      rest_pose_.col(child) = rest_pose_.col(parent) + length * direction;
      placed[child] = true;
      tree_parents_[child] = parent;
      queue.push(child);
    }
  }
}

absl::StatusOr<Skeleton> Skeleton::WithBoneLengths(const std::vector<double>& lengths) const {
  if (lengths.size() != spec_.bones.size()) {
    return FieldError("lengths", absl::StrCat("need one per bone (", spec_.bones.size(), "), got ",
                                              lengths.size()));
  }
  SkeletonSpec spec = spec_;
  for (size_t k = 0; k < lengths.size(); ++k) spec.bones[k].length = lengths[k];
  if (spec.rest_positions.size() == 0) spec.rest_positions = rest_pose_;  // keep the layout
  return Create(std::move(spec));
}

std::optional<int> Skeleton::FindLabel(std::string_view label) const {
  return Lookup(label_index_, label);
}

std::optional<int> Skeleton::FindSite(std::string_view name) const {
  return Lookup(site_index_, name);
}

std::vector<constraints::DistanceConstraint> Skeleton::BoneConstraints() const {
  std::vector<constraints::DistanceConstraint> out;
  out.reserve(spec_.bones.size());
  for (const Bone& b : spec_.bones) out.push_back({b.i, b.j, b.length});
  return out;
}

std::optional<double> Skeleton::BoneLength(int a, int b) const {
  for (const Bone& bone : spec_.bones) {
    if ((bone.i == a && bone.j == b) || (bone.i == b && bone.j == a)) return bone.length;
  }
  return std::nullopt;
}

double Skeleton::SpanAtAngle(const AngleLimit& limit, double angle) const {
  const double la = *BoneLength(limit.a, limit.center);
  const double lb = *BoneLength(limit.b, limit.center);
  return std::sqrt(std::max(0.0, la * la + lb * lb - 2.0 * la * lb * std::cos(angle)));
}

double Skeleton::AngleAt(const AngleLimit& limit, const Eigen::Matrix3Xd& sites) {
  const Eigen::Vector3d u = sites.col(limit.a) - sites.col(limit.center);
  const Eigen::Vector3d v = sites.col(limit.b) - sites.col(limit.center);
  return std::atan2(u.cross(v).norm(), u.dot(v));  // accurate near 0 and pi, unlike acos
}

// ---- presets ----

Skeleton Skeleton::Human17() {
  SkeletonSpec spec;
  spec.sites = {"pelvis",      "right_hip",     "right_knee", "right_ankle", "left_hip",
                "left_knee",   "left_ankle",    "spine",      "thorax",      "neck",
                "head",        "left_shoulder", "left_elbow", "left_wrist",  "right_shoulder",
                "right_elbow", "right_wrist"};
  // Limb lengths: fractions of a 1.75 m stature (upper arm 0.186, forearm 0.146, thigh 0.245,
  // shank 0.246, after Drillis & Contini); hip, torso and shoulder splits are plausible values.
  spec.bones = {{0, 1, 0.12},    {1, 2, 0.429}, {2, 3, 0.431},   {0, 4, 0.12},
                {4, 5, 0.429},   {5, 6, 0.431}, {0, 7, 0.22},    {7, 8, 0.25},
                {8, 9, 0.10},    {9, 10, 0.15}, {8, 11, 0.17},   {11, 12, 0.326},
                {12, 13, 0.256}, {8, 14, 0.17}, {14, 15, 0.326}, {15, 16, 0.256}};
  // Elbows flex to ~150 deg and knees to ~140 deg: the included angle stays above pi minus that.
  spec.limits = {{11, 12, 13, 0.5, std::numbers::pi},
                 {14, 15, 16, 0.5, std::numbers::pi},
                 {1, 2, 3, 0.7, std::numbers::pi},
                 {4, 5, 6, 0.7, std::numbers::pi}};
  // Standing, facing -y, x to the subject's left, z up; arms hang slightly abducted and bent.
  Eigen::Matrix3Xd rest(3, 17);
  // clang-format off
  rest << 0, -0.12, -0.12, -0.12, 0.12, 0.12, 0.12, 0, 0, 0, 0, 0.17, 0.22, 0.25, -0.17, -0.22, -0.25,
      0, 0, 0.01, 0, 0, 0.01, 0, 0, 0, 0, -0.02, 0, 0, -0.08, 0, 0, -0.08,
      0.95, 0.95, 0.52, 0.09, 0.95, 0.52, 0.09, 1.17, 1.42, 1.52, 1.67, 1.45, 1.13, 0.88, 1.45, 1.13, 0.88;
  // clang-format on
  spec.rest_positions = rest;
  return *Create(std::move(spec));
}

absl::StatusOr<Skeleton> Skeleton::Arm(int num_limbs, double limb_length) {
  if (num_limbs < 1 || num_limbs > 1000) {
    return FieldError("num_limbs", absl::StrCat("must be in [1, 1000], got ", num_limbs));
  }
  SkeletonSpec spec;
  spec.sites.push_back("base");
  for (int k = 1; k < num_limbs; ++k) spec.sites.push_back(absl::StrCat("joint_", k));
  spec.sites.push_back("hand");
  spec.rest_positions = Eigen::Matrix3Xd::Zero(3, num_limbs + 1);
  for (int k = 0; k < num_limbs; ++k) {
    spec.bones.push_back({k, k + 1, limb_length});
    spec.rest_positions(0, k + 1) = (k + 1) * limb_length;
  }
  if (!std::isfinite(spec.rest_positions.sum()))
    spec.rest_positions.resize(3, 0);  // Create names the length
  return Create(std::move(spec));
}

}  // namespace ikd::pose
