// The seed of a planner's further attempt (another start of a path, another climb of the
// ladder), for any arm: the chain arms' PlanPath (ik/path.h) and the industrial arms'
// PlanRobotPath (robot/robot_path.h) both derive their attempts' seeds with it.
#pragma once

#include <cstdint>

namespace ikd::planning {

// Attempt n's seed (n = 0: `seed` itself): apart from it by n golden-ratio increments
// (SplitMix64's), so that the attempts draw unrelated random streams.
inline uint64_t AttemptSeed(uint64_t seed, int n) {
  return seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(n);
}

}  // namespace ikd::planning
