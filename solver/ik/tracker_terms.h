// Internal to the chain-arm tracker (tracker.cc, tracker_cost.cc): the bands of its cost.
#pragma once

namespace ikd::ik::internal {

// The cost penalizes clearance below this multiple of the safety margin, so that the balance
// against the smoothness terms settles outside the margin itself.
inline constexpr double kMarginBuffer = 1.25;
// Obstacles closer than this many (buffered) margins count as near: the random trials run
// before the limb reaches the margin (measured: at 1, tracking past 20 obstacles collided).
inline constexpr double kObstacleBand = 2.0;

}  // namespace ikd::ik::internal
