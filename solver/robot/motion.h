// The joint motion of one step of an industrial arm's path (internal to the robot trackers):
// the least joint motion, weighted by the joints' velocity limits, that moves the tool by a
// given twist, with a preferred motion in the redundant directions that keeps joints off their
// limits; and the checks of a configuration the trackers, the path and its smoother share.
#pragma once

#include <random>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "ikd/planning/scene.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot::internal {

// The angle of the turn between two rotations (rad).
double RotationAngle(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b);

// The tool's position error (m) and rotation error (rad; 0 for a position target) at joint
// values q, by forward kinematics.
std::pair<double, double> ToolErrors(const Robot& robot, const Eigen::VectorXd& q,
                                     const ToolTarget& target);

// A configuration drawn uniformly inside the limits ([-pi, pi] for a continuous joint; at most
// 8 pi wide, SeedAtlas::SamplingRange): a restart seed.
Eigen::VectorXd RandomConfiguration(const Robot& robot, std::mt19937_64& rng);

// Whether some joint declares a finite velocity, acceleration or jerk limit.
bool HasRateLimits(const Robot& robot);

// Joint k's declared max_velocity (max_acceleration, max_jerk), +infinity where none is declared.
double VelocityLimit(const Robot& robot, int k);
double AccelerationLimit(const Robot& robot, int k);
double JerkLimit(const Robot& robot, int k);

// The tool pose a target asks for: its position, and its orientation for a pose target, else
// the orientation the tool has now (`now`).
Eigen::Isometry3d ToolGoal(const ToolTarget& target, const Eigen::Isometry3d& now);

// Per joint (v_ref / max_velocity_j)^2, v_ref the smallest finite max_velocity: a joint twice as
// fast may move twice as far for the same cost. 1 for joints without a velocity limit (and for
// all when none declares one).
Eigen::VectorXd MotionWeights(const Robot& robot);

// Whitney's weighted resolved-motion rate with Liegeois' null-space preference:
//   min 1/2 sum_j w_j (dq_j - c_j)^2  s.t.  J dq = e,
//   dq = c + W^-1 J^T (J W^-1 J^T + lambda^2 I)^-1 (e - J c),
// with the damping lambda (Wampler) keeping dq finite where J loses rank.
Eigen::VectorXd LeastMotionStep(const Eigen::MatrixXd& J, const Eigen::VectorXd& e,
                                const Eigen::VectorXd& w, const Eigen::VectorXd& c,
                                double damping);

// Joint-limit avoidance for a step that moves the tool `fraction` of the robot's spacing:
// joints inside the outer 10% of their range get heavier `weights` and a `preferred` motion
// back toward the inner range in proportion to the step (a pull that scales with the tool's
// speed, so it never asks for a jump); the others' preferred motion is 0.
void AvoidLimits(const Robot& robot, const Eigen::VectorXd& q, double fraction,
                 Eigen::VectorXd& weights, Eigen::VectorXd& preferred);

// The pull of a redundant arm back to its posture (the configuration its path started from),
// added to `preferred`: in proportion to the step, as the limits' pull, so that a closed tool
// path brings the joints back instead of leaving them drifted (resolved rates alone do not
// integrate to a closed joint path).
void PullToPosture(const Eigen::VectorXd& q, const Eigen::VectorXd& posture, double fraction,
                   Eigen::VectorXd& preferred);

// Whether the arm has anything to keep clear of: a non-empty scene (may be null) or link pairs
// of its own that self_collision.h checks.
bool ChecksClearance(const Robot& robot, const planning::Scene* scene);

// Every link capsule's signed clearance at q (m), in LinkSegments' order: the least of its
// distance to the scene (when given) and to the links it is checked against
// (self_collision.h), the latter plus `self_shift`; +infinity where there is neither.
std::vector<double> LinkClearances(const Robot& robot, const planning::Scene* scene,
                                   const Eigen::VectorXd& q, double self_shift = 0.0);

