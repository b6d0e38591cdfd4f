// Live targets within the arm's servo limits (Track): the future of the hand path is unknown,
// so each answer is limited relative to the previous one. The tracker (tracker.h) solves the
// target; when some joint would leave its range (|v| <= max_velocity, |v - v_previous| <=
// max_acceleration dt, slow enough to stop before a position limit), the tracker solves again
// from the last answer with the hand only the feasible fraction of the way (its configurations
// keep their clearance), any excess left is clamped joint by joint (the arm rebuilt by forward
// kinematics: exact limb lengths; a clamped arm that would collide goes half as far, up to
// four times). That cut way moves the hand only as far as its slowest joint allows, so the
// answer is then the closest state within every joint's range instead, where it is closer
// and keeps the clearance: the hand as near the target as the ranges allow, the least joint
// motion weighted by the limits, and the clearance kept off the safety margin by a braking
// rule (ClosestWithinLimits). The answer says VELOCITY_LIMITED or ACCELERATION_LIMITED with
// the hand short of the target, or REACHED where the closest state is on it. Never a jump: the
// arm catches up over the next targets, braking for the target as for a position limit (its
// velocity read from the last two targets solved from the same start), so that it arrives
// with the target's velocity instead of swinging past it. Spatial bends stay out of the
// straight band (kMinBend), where an azimuth flips. Every answer leaves the arm room to brake
// to rest clear of everything (planning/stopping.h; HoldForBraking), and without declared
// limits an answer that would collide is held clear (HoldClear): no answer and no motion
// between two touches what the arm could have avoided.
//
//   auto limited = ikd::ik::RateLimitedTracker::Create(*arm, &scene, options);
//   for (const auto& [time, target] : stream) auto step = limited->StepTo(target, time);
//
// The first answer is not limited (there is no previous answer to be limited against), nor
// is a target whose time does not advance (no interval to bound a rate over).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/arm_body.h"
#include "ikd/ik/tracker.h"
#include "ikd/planning/joint_rates.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/stopping.h"

namespace ikd::ik {

class RateLimitedTracker {
 public:
  // As ArmTracker::Create.
  static absl::StatusOr<RateLimitedTracker> Create(
      const Arm& arm, const planning::Scene* scene, const IkOptions& options,
      std::optional<Eigen::Matrix3Xd> initial_sites = {});

  // As ArmTracker::StepTo, then limited (see above).
  absl::StatusOr<IkResult> StepTo(const Eigen::Vector3d& target, double time);

  // The answer at `time` when there is no time to solve `target` (Track's deadline): every
  // angle braked from the last answer towards rest (planning::JointRateWindow::Braked), LATE
  // (IN_COLLISION where the motion into it touches), the hand short of the target; the stream
  // goes on from it. Before any answer: the initial configuration. Costs a forward kinematics
  // and a swept clearance, no solve.
  IkResult Brake(const Eigen::Vector3d& target, double time);

  const Eigen::Matrix3Xd& sites() const { return tracker_.sites(); }

