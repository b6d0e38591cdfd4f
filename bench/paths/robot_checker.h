// The joint-path benchmark's independent checker for industrial arms: its own forward
// kinematics (from the chain's joint origins, axes and tool offset, composed with its own
// rotation code), its own Jacobian and its own capsule-sphere distances. Nothing it reports comes
// from ikd::robot or ikd::ik code: the library is only consulted once, at start-up, to confirm
// that both read the chain the same way (robot_scenarios.cc).
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "checker.h"  // CheckCapsule, PointSegmentDistance

namespace ikd::bench::paths {

// A rigid transform: x -> R x + p.
struct RigidTransform {
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  RigidTransform operator*(const RigidTransform& o) const { return {R * o.R, R * o.p + p}; }
};

struct RobotCheckJoint {
  RigidTransform X_PJ;  // joint frame in the parent link at q = 0
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();
  double lower = 0.0, upper = 0.0;
  double max_velocity = std::numeric_limits<double>::infinity();
  double max_acceleration = std::numeric_limits<double>::infinity();  // +inf: none declared
};

// What the checker knows of a robot scenario: the chain (revolute joints only), its declared
// limits, the links' geometry, the link pairs it checks against each other and the obstacles.
struct RobotCheckModel {
  RigidTransform X_WB, X_FT;
  std::vector<RobotCheckJoint> joints;
  // Per link, capsules in its frame (RobotKinematics::frames): the arm's collision model. Empty:
  // one capsule per link from joint k's origin to k+1's (the last to the TCP) of radius radii[k].
  std::vector<std::vector<CheckCapsule>> shapes;
  std::vector<double> radii;
  std::vector<std::pair<int, int>> self_pairs;  // links checked against each other (SelfPairs)
  bool pose = false;          // full-pose targets (else position only)
  double safety_margin = 0.01;
  std::vector<CheckCapsule> obstacles;
  int num_joints() const { return static_cast<int>(joints.size()); }
  // Per joint: the weights of the rate ratios, 1 / max_velocity and 1 / max_acceleration (the
  // latter 1 / max_velocity where no acceleration limit is declared).
  double SpeedWeight(int j) const;
  double AccelerationWeight(int j) const;
};

// Rotation by `angle` about unit `axis` (Rodrigues).
Eigen::Matrix3d AxisAngle(const Eigen::Vector3d& axis, double angle);
// The angle of the rotation R_a^T R_b, in [0, pi].
double RotationAngleBetween(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b);

struct RobotKinematics {
  RigidTransform tool;                    // the TCP's world pose
  std::vector<Eigen::Vector3d> origins;   // joint k's origin, then the TCP (num_joints + 1)
  std::vector<Eigen::Vector3d> axes;      // joint k's axis in the world
  std::vector<RigidTransform> frames;     // link k's frame (after joint k turned) in the world
};
RobotKinematics ForwardKinematics(const RobotCheckModel& model, const Eigen::VectorXd& q);
// Geometric Jacobian of the TCP: rows 0-2 linear, 3-5 angular velocity (world).
Eigen::MatrixXd ToolJacobianOf(const RobotCheckModel& model, const Eigen::VectorXd& q);
// Smallest singular value of the Jacobian's rows the targets fix (3 or 6).
double SmallestSingularValue(const RobotCheckModel& model, const Eigen::VectorXd& q);

// Link k's capsules in the world.
std::vector<CheckCapsule> LinkCapsulesInWorld(const RobotCheckModel& model,
                                              const RobotKinematics& fk, int k);
// Clearance of link k to one obstacle (the least over its capsules).
double RobotLinkClearance(const RobotCheckModel& model, const RobotKinematics& fk, int k,
                          const CheckCapsule& obstacle);
// The least clearance between the self_pairs' links.
double RobotSelfClearance(const RobotCheckModel& model, const RobotKinematics& fk);
// The least over links and obstacles, and over self_pairs.
double RobotMinClearance(const RobotCheckModel& model, const RobotKinematics& fk);
// The checker's own choice of link pairs to check against each other: every pair of links not
// joined by a joint, but those that overlap at each of `samples` random configurations within
// the limits (their models always touch, as the UR5's wrist housings: no motion can part them).
std::vector<std::pair<int, int>> SelfPairs(const RobotCheckModel& model, int samples);

// A requested TCP pose per sample (rotation ignored for position-only models).
struct ToolRequest {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
};

// Weighted rate maxima of a joint path (rows: samples): max over samples and joints of
// |v_j| * SpeedWeight(j) and |a_j| * AccelerationWeight(j), with v_k = (q_k - q_{k-1}) / dt and
// a_k = (v_{k+1} - v_k) / dt. For a robot whose limits are declared, these are fractions of them.
RateMaxima WeightedRates(const RobotCheckModel& model, const Eigen::MatrixXd& q, double dt);

struct RobotPathMeasures {
  bool collided = false;  // at a sample or between two (MotionSubsteps sub-steps, checker.h)
  // Motions between two samples that touch while both ends are clear (joints interpolated
  // linearly, the checker's own forward kinematics).
  int motion_collisions = 0;
  double min_motion_clearance = std::numeric_limits<double>::infinity();  // m
  int margin_samples = 0;            // samples with a clearance < the safety margin
  double min_clearance = std::numeric_limits<double>::infinity();  // m (+inf: no obstacles)
  int position_violations = 0;       // samples with a joint beyond its limits by > kRobotSlack
  int velocity_violations = 0;       // samples whose v_k passes a declared limit x (1 + 1e-6)
  int acceleration_violations = 0;   // samples whose a_k does
  double max_position_excess = 0.0;  // rad
  double max_position_error = 0.0;   // m: TCP vs the request
  double max_rotation_error = 0.0;   // rad (pose models)
  int reached = 0;                   // samples within 1e-5 m (1e-5 rad) and the position limits
  int confirmed = 0;                 // reached, and v_k (into k) and a_k within the limits
  double min_sigma = std::numeric_limits<double>::infinity();  // SmallestSingularValue
  int min_sigma_sample = -1;
  RateMaxima rates;                  // WeightedRates
  RateMaxima raw;                    // unweighted max |v|, |a| over joints (rad/s, rad/s^2)
  bool any_limit_violation() const {
    return position_violations + velocity_violations + acceleration_violations > 0;
  }
};

constexpr double kRobotSlack = 1e-9;       // rad beyond a position limit
constexpr double kRobotTolerance = 1e-5;   // m and rad: the solver's default tolerances

RobotPathMeasures CheckRobotPath(const RobotCheckModel& model, const Eigen::MatrixXd& q,
                                 const std::vector<ToolRequest>& request, double dt);

}  // namespace ikd::bench::paths
