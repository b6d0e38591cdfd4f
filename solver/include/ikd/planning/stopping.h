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

#include <Eigen/Core>

#include "ikd/planning/joint_rates.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/swept_clearance.h"

namespace ikd::planning {

// Whether the arm at joint values q moving at v (the motion into q over the last dt), whose
// clearance at q is `clearance`, can brake to rest clear of the scene and of itself: `window`
// gives the joints' limits (its last answer is replaced by q and v), braking in steps of dt.
// Where the whole stop moves no point of the body as far as half the clearance
// (ArmBody::TravelBound) nothing is evaluated; else the stop's steps are checked by
// SweptClearancesAlong. A stop longer than `max_steps` counts as not clear.
bool CanStopClear(JointRateWindow window, const ArmBody& body, const Scene* scene,
                  const Eigen::VectorXd& q, const Eigen::VectorXd& v, double dt, double clearance,
                  int max_steps = 10000);

// The blends of an answer with the last answer braked that a tracker tries, boldest first, when
// the answer cannot stop clear: a blend of two states within the limits is within them (each
// joint's box is convex), and the last (0: the braked state itself) can stop clear wherever
// the last answer could.
inline constexpr double kStopBlends[] = {0.5, 0.25, 0.125, 0.0};

}  // namespace ikd::planning
