// Skeleton model for pose estimation: named point sites joined by rigid bones, the observation
// labels that map onto sites, and optional joint-angle limits. In the Cartesian picture of the
// constraint engine (Vesely 2013) a bone is a distance constraint |r_i - r_j| = length, so a
// skeleton is a ConstraintModel whose topology is a tree (or, when allowed, a graph).
//
//   auto skeleton = ikd::pose::Skeleton::Create(spec);   // InvalidArgument naming the field
//   auto human = ikd::pose::Skeleton::Human17();         // H36M-style 17 joints, metres
//   int wrist = *human.FindLabel("left_wrist");
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/types.h"

namespace ikd::pose {

// A rigid bone |r_i - r_j| = length between sites i and j (metres).
struct Bone {
  int i = 0;
  int j = 0;
  double length = 0.0;
};

// Bound on the angle at site `center` between the bones center-a and center-b (radians, in
// [0, pi]; pi = the two bones in a straight line). In Cartesian form a bound on |r_a - r_b|
// by the law of cosines, enforced by the fitter as a distance constraint while violated.
struct AngleLimit {
  int a = 0;
  int center = 0;
  int b = 0;
  double min = 0.0;
  double max = 3.141592653589793;
};

// An extra observation label for a site (every site name is already a label of its site).
struct LabelAlias {
  std::string label;
  std::string site;
};

struct SkeletonSpec {
  std::vector<std::string> sites;  // names, unique and non-empty
  std::vector<Bone> bones;         // indices into `sites`, length > 0 and finite
  std::vector<LabelAlias> labels;  // optional aliases (e.g. detector keypoint names)
  std::vector<AngleLimit> limits;  // optional; a and b must each share a bone with center
  // Empty, or 3 x sites: a neutral pose whose bone directions seed the first fitted frame
  // (rescaled to the bone lengths along a spanning tree). Empty: a generated layout.
  Eigen::Matrix3Xd rest_positions;
  // A tree (sites - 1 bones, no cycle) unless true; a connected graph is always required.
  bool allow_cycles = false;
};

class Skeleton {
 public:
  // Errors (InvalidArgument naming the field): fewer than 2 sites, an empty or repeated name
  // or label, a bone index out of range, i == j, a repeated bone, a non-positive or non-finite
  // length, disconnected parts, a cycle when allow_cycles is false, a bad limit (angles out of
  // [0, pi] or min > max, a or b not a bone neighbour of center, a == b, two limits on one
  // pair), rest positions of the wrong shape or non-finite.
  static absl::StatusOr<Skeleton> Create(SkeletonSpec spec);

  // Human 17-joint skeleton in the Human3.6M joint order (pelvis, right_hip, right_knee,
  // right_ankle, left_hip, left_knee, left_ankle, spine, thorax, neck, head, left_shoulder,
  // left_elbow, left_wrist, right_shoulder, right_elbow, right_wrist), 16 bones with adult
  // lengths in metres (~1.75 m stature, anthropometric segment ratios of Winter, "Biomechanics
  // and Motor Control of Human Movement", table 4.1), elbow and knee flexion limits, z up.
  static Skeleton Human17();
  // A serial arm: sites base, joint_1 .. joint_{n-1}, hand; n limbs of `limb_length` metres,
  // straight along +x at rest. Requires 1 <= num_limbs <= 1000 and a positive finite length
  // (InvalidArgument otherwise).
  static absl::StatusOr<Skeleton> Arm(int num_limbs, double limb_length);

  // The same skeleton with new bone lengths (one per bone, in bone order), e.g. calibrated.
  absl::StatusOr<Skeleton> WithBoneLengths(const std::vector<double>& lengths) const;

  int num_sites() const { return static_cast<int>(spec_.sites.size()); }
  int num_bones() const { return static_cast<int>(spec_.bones.size()); }
  const std::vector<std::string>& site_names() const { return spec_.sites; }
  const std::vector<Bone>& bones() const { return spec_.bones; }
  const std::vector<AngleLimit>& limits() const { return spec_.limits; }
  const SkeletonSpec& spec() const { return spec_; }
  bool is_tree() const { return num_bones() == num_sites() - 1; }

  // Site of an observation label (a site name or an alias), or nullopt.
  std::optional<int> FindLabel(std::string_view label) const;
  // Site index by name, or nullopt.
  std::optional<int> FindSite(std::string_view name) const;

  // The bones as distance constraints (same order).
  std::vector<constraints::DistanceConstraint> BoneConstraints() const;
  // Neutral pose: the rest directions with exact bone lengths along a breadth-first spanning
  // tree from site 0 (closing bones of cycles are only as exact as the given rest pose).
  const Eigen::Matrix3Xd& rest_pose() const { return rest_pose_; }
  // That spanning tree: the sites in breadth-first order (site 0 first) and each site's parent
  // in it (-1 for site 0), for forward kinematics over the skeleton.
  const std::vector<int>& tree_order() const { return tree_order_; }
  const std::vector<int>& tree_parents() const { return tree_parents_; }
  // Distance |r_a - r_b| at which `limit` sits at `angle` (law of cosines).
  double SpanAtAngle(const AngleLimit& limit, double angle) const;
  // Angle at limit.center between its two bones in `sites` (radians, [0, pi]).
  static double AngleAt(const AngleLimit& limit, const Eigen::Matrix3Xd& sites);
  // Length of the bone joining a and b (both orders), or nullopt.
  std::optional<double> BoneLength(int a, int b) const;

 private:
  explicit Skeleton(SkeletonSpec spec);
  void BuildIndex();
  void BuildRestPose();

  SkeletonSpec spec_;
  std::vector<std::pair<std::string, int>> label_index_;  // sorted by label
  std::vector<std::pair<std::string, int>> site_index_;   // sorted by name
  Eigen::Matrix3Xd rest_pose_;
  std::vector<int> tree_order_;
  std::vector<int> tree_parents_;
};

}  // namespace ikd::pose