// The soft terms that keep links off what is near them (the null-space pull below, the path
// optimizer's hinge, the trials of step (c)) aim the arm's own links at this share of the
// distance they aim obstacles at: an arm's links pass each other closely by design (the Panda's
// forearm and flange housings are 17-20 mm apart in its working poses, 8-9 mm all round Track's
// position-target circle about its ready pose), and its own geometry is known where an obstacle's
// is not (MoveIt checks self-collision on the unpadded robot for the same reason).
// - Pulls and hinge (3 margins from obstacles, 1.5 from the arm itself): at 3 the joints moved
//   faster than the tool path needs (bench/paths Panda position targets with the presets'
//   bodies: PlanRobotPath's speed median 1.43x the witness's, 0.90 at 1.5).
// - Trials (1.25 margins, 0.625): at 1.25 they ran on every step of the Panda's position Track
//   for a pair they cannot move (median gain 0.03 mm a step, 1 ms an answer).
// What decides a status and the rate limiter's braking rows see the true distances.
inline constexpr double kSelfBufferShare = 0.5;
// LinkClearances' self_shift that makes the arm's own links meet a buffer of `buffer` safety
// margins at kSelfBufferShare of it.
inline double SelfShift(double buffer, double margin) {
  return (1.0 - kSelfBufferShare) * buffer * margin;
}

// The least of LinkClearances (unshifted); +infinity when there is nothing to keep clear of
// (ChecksClearance).
double MinLinkClearance(const Robot& robot, const planning::Scene* scene, const Eigen::VectorXd& q);

// d LinkClearances / dq (links x joints) at the nearest contact of each link: the separating
// direction dotted with the motion of the closest point(s) (the envelope theorem; where a link's
// nearest obstacle or link switches, the gradient of the nearest one, a subgradient); 0 for a
// link with nothing to keep clear of.
Eigen::MatrixXd LinkClearanceGradients(const Robot& robot, const planning::Scene* scene,
                                       const Eigen::VectorXd& q, double self_shift = 0.0);

// LinkClearances and the LinkClearanceGradients rows of the links nearer than `gradient_below`
// (the other rows 0) from one pass of forward kinematics and distances, for the callers that
// want the gradients of the near links only.
struct LinkClearanceField {
  std::vector<double> clearance;
  Eigen::MatrixXd gradient;  // links x joints
};
LinkClearanceField LinkClearancesWithGradients(const Robot& robot, const planning::Scene* scene,
                                               const Eigen::VectorXd& q, double self_shift,
                                               double gradient_below);

// The pull of the links away from the scene's obstacles (Maciejewski & Klein's null-space
// avoidance), added to `preferred`: every link capsule closer than `buffer` to an obstacle
// pushes along the gradient of its clearance in joint space, (1 - d / buffer)^2 strong, in
// proportion to the step, so that a redundant arm turns away before it reaches the margin
// instead of being pushed out by random trials after it did.
void PullFromObstacles(const Robot& robot, const planning::Scene* scene, const Eigen::VectorXd& q,
                       double buffer, double self_shift, double fraction,
                       Eigen::VectorXd& preferred);

// The joint step from q towards tool pose X_goal (position rows only for kPosition): the
// twist error e (translation, then rotation vector) through LeastMotionStep.
Eigen::VectorXd ToolStep(const Robot& robot, const Eigen::VectorXd& q,
                         const Eigen::Isometry3d& X_goal, TargetMode mode,
                         const Eigen::VectorXd& weights, const Eigen::VectorXd& preferred);

// q with every joint clamped into its position limits (joints without limits as they are).
Eigen::VectorXd ClampIntoLimits(const Robot& robot, Eigen::VectorXd q);

// The rows of the tool Jacobian a target of `mode` constrains: 6 for a pose, 3 for a position.
int ToolRows(TargetMode mode);

// An orthonormal basis of the null space of the tool Jacobian's used rows at q (n x (n - rows),
// by SVD; n x 0 where the arm has no redundancy for `mode`).
Eigen::MatrixXd ToolNullSpace(const Robot& robot, const Eigen::VectorXd& q, TargetMode mode);

// Whether the arm at q holds `target` within the options' tolerances and the joint limits,
// clear by the safety margin: where it stands, a path starts without a move.
bool StandsOnTarget(const Robot& robot, const planning::Scene* scene, const ToolTarget& target,
                    const Eigen::VectorXd& q, const RobotIkOptions& options);

// A sample at joint values q near its target: the tool put back by Newton steps (ToolStep,
// least motion), then its errors, clearance and status as the tracker would give them (rates
// are checked later): NOT_CONVERGED off the tolerances, JOINT_LIMIT_BLOCKED, IN_COLLISION.
RobotIkResult PlacedSample(const Robot& robot, const planning::Scene* scene,
                           const ToolTarget& target, const RobotIkOptions& options,
                           Eigen::VectorXd q);

}  // namespace ikd::robot::internal
