// Kinematic description of an industrial arm: a serial chain of joints between rigid links, in
// the form URDF uses (a fixed origin per joint, then a motion about or along its axis), with
// importers from Denavit-Hartenberg tables (standard and modified) and forward kinematics.
//
//   auto chain = ikd::robot::ChainFromDh(rows, ikd::robot::DhConvention::kStandard);
//   Eigen::Isometry3d X_WT = ikd::robot::ToolPose(*chain, q);   // world -> tool centre point
//
// Frames follow Drake's monogram notation: X_AB is the pose of frame B in frame A.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ikd::robot {

enum class JointType { kRevolute, kPrismatic, kFixed };
const char* JointTypeName(JointType type);

struct JointLimits {
  double lower = 0.0;  // rad (revolute) or m (prismatic)
  double upper = 0.0;
  double max_velocity = std::numeric_limits<double>::infinity();  // rad/s or m/s
  // rad/s^2 or m/s^2; +inf where the manufacturer publishes none (UR5, iiwa14)
  double max_acceleration = std::numeric_limits<double>::infinity();
  // rad/s^3 or m/s^3; +inf where none is declared (no preset declares one)
  double max_jerk = std::numeric_limits<double>::infinity();
};

struct JointSpec {
  std::string name;
  JointType type = JointType::kRevolute;
  // Pose of the joint frame J in the parent link frame P at zero joint value (URDF <origin>).
  Eigen::Isometry3d X_PJ = Eigen::Isometry3d::Identity();
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();  // in J, unit length (URDF <axis>)
  std::optional<JointLimits> limits;                // none: a continuous joint
};

// A capsule fixed in a link's frame (the frame of the link after its moving joint, as LinkPoses
// gives it): the points within `radius` of the segment a-b (a == b: a sphere). Real link shapes
// are covered by a few of them (link_geometry.h fits them to boxes, cylinders and meshes).
struct LinkShape {
  Eigen::Vector3d a = Eigen::Vector3d::Zero();  // m, in the link frame
  Eigen::Vector3d b = Eigen::Vector3d::Zero();
  double radius = 0.0;  // m, finite, >= 0
};

struct ChainSpec {
  std::string name;
  Eigen::Isometry3d X_WB = Eigen::Isometry3d::Identity();  // base link in the world
  std::vector<JointSpec> joints;                           // base to tip
  Eigen::Isometry3d X_FT = Eigen::Isometry3d::Identity();  // tool centre point in the last link
  // Collision geometry: empty (none), or one radius (m, finite, >= 0) per moving joint k for
  // the capsule of the link it moves, from joint k's origin to joint k+1's (the last link's to
  // the tool centre point). A simple stand-in for the links' real shapes.
  std::vector<double> link_radii;
  // Collision geometry that follows the links' real shapes (a URDF's <collision> elements, a
  // preset's published dimensions): empty, or one list per moving joint of the capsules of the
  // link it moves, in that link's frame (an empty list: the link has no geometry). When given,
  // it replaces the joint-origin capsules and link_radii must be empty.
  std::vector<std::vector<LinkShape>> link_shapes;
  // What an importer approximated or left out of link_shapes (a box covered by capsules, a
  // mesh that was not sent, the base link's geometry), one sentence each; never read by the
  // solver, reported with the arm so that no geometry disappears without a word.
  std::vector<std::string> geometry_notes;
  // Whether the links are checked against each other (self_collision.h). Unset: on where the
  // spec has link_shapes, off on joint-origin capsules, which are not the links' shapes (a DH
  // table skips the lateral offsets, so a UR5's short wrist segments lie within 10 cm of each
  // other where its real links do not touch) and on which the check reports contacts the real
  // arm does not have.
  std::optional<bool> check_self_collision;
  // Link pairs (indices as in link_radii, 0 <= a, b < moving joints, a != b) never checked
  // against each other, beyond those self_collision.h allows by itself.
  std::vector<std::pair<int, int>> allowed_collisions;

  // OK, or InvalidArgument naming the field (joints[k].axis, joints[k].limits, ...) and bound.
  absl::Status Validate() const;
  // check_self_collision, or its default.
  bool ChecksSelfCollision() const { return check_self_collision.value_or(!link_shapes.empty()); }
};

// One row of a Denavit-Hartenberg table. Standard (Denavit & Hartenberg 1955): the link
// transform is Rz(theta) Tz(d) Tx(a) Rx(alpha). Modified (Craig 1986): Rx(alpha) Tx(a)
// Rz(theta) Tz(d), with the row holding a_{i-1} and alpha_{i-1} as Craig's tables print them.
// theta = q + theta_offset for a revolute row.
struct DhRow {
  double a = 0.0;
  double alpha = 0.0;
  double d = 0.0;
  double theta_offset = 0.0;
  std::optional<JointLimits> limits;
};
enum class DhConvention { kStandard, kModified };

// A chain of revolute joints from a DH table; `X_FT` is appended after the last row's
// transform (a tool or flange offset). Errors name rows[k].field.
absl::StatusOr<ChainSpec> ChainFromDh(const std::vector<DhRow>& rows, DhConvention convention,
                                      const Eigen::Isometry3d& X_FT = Eigen::Isometry3d::Identity());

// The same chain with every fixed joint folded into the next joint's origin (or the tool).
ChainSpec MergeFixedJoints(const ChainSpec& spec);

// Number of joints that move (revolute and prismatic).
int NumMovingJoints(const ChainSpec& spec);

// World poses of the link after each moving joint, for joint values q (one per moving joint).
std::vector<Eigen::Isometry3d> LinkPoses(const ChainSpec& spec, const Eigen::VectorXd& q);

// World pose of the tool centre point for joint values q.
Eigen::Isometry3d ToolPose(const ChainSpec& spec, const Eigen::VectorXd& q);

// The 6 x n geometric Jacobian of the tool centre point at q (one column per moving joint):
// rows 0-2 its linear velocity, rows 3-5 its angular velocity, both in the world frame, per unit
// joint velocity.
Eigen::MatrixXd ToolJacobian(const ChainSpec& spec, const Eigen::VectorXd& q);

// The link capsules' end points for joint values q (link_radii's layout): entry k runs from
// joint k's origin to joint k+1's, the last to the tool centre point.
std::vector<std::pair<Eigen::Vector3d, Eigen::Vector3d>> LinkSegments(const ChainSpec& spec,
                                                                      const Eigen::VectorXd& q);

// The motion of one joint at value q: a rotation about (or a translation along) its axis.
Eigen::Isometry3d JointMotion(const JointSpec& joint, double q);

}  // namespace ikd::robot
