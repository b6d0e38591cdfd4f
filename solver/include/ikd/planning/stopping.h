// Room to brake, for any arm (Track): an answer is safe to give only where the arm, moving as
// it then moves, can still stop clear of everything. From the answer every joint is braked
// towards rest at its acceleration limit step by step, exactly as JointRateWindow::Braked
// brakes a LATE answer, and the motion of each step is checked by the swept clearance
// (swept_clearance.h). An answer that can stop clear is followed by one that can (brake on:
// the same steps), so a stream of such answers from a clear start at rest never touches a
// static obstacle, at the answers or between them, whatever the targets do next.
//
//   if (!ikd::planning::CanStopClear(window, body, scene, q, v, dt, clearance_at_q)) { ... }
#pragma once

#include <optional>
#include <utility>

#include <Eigen/Core>

#include "ikd/planning/joint_rates.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/step_status.h"
#include "ikd/planning/swept_clearance.h"

namespace ikd::planning {

// Whether the arm at joint values q moving at v (the motion into q over the last dt), whose
// clearance at q is `clearance`, can brake to rest clear of the scene and of itself: `window`
// gives the joints' limits (its last answer is replaced by q and v), braking in steps of dt.
// Where the whole stop moves no point of the body as far as half the clearance
// (ArmBody::TravelBound) nothing is evaluated; else the stop's steps are checked by
// StaysClearAlong (swept_clearance.h). A stop longer than `max_steps` counts as not clear.
bool CanStopClear(JointRateWindow window, const ArmBody& body, const Scene* scene,
                  const Eigen::VectorXd& q, const Eigen::VectorXd& v, double dt, double clearance,
                  int max_steps = 10000);

// The blends of an answer with the last answer braked that a tracker tries, boldest first, when
// the answer cannot stop clear: a blend of two states within the limits is within them (each
// joint's box is convex), and the last (0: the braked state itself) can stop clear wherever
// the last answer could.
inline constexpr double kStopBlends[] = {0.5, 0.25, 0.125, 0.0};

// The two holds of both arm kinds' rate-limited trackers, over their answer types (a Step with
// min_clearance and status). `rebuild(q, step)` makes `step` the answer at joint values q
// (false: there is none) with its clearance and tool or hand error.

// An answer whose state or motion from the last answer `last` touches something, on an arm with
// no rate limits: the boldest blend of `last` and `q` (kStopBlends) that is clear and whose
// motion from `last` is clear replaces it, IN_COLLISION (no clear way to the target found);
// where none is, both stay.
template <typename Step, typename Rebuild>
void HoldClear(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& last, Step& step,
               Eigen::VectorXd& q, const Rebuild& rebuild) {
  for (const double keep : kStopBlends) {
    Eigen::VectorXd blend = last + keep * (q - last);
    Step held = step;
    if (!rebuild(blend, held) || held.min_clearance < 0.0) continue;
    if (keep > 0.0 && SweptClearanceOf(body, scene, last, blend).min_clearance < 0.0) continue;
    held.status = StepStatus::kInCollision;
    step = std::move(held);
    q = std::move(blend);
    return;
  }
}

// An answer that cannot stop clear (CanStopClear) or whose motion touches something: the
// boldest blend of the last answer braked over dt and `q` that can stop clear, and whose motion
// from the last answer is clear where the last answer was (`last_clearance` >= 0), replaces it,
// ACCELERATION_LIMITED (IN_COLLISION where it touches something); where none is, both stay.
template <typename Step, typename Rebuild>
void HoldForBraking(const JointRateWindow& window, const ArmBody& body, const Scene* scene,
                    double dt, double last_clearance, Step& step, Eigen::VectorXd& q,
                    const Rebuild& rebuild) {
  const Eigen::VectorXd braked = window.Braked(dt);
  for (const double keep : kStopBlends) {
    Eigen::VectorXd blend = braked + keep * (q - braked);
    Step held = step;
    if (!rebuild(blend, held)) continue;
    if (keep > 0.0 && !CanStopClear(window, body, scene, blend, (blend - window.q()) / dt, dt,
                                    held.min_clearance)) {
      continue;
    }
    if (keep > 0.0 && last_clearance >= 0.0 &&
        SweptClearanceOf(body, scene, window.q(), blend).min_clearance < 0.0) {
      continue;  // the motion into it touches something (the braked state's does not)
    }
    held.status =
        held.min_clearance < 0.0 ? StepStatus::kInCollision : StepStatus::kAccelerationLimited;
    step = std::move(held);
    q = std::move(blend);
    return;
  }
}

// Which hold HoldIfUnsafe took.
enum class SafetyHold { kNone, kBraking, kClear };

// Both trackers' holds on a new answer `step` at joint values q, moving at v over dt from the
// window's last answer, whose clearance was `last_clearance`: on an arm with rate limits an
// answer that cannot stop clear, or whose motion touches something where the last answer was
// clear, is held for braking (HoldForBraking); on one without, an answer whose state or motion
// touches something where the last answer was clear is held clear (HoldClear). v follows q,
// and the answer takes the clearance of its motion. `rebuild` as for the holds.
template <typename Step, typename Rebuild>
SafetyHold HoldIfUnsafe(const JointRateWindow& window, const ArmBody& body, const Scene* scene,
                        bool rate_limited, double dt, double last_clearance, Step& step,
                        Eigen::VectorXd& q, Eigen::VectorXd& v, const Rebuild& rebuild) {
  SweptClearance motion = SweptClearanceOf(body, scene, window.q(), q);
  SafetyHold hold = SafetyHold::kNone;
  if (dt > 0.0 && rate_limited &&
      ((last_clearance >= 0.0 && motion.min_clearance < 0.0) ||
       !CanStopClear(window, body, scene, q, v, dt, step.min_clearance))) {
    HoldForBraking(window, body, scene, dt, last_clearance, step, q, rebuild);
    v = (q - window.q()) / dt;
    motion = SweptClearanceOf(body, scene, window.q(), q);
    hold = SafetyHold::kBraking;
  }
  if (!rate_limited && last_clearance >= 0.0 &&
      (step.min_clearance < 0.0 || motion.min_clearance < 0.0)) {
    HoldClear(body, scene, window.q(), step, q, rebuild);
    v = dt > 0.0 ? Eigen::VectorXd((q - window.q()) / dt) : Eigen::VectorXd::Zero(q.size());
    motion = SweptClearanceOf(body, scene, window.q(), q);
    hold = SafetyHold::kClear;
  }
  TakeMotionClearance(motion, step);
  return hold;
}

// What both rate-limited trackers keep of their last answer (Target: a chain arm's hand
// position, an industrial arm's tool target).
template <typename Target>
struct LastAnswer {
  bool answered = false;
  double time = 0.0;       // of the last answer
  double clearance = 0.0;  // its min clearance
  bool lagging = false;    // it was short of its target: the next answer brakes for it
  std::optional<Target> target;

  // Records an answer for `to` at `at` whose min clearance is `min_clearance`.
  void Record(const Target& to, double at, double min_clearance) {
    target = to;
    time = at;
    clearance = min_clearance;
    answered = true;
  }
};

// A LATE answer of either tracker at joint values q: the last answer braked over dt where the
// arm was `moving`, else where it stands. It is IN_COLLISION where its state touches something,
// takes the clearance of the motion into it, and becomes the window's last answer (the approach
// planned for the old target is forgotten).
template <typename Step>
void AnswerLate(JointRateWindow& window, const ArmBody& body, const Scene* scene,
                const Eigen::VectorXd& q, double dt, bool moving, Step& step) {
  step.status = step.min_clearance < 0.0 ? StepStatus::kInCollision : StepStatus::kLate;
  if (moving) TakeMotionClearance(SweptClearanceOf(body, scene, window.q(), q), step);
  const Eigen::VectorXd v =
      moving ? Eigen::VectorXd((q - window.q()) / dt) : Eigen::VectorXd::Zero(q.size());
  window.ForgetApproach();
  window.Answer(q, v, dt);
}

}  // namespace ikd::planning
