// Live Track on the witness scenarios (issue 35's targets): each chain-arm scenario's hand path
// streamed target by target to the rate-limited tracker (ik/rate_limit.h) with servo limits
// declared at 1.5x the witness's top joint speed and 3x its top acceleration, measured by the
// independent checker from the answers' sites: limits in the arm's own coordinates, collisions
// at and between answers (the checker's subdivision), the share REACHED and the hand's lag.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "robot_scenarios.h"
#include "scenarios.h"

namespace ikd::bench::paths {

inline constexpr double kTrackVelocityFactor = 1.5;      // declared / the witness's top speed
inline constexpr double kTrackAccelerationFactor = 3.0;  // declared / its top acceleration

// Prints one table row per kind, the scenarios that miss a target, and the verdicts. `dump`
// (may be null): one CSV line per answer (kind, index, sample, status, lag, the checker's least
// clearance, joint values; %.17g, no timings: two runs give the same bytes).
// `declared` false: the same with no servo limit declared. `jerk_factor` > 0: every joint also
// declares a jerk limit of that many times the witness's top jerk.
void RunTrackWitnessCase(const std::vector<Kind>& kinds, int count, uint64_t seed, bool declared,
                         double jerk_factor, std::FILE* dump);

// The industrial arms' rate-limited tracker on their witness scenarios (robot_scenarios.h)
// with the presets' own servo limits, measured by the robot checker: one table row per kind.
void RunRobotTrackWitnessCase(const std::vector<RobotKind>& kinds, int count, uint64_t seed);

}  // namespace ikd::bench::paths
