// An industrial arm in the Cartesian form of ikd: every link is a rigid cluster of sites held by
// distance constraints, and a revolute joint is a pair of sites on its axis shared by the two
// links it joins (a hinge). The tool's pose is the position of four tool sites.
//
// Sites of link L (L = 1..n, the link after joint L):
//   A_L, B_L   on joint L's axis, B_L - A_L = spacing * axis (shared with link L-1);
//   C_L, D_L   auxiliary sites at `spacing` from A_L, perpendicular to the axis and to each
//              other, so that {A_L, B_L, C_L, D_L} is a rigid, well-shaped tetrahedron;
//   A_{L+1}, B_{L+1}, each tied to the three tetrahedron sites that span the largest volume
//              with it.
// The last link n is the tool tetrahedron T0 = TCP, T1 = TCP + spacing x_T, T2 = TCP +
// spacing y_T, T3 = TCP + spacing z_T (its six edges) with A_n tied to it by three distances
// and B_n by two (the third, |A_n B_n|, is link n-1's); driving all
// four tool sites then fixes the tool pose without over-determining the link. The base link
// holds A_1, B_1 and one auxiliary site C_0, all fixed. Constraints: C_L to A_L and B_L (the
// hinge leaves C_L one rotation about the axis), D_L to A_L, B_L, C_L, and three per further
// site, so that each link adds exactly its joint's one degree of freedom. Axis sites slide along their axis (and auxiliary
// sites turn about it) at construction until every site of a cluster keeps a distance of at
// least 0.3 spacing from the others, so coincident joint origins (spherical wrists) are served.
//
// Joint angle L is the rotation about A_L -> B_L between a site of link L-1 and a site of link
// L (each its link's farthest from the axis), measured from its value at q = 0: the robot description's own sign and zero.
//
//   auto robot = ikd::robot::Robot::Create(ikd::robot::presets::Ur5());
//   Eigen::Matrix3Xd sites = robot->SitesFromAngles(q);
//   Eigen::VectorXd back = robot->AnglesFromSites(sites, q);   // == q to 1e-12
#pragma once

#include <array>
#include <memory>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "absl/base/call_once.h"
#include "absl/status/statusor.h"
#include "ikd/constraints/model.h"
#include "ikd/robot/chain.h"

namespace ikd::robot {


// Which tool sites are driven: the TCP only (position targets) or all four (full pose).
enum class TargetMode { kPosition, kPose };

class Robot {
 public:
  // Errors: the spec's own (ChainSpec::Validate), a prismatic joint (not representable by
  // distance constraints between shared sites), spacing <= 0 or non-finite. spacing = 0 picks
  // a quarter of the mean distance between consecutive joint origins (at least 0.05 m).
  static absl::StatusOr<Robot> Create(const ChainSpec& spec, double spacing = 0.0);

  const ChainSpec& spec() const { return spec_; }  // fixed joints merged
  int num_joints() const { return static_cast<int>(spec_.joints.size()); }
  int num_sites() const { return static_cast<int>(owner_.size()); }
  double spacing() const { return spacing_; }
  const std::vector<constraints::DistanceConstraint>& constraints() const { return constraints_; }
  // The constraint model with the base fixed and the tool sites of `mode` driven.
  // Shared, so that its address (which solvers keep) survives moving the Robot.
  const constraints::ConstraintModel& model(TargetMode mode) const {
    return mode == TargetMode::kPose ? *pose_model_ : *position_model_;
  }
  const std::array<int, 4>& tool_sites() const { return tool_sites_; }  // T0 (TCP) .. T3
  // Sites of link L, L = 0 (base) .. num_joints(); the first two of L >= 1 are A_L, B_L.
  const std::vector<int>& link_sites(int link) const { return link_sites_[link]; }

  // Forward kinematics: the site positions (3 x num_sites) of joint values q.
  Eigen::Matrix3Xd SitesFromAngles(const Eigen::VectorXd& q) const;
  // Joint values read from the sites. Each is the representative within 2 pi of `near` (the
  // previous configuration) when given, else in (-pi, pi].
  Eigen::VectorXd AnglesFromSites(const Eigen::Matrix3Xd& sites,
                                  const Eigen::VectorXd* near = nullptr) const;
  // The tool pose held by the tool sites (rotation re-orthonormalized).
  Eigen::Isometry3d ToolPoseFromSites(const Eigen::Matrix3Xd& sites) const;
  // Positions of the four tool sites for a tool pose X_WT, in the order of tool_sites().
  std::array<Eigen::Vector3d, 4> ToolSitesFor(const Eigen::Isometry3d& X_WT) const;
  // Largest violation of the joint limits by q (0 inside), in the joints' units.
  double LimitViolation(const Eigen::VectorXd& q) const;
  // A distance constraint that holds joint `joint` (0-based) at `value`: between the two sites
  // its angle is read from, at the distance they have when the joint turns from its value in
  // `q` (the configuration of `sites`) to `value`. Locally unique unless value is where
  // the two sites are closest or farthest apart.
  constraints::DistanceConstraint JointLock(const Eigen::Matrix3Xd& sites, const Eigen::VectorXd& q,
                                            int joint, double value) const;
  // The middle of every joint's range (0 for a continuous joint).
  Eigen::VectorXd MidRange() const;
  // Where the IK side keeps what it computes once per robot (seed_atlas.h's SeedAtlasOf: the
  // seed atlas): filled on first use, shared by copies; the model itself never reads it.
  struct IkCache {
    absl::once_flag once;
    std::shared_ptr<const void> value;
  };
  IkCache& ik_cache() const { return *ik_cache_; }
  // The same for self_collision.h's SelfCollisionMatrixOf and analytic_ik.h's AnalyticIkOf.
  IkCache& self_collision_cache() const { return *self_collision_cache_; }
  IkCache& analytic_cache() const { return *analytic_cache_; }

 private:
  Robot() = default;
  double HingeAngle(const Eigen::Matrix3Xd& sites, int joint) const;

  ChainSpec spec_;
  double spacing_ = 0.0;
  std::vector<int> owner_;                 // link whose frame holds each site
  Eigen::Matrix3Xd local_;                 // each site in its owner's frame
  std::vector<std::vector<int>> link_sites_;
  std::vector<int> reference_site_;        // per joint: link L-1's site read against ...
  std::vector<double> zero_angle_;         // per joint: the hinge angle at q = 0
  std::vector<int> moving_site_;           // ... link L's site
  std::array<int, 4> tool_sites_{};
  std::vector<constraints::DistanceConstraint> constraints_;
  std::shared_ptr<const constraints::ConstraintModel> position_model_, pose_model_;
  std::shared_ptr<IkCache> ik_cache_ = std::make_shared<IkCache>();
  std::shared_ptr<IkCache> self_collision_cache_ = std::make_shared<IkCache>();
  std::shared_ptr<IkCache> analytic_cache_ = std::make_shared<IkCache>();
};

}  // namespace ikd::robot
