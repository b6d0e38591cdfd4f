// Arm model of the Cartesian IK engine (Kastenmeier & Vesely 1996; Vesely 2013 sec. VII B):
// joints are sites, limbs are rigid distance constraints, the base site is fixed and the hand
// site is driven. Joint angles are read from the site geometry and rebuilt by forward kinematics.
//
// Frames: the arm frame is the base pose (position p_WB, orientation R_WB). Planar arms move in
// the arm frame's x-y plane. Angles:
//  - planar: angles[0] is the first limb's angle from the arm-frame x axis; angles[k] (k >= 1)
//    is the signed relative angle from limb k-1 to limb k (counter-clockwise about +z), in
//    (-pi, pi].
//  - spatial: per limb k a bend angle (angle between the previous direction t and the limb,
//    in [0, pi]) and an azimuth (angle of the limb's component normal to t, measured from the
//    frame normal n towards b = t x n). For limb 0, t = arm-frame z and n = arm-frame x. After
//    each limb the frame (t, n) is parallel-transported: rotated by the bend about the axis
//    k = cos(azimuth) b - sin(azimuth) n, the minimal rotation taking t to the limb direction.
//    Angles are stored as [bend_0, azimuth_0, bend_1, azimuth_1, ...].
// Joint limits bound the relative angle between consecutive limbs (planar: signed [min, max];
// spatial: the bend, 0 <= min <= max <= pi); in Cartesian form a bound on |r_{k+1} - r_{k-1}|.
#pragma once

#include <limits>
#include <optional>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "absl/status/statusor.h"
#include "ikd/constraints/model.h"

namespace ikd::ik {

struct Limb {
  double length = 1.0;  // > 0
  double radius = 0.0;  // collision radius of the limb's capsule, >= 0
};

struct JointLimit {
  double min = 0.0;  // radians
  double max = 0.0;
};

// Servo limits of one joint; +inf = unlimited. Checked on every answered path (joint angles
// per arm.h's convention; a spatial joint's bend and azimuth each against the same bounds).
struct JointRateLimit {
  double max_velocity = std::numeric_limits<double>::infinity();      // rad/s, > 0
  double max_acceleration = std::numeric_limits<double>::infinity();  // rad/s^2, > 0
  double max_jerk = std::numeric_limits<double>::infinity();          // rad/s^3, > 0
};

struct ArmSpec {
  Eigen::Vector3d base_position = Eigen::Vector3d::Zero();          // p_WB
  Eigen::Quaterniond base_orientation = Eigen::Quaterniond::Identity();  // R_WB (normalized)
  bool planar = true;
  std::vector<Limb> limbs;
  // Empty, or one entry per interior joint (limbs.size() - 1); nullopt = unlimited joint.
  std::vector<std::optional<JointLimit>> joint_limits;
  // Empty (all 1), or one per site (limbs.size() + 1): heavier sites move less in the
  // optimization and projection. Base and hand weights are ignored (they are fixed).
  std::vector<double> site_weights;
  // Empty (an arc leaving along the arm-frame x axis, or up the z axis when spatial, bending by
  // 1.5 rad in all, at most 0.3 rad per joint), or home joint angles in the convention above (planar: limbs.size() values;
  // spatial: 2 * limbs.size()).
  std::vector<double> home_angles;
  // Servo limits of every joint without its own entry.
  JointRateLimit default_rate_limit;
  // Empty, or one per joint (limbs.size(): joint 0 turns limb 0 at the base, joint k bends
  // limb k against limb k-1); nullopt = default_rate_limit.
  std::vector<std::optional<JointRateLimit>> rate_limits;
};

class Arm {
 public:
  // Errors (InvalidArgument naming the field): no limbs or too many, non-finite numbers,
  // length <= 0, radius < 0, limit min > max or out of range, weights <= 0, wrong sizes,
  // zero-norm orientation.
  static absl::StatusOr<Arm> Create(ArmSpec spec);

  const ArmSpec& spec() const { return spec_; }
  bool planar() const { return spec_.planar; }
  int num_limbs() const { return static_cast<int>(spec_.limbs.size()); }
  int num_sites() const { return num_limbs() + 1; }
  int num_angles() const { return planar() ? num_limbs() : 2 * num_limbs(); }
  int hand() const { return num_limbs(); }
  const Eigen::Vector3d& base() const { return spec_.base_position; }
  double max_reach() const { return max_reach_; }
  // Without joint limits: max(0, 2 max_k l_k - sum l) (the longest limb folded back), or l
  // for a single limb.
  double min_reach() const { return min_reach_; }
  double shortest_limb() const { return shortest_limb_; }
  // Base and hand fixed (inverse mass 0), interior sites 1 / weight, limbs as constraints.
  const constraints::ConstraintModel& chain_model() const { return chain_model_; }

  // Forward kinematics: sites (3 x num_sites, world frame) from joint angles.
  absl::StatusOr<Eigen::Matrix3Xd> SitesFromAngles(const std::vector<double>& angles) const;
  // The servo limits of joint k (0 <= k < num_limbs), the default where it has none.
  const JointRateLimit& RateLimit(int joint) const;
  // The joint that angle index i belongs to (planar: i; spatial: i / 2).
  int JointOfAngle(int i) const { return planar() ? i : i / 2; }
  // True when some joint has a finite velocity, acceleration or jerk limit.
  bool HasRateLimits() const;

  // Joint angles of a site configuration (limb lengths are not checked here).
  std::vector<double> AnglesFromSites(const Eigen::Matrix3Xd& sites) const;
  Eigen::Matrix3Xd HomeSites() const;

  // Relative angle at interior joint k (1 <= k < num_limbs): planar signed angle, spatial bend.
  double JointAngle(const Eigen::Matrix3Xd& sites, int k) const;
  // Sum over limited joints of how far the joint angle lies outside [min, max] (radians).
  double LimitViolation(const Eigen::Matrix3Xd& sites) const;
  // Distance |r_{k+1} - r_{k-1}| at which joint k bends by `angle` (law of cosines).
  double SpanAtBend(int k, double angle) const;

  // World <-> arm frame.
  Eigen::Vector3d ToArmFrame(const Eigen::Vector3d& p_W) const;
  Eigen::Vector3d ToWorld(const Eigen::Vector3d& p_B) const;
  // In-plane unit vectors (world) of a planar arm: arm-frame x, y and the plane normal z.
  const Eigen::Matrix3d& R_WB() const { return R_WB_; }

 private:
  Arm(ArmSpec spec, constraints::ConstraintModel chain_model);
  ArmSpec spec_;
  constraints::ConstraintModel chain_model_;
  Eigen::Matrix3d R_WB_;  // of the normalized base orientation, once (every angle reads it)
  double max_reach_ = 0.0;
  double min_reach_ = 0.0;
  double shortest_limb_ = 0.0;
};

}  // namespace ikd::ik
