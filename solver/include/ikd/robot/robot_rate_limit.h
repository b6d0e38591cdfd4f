// Live tool targets within an industrial arm's servo limits (Track), the counterpart of
// ik/rate_limit.h: every answer after the first keeps each joint within |v| <= max_velocity,
// |v - v_previous| <= max_acceleration dt and slow enough to stop before its position limit,
// relative to the previous answer. When the tracker's answer is too fast, the tool goes only
// the feasible fraction of the way (the tracker again from the last answer), any excess is
// clamped joint by joint (any joint values are a valid arm: the tool lags, the links stay
// exact), halving the fraction while the clamped arm would collide (up to four times); the
// answer says VELOCITY_LIMITED or ACCELERATION_LIMITED with its errors against
// the requested target. That cut way moves the tool only as far as its slowest joint allows,
// so the answer is then the closest state within every joint's range instead, where it is
// closer and keeps the clearance (planning::ClosestWithinLimits, as ik/rate_limit.h, on the
// tool's Jacobian, the links kept off the obstacles by a braking rule); REACHED where that state
// is on the target. Never a jump: the arm catches up over the next targets, braking for the
// target (its joint velocity read from the last two targets solved from the same start) so that
// it arrives with the target's velocity instead of swinging past it. Every answer leaves the arm room to brake to
// rest clear of everything, and without declared limits an answer that would collide is held
// clear (planning/stopping.h: HoldIfUnsafe).
//
//   auto limited = ikd::robot::RateLimitedRobotTracker::Create(*robot, options, q0, &scene);
//   for (const auto& [time, target] : stream) auto result = limited->StepTo(target, time);
//
// The first answer is a single-pose solve (RobotTracker::Solve; none where the start is already
// on the target, see First) and not limited, nor is a
// target whose time does not advance. Joints without limits are not limited.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/planning/joint_rates.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/stopping.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_body.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {

class RateLimitedRobotTracker {
 public:
  // As RobotTracker::Create.
  static absl::StatusOr<RateLimitedRobotTracker> Create(const Robot& robot,
                                                        const RobotIkOptions& options,
                                                        const Eigen::VectorXd& q0,
                                                        const planning::Scene* scene = nullptr);

  // The answer for `target` at `time` (see above).
  RobotIkResult StepTo(const ToolTarget& target, double time);
  // The answer at `time` when there is no time to solve `target` (Track's deadline): every
  // joint braked from the last answer towards rest (planning::JointRateWindow::Braked), LATE
  // (IN_COLLISION where the motion into it touches), the tool short of the target; the stream
  // goes on from it. Before any answer: the initial configuration. No solve.
  RobotIkResult Brake(const ToolTarget& target, double time);

 private:
  RateLimitedRobotTracker(const Robot& robot, RobotTracker tracker, const planning::Scene* scene,
                          const RobotIkOptions& options);
  // Replaces `result` (joint values q) by the closest state within the limits where
  // PreferClosest (planning/joint_rates.h) says so: clearance first, then the tool nearer `target`;
  // true when that state is on the target (REACHED). `only_on_target`: only a state on the
  // target replaces it (jerk-limited arms, as ik::RateLimitedTracker).
  bool TakeClosestWithinLimits(const ToolTarget& target, double dt, RobotIkResult& result,
                               Eigen::VectorXd& q, bool only_on_target = false);
  // The joint values within every joint's range over dt that bring the tool closest to
  // `target` (planning::ClosestWithinLimits, the links' clearances to the scene as its
  // clearances).
  Eigen::VectorXd ClosestWithinLimits(const ToolTarget& target, double dt) const;
  // Its linearization at q: the tool's Jacobian and error rows (rotation weighted by
  // kRotationLength) and the links nearer than `within` to an obstacle, with their gradients.
  planning::ClosestRows ClosestRowsAt(const ToolTarget& target, const Eigen::VectorXd& q,
                                      double within) const;
  // The tool's error rows at q: position (m) and, for a pose target, the rotation vector that
  // takes the tool to the target's orientation, times kRotationLength.
  Eigen::VectorXd ToolError(const ToolTarget& target, const Eigen::VectorXd& q) const;
  // Per joint its servo limits and position range.
  static std::vector<planning::JointRate> JointRates(const Robot& robot);
  // While the arm lags: the target's joint velocity (the previous target solved from the last
  // answer, against q_target) and the joints' distance left to q_target, so that the window
  // brakes for the target.
  void PlanApproach(const ToolTarget& previous, double dt, const Eigen::VectorXd& q_target);
  // `result` moved to joint values q: sites, errors against `target` and clearance.
  void Rebuild(const Eigen::VectorXd& q, const ToolTarget& target, RobotIkResult& result);
  // The first answer: the start itself where it is already on the target, clear by the safety
  // margin and within its limits (REACHED, no solve); else a single-pose solve from it, unless that
  // collides where the start is clear: then the start, with the solve's status. A solve from a
  // start on its target can wander off it (the Panda with its body, self-clearance trials near the
  // margin: 5.4 rad away and 11 cm deep in an obstacle), a jump in no time.
  RobotIkResult First(const ToolTarget& target);
  // The tool `fraction` of the way from the last answer's pose to `target`.
  ToolTarget PartWay(const ToolTarget& target, double fraction) const;

  const Robot* robot_;
  RobotTracker tracker_;
  const planning::Scene* scene_;  // may be null (free space)
  RobotBody body_;  // the motion from the last answer is checked on it (swept_clearance.h)
  double safety_margin_;
  double position_tolerance_, rotation_tolerance_;
  // The last answer's joint values and velocities, and what each joint may do next.
  planning::JointRateWindow window_;
  planning::LastAnswer<ToolTarget> last_;
  // Jerk-limited arms: the tracker's own solve of the last target, unlimited; while the arm
  // lags, the next target is solved from it, so that the joints brake for one configuration
  // that moves with the target (as ik::RateLimitedTracker does).
  std::optional<Eigen::VectorXd> reference_;
  planning::ReferenceMotion reference_motion_;  // its joint velocity and the change
  static constexpr int kRetries = 4;
  static constexpr double kRotationLength = 1.0;  // m per rad of tool rotation error
};

}  // namespace ikd::robot