 private:
  RateLimitedTracker(const Arm& arm, const planning::Scene* scene, ArmTracker tracker,
                     double safety_margin);
  // A limb and an obstacle (`other`: its index in the scene) or another limb, and their
  // clearance where NearPairs found them.
  struct NearPair {
    int limb = 0;
    int other = 0;
    bool obstacle = false;
    double clearance = 0.0;
  };
  // Per joint angle its servo limits and position range (interior planar angles, spatial
  // bends; a spatial azimuth has none).
  static std::vector<planning::JointRate> AngleRates(const Arm& arm);
  // A spatial bend's range: the declared one (else [0, pi]) kept out of the straight band
  // [kMinBend, pi - kMinBend], where the azimuth is undefined: a bend through 0 or pi flips its
  // azimuth by pi in one answer.
  static std::pair<double, double> OutOfTheStraightBand(
      std::optional<std::pair<double, double>> declared);
  // The step's joint angles, continued across +-pi from the last answer's.
  Eigen::VectorXd Unwrapped(const IkResult& step) const;
  // While the arm lags: the target's joint velocity (the previous target solved from the last
  // answer `last`, against the step's angles q) and the joints' distance left to q, so that
  // the window brakes for the target as for a position limit (no swinging past it).
  absl::Status PlanApproach(const Eigen::Matrix3Xd& last, double time, const IkResult& step,
                            const Eigen::VectorXd& q);
  // The angles of a reference configuration (`sites`; none: empty), unwrapped as the answers.
  Eigen::VectorXd ReferenceAngles(const std::optional<Eigen::Matrix3Xd>& sites,
                                  const IkResult& step) const;
  // Whether this step follows reference_ (jerk-limited and lagging).
  bool FollowsReference() const {
    return window_.jerk_limited() && last_.lagging && reference_.has_value();
  }
  // `step` rebuilt at angles q (forward kinematics) with its diagnostics.
  bool Rebuild(const Eigen::VectorXd& q, IkResult& step);
  // Rebuild, and the hand's distance from `target`.
  bool RebuildTowards(const Eigen::Vector3d& target, const Eigen::VectorXd& q, IkResult& step);
  // Replaces `step` (angles q) by the closest state within the limits where PreferClosest
  // (planning/joint_rates.h) says so: clearance first, then the hand nearer `target`; true when
  // that state is on the target (REACHED). `only_on_target`: only a state on the target
  // replaces it (jerk-limited joints approach their reference joint by joint; the hand-nearest
  // state short of the target sets them swinging about a still one).
  bool TakeClosestWithinLimits(const Eigen::Vector3d& target, double dt, IkResult& step,
                               Eigen::VectorXd& q, bool only_on_target = false);
  // The angles within every joint's range over dt that bring the hand closest to `target`
  // (planning::ClosestWithinLimits, the near pairs of limb and obstacle or limb and limb as
  // its clearances). The caller checks the result's clearance.
  Eigen::VectorXd ClosestWithinLimits(const Eigen::Vector3d& target, double dt) const;
  // Its linearization at angles q: the hand's Jacobian and the clearance gradients of the pairs
  // nearer than `within`, by forward differences; nullopt where q has no sites.
  std::optional<planning::ClosestRows> ClosestRowsAt(const Eigen::Vector3d& target,
                                                     const Eigen::VectorXd& q, double within) const;
  // The pairs of limb and obstacle or limb and limb (not adjacent) closer than `within`.
  std::vector<NearPair> NearPairs(const Eigen::Matrix3Xd& sites, double within) const;
  // A pair's signed clearance (capsule to shape, capsule to capsule) at `sites`.
  double PairClearance(const NearPair& pair, const Eigen::Matrix3Xd& sites) const;
  // The sites at angles q (forward kinematics), or nullopt where none are defined.
  std::optional<Eigen::Matrix3Xd> SitesAt(const Eigen::VectorXd& q) const;

  const Arm* arm_;
  const planning::Scene* scene_;  // may be null (free space)
  ChainArmBody body_;  // the motion from the last answer is checked on it (swept_clearance.h)
  ArmTracker tracker_;
  double safety_margin_;
  // The last answer's joint angles (unwrapped along the stream) and velocities, and what
  // each angle may do next.
  planning::JointRateWindow window_;
  planning::LastAnswer<Eigen::Vector3d> last_;
  // Jerk-limited arms: the tracker's own solve of the last target, unlimited; while the arm
  // lags, the next target is solved from it, not from the answer, so that the joints brake for
  // one configuration that moves with the target. (Solved from every answer, the configuration
  // wanders over the arm's redundancy while jerk-limited joints take long to stop: a 5-limb
  // arm then circled 16-26 cm about a still target.)
  std::optional<Eigen::Matrix3Xd> reference_;
  planning::ReferenceMotion reference_motion_;  // its joint velocity and the change
  static constexpr int kRetries = 4;
  static constexpr double kJacobianStep = 1e-7;    // rad, forward differences
  static constexpr double kReachedWithin = 1e-9;   // m: the closest state is on the target
  static constexpr double kOnTargetWithin = 1e-6;  // m: a jerk-limited answer re-anchors there
  // rad: spatial bends under Track's limits stay within [kMinBend, pi - kMinBend] (the path
  // optimizer's soft floor, internal::kDefaultMinBend, made hard).
  static constexpr double kMinBend = 0.2;
};

}  // namespace ikd::ik
