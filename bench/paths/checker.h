// The joint-path benchmark's independent checker: everything it reports is recomputed from the
// returned sites with its own code (no ikd::ik types or functions), so that a bug shared by the
// solver and its own residuals cannot hide.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace ikd::bench::paths {

// A segment a-b swept by a ball (a == b: a sphere).
struct CheckCapsule {
  Eigen::Vector3d a = Eigen::Vector3d::Zero();
  Eigen::Vector3d b = Eigen::Vector3d::Zero();
  double radius = 0.0;
};

// What the checker knows of a scenario: the arm (base at the origin, identity orientation), its
// declared limits and the obstacles.
struct CheckModel {
  bool planar = true;
  std::vector<double> lengths, radii;  // per limb
  // Per interior joint k = 1 .. limbs - 1 (index k - 1): planar signed relative angle, spatial
  // bend.
  std::vector<double> limit_min, limit_max;
  double max_velocity = 0.0, max_acceleration = 0.0;  // the same for every joint (rad/s, rad/s^2)
  double max_jerk = std::numeric_limits<double>::infinity();  // rad/s^3 (+inf: none declared)
  double safety_margin = 0.01;
  std::vector<CheckCapsule> obstacles;
  int num_angles() const { return planar ? int(lengths.size()) : 2 * int(lengths.size()); }
};

double PointSegmentDistance(const Eigen::Vector3d& x, const Eigen::Vector3d& a,
                            const Eigen::Vector3d& b);
double SegmentSegmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                              const Eigen::Vector3d& q0, const Eigen::Vector3d& q1);
// Clearance of limb k of `sites` to one obstacle (negative: penetration of the axes' distance).
double LimbObstacleClearance(const CheckModel& model, const Eigen::Matrix3Xd& sites, int k,
                             const CheckCapsule& obstacle);
double MinObstacleClearance(const CheckModel& model, const Eigen::Matrix3Xd& sites);
double MinSelfClearance(const CheckModel& model, const Eigen::Matrix3Xd& sites);

// A planar arm's joint angles in arm.h's convention (limb 0's heading, then the turn from each
// limb to the next, in (-pi, pi]), computed from the sites alone.
std::vector<double> PlanarAngles(const Eigen::Matrix3Xd& sites);
// Joint angles in arm.h's convention, computed from the sites alone.
std::vector<double> JointAngles(const CheckModel& model, const Eigen::Matrix3Xd& sites);
// Sites of joint angles in arm.h's convention (base at the origin), the checker's own forward
// kinematics: planar headings summed; spatial frames parallel-transported limb by limb.
Eigen::Matrix3Xd SitesOfAngles(const CheckModel& model, const Eigen::VectorXd& q);
// The motions between consecutive rows of q (joint values, interpolated linearly), each
// subdivided MotionSubsteps times and measured by `clearance` of a configuration: how many
// touch while both their ends are `clear`, whether any touches, the least clearance on the way.
struct MotionMeasures {
  int collisions = 0;
  bool touched = false;
  double min_clearance = std::numeric_limits<double>::infinity();
};
MotionMeasures MeasureMotions(const Eigen::MatrixXd& q, const std::vector<bool>& clear,
                              const std::function<double(const Eigen::VectorXd&)>& clearance);
// Rows: samples; each column continued across +-pi from the previous sample.
Eigen::MatrixXd Unwrap(const std::vector<std::vector<double>>& angles);

// Largest |v|, |a| and |j| over all joints: v_k = (q_k - q_{k-1}) / dt,
// a_k = (v_{k+1} - v_k) / dt, j_k = (a_k - a_{k-1}) / dt.
struct RateMaxima {
  double speed = 0.0, acceleration = 0.0, jerk = 0.0;
};
RateMaxima MaxRates(const Eigen::MatrixXd& q, double dt);

// Largest angular speed of any limb in the world (rad/s): the angle between its directions at
// two consecutive samples over dt. Coordinate-free: a spatial azimuth spinning while its limb
// points straight turns the limb by nothing.
double MaxLimbTurnSpeed(const std::vector<Eigen::Matrix3Xd>& sites, double dt);

// Nearest-rank percentile (p in [0, 1]): an actual value of v; 0 for none.
double Percentile(std::vector<double> v, double p);

struct PathMeasures {
  bool collided = false;           // some clearance < 0 (obstacle or self), at or between samples
  // Motions between two samples that touch while both ends are clear (the angles interpolated
  // linearly, MotionSubsteps sub-steps, the checker's own forward kinematics).
  int motion_collisions = 0;
  double min_motion_clearance = 0.0;  // m, over the sub-steps (+inf: nothing to collide with)
  int margin_samples = 0;          // samples with a clearance < the safety margin
  double min_obstacle_clearance = 0.0, min_self_clearance = 0.0;  // m (+inf: none)
  int position_violations = 0;     // samples with a joint beyond its limit by > kPositionSlack
  int velocity_violations = 0;     // samples whose v_k passes the limit x (1 + kRateSlack)
  int acceleration_violations = 0; // samples whose a_k does
  int jerk_violations = 0;         // samples whose j_k passes a declared jerk limit
  double max_position_excess = 0.0;  // rad
  double max_hand_error = 0.0;     // m: hand vs the request (and the base vs the origin)
  double max_limb_error = 0.0;     // relative
  double max_off_plane = 0.0;      // m, planar arms: largest |z| of a site
  double max_speed = 0.0, max_acceleration = 0.0;  // rad/s, rad/s^2 over all joints
  double max_jerk = 0.0;                           // rad/s^3 over all joints
  // Spatial arms: the same over the bends alone, and the smallest bend (an azimuth is
  // ill-conditioned near bend 0, where it can spin at any speed while the limb barely moves).
  double max_bend_speed = 0.0, max_bend_acceleration = 0.0, min_bend = 0.0;
  double max_limb_turn_speed = 0.0;  // rad/s: MaxLimbTurnSpeed
  bool any_limit_violation() const {
    return position_violations + velocity_violations + acceleration_violations + jerk_violations >
           0;
  }
};

constexpr double kPositionSlack = 1e-6;  // rad: far below any servo's resolution
// Sub-steps per motion between samples: at least kMotionSubsteps, and as many as keep every
// joint's sub-step within kMotionJointStep (a point 1 m from a joint's axis moves 1 mm; the
// library's swept bound settles within a quarter of the clearance, so a tracker's jump of a
// radian needs more than 64), at most kMaxMotionSubsteps.
constexpr int kMotionSubsteps = 64;
constexpr double kMotionJointStep = 1e-3;  // rad
constexpr int kMaxMotionSubsteps = 8192;
int MotionSubsteps(double largest_joint_move);
constexpr double kRateSlack = 1e-6;      // relative

// Measures a joint path: sites per sample (spaced `dt`), against the requested hand positions.
PathMeasures CheckPath(const CheckModel& model, const std::vector<Eigen::Matrix3Xd>& sites,
                       const std::vector<Eigen::Vector3d>& hand, double dt);

}  // namespace ikd::bench::paths
