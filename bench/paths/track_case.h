// How live Track follows a moving hand within declared servo limits (issue 16, item 4): the
// rate-limited tracker of ik/rate_limit.h on a hand circle at rising speeds, in free space and
// among the quick-start scene's pillars, measured from the answers' own sites.
#pragma once

#include <cstdio>

namespace ikd::bench::paths {

// Prints one Markdown table row per (scene, servo limits, hand speed): the answers by status,
// the hand's lag behind its target (largest, and mean over the second half of the turn), the
// joints' largest speed and acceleration over their limits, the least clearance (the
// checker's distances) and the time per answer. `dump` (may be null): one CSV line per answer,
// its status, joint angles and clearance (%.17g, no timings: two runs give the same bytes).
void RunTrackCase(std::FILE* dump);

// The same for the UR5, Panda and iiwa14 (robot_track_case.cc): a tool circle about each
// arm's ready pose, position only and full pose, measured by the robot checker; `dump` as above.
void RunRobotTrackCase(std::FILE* dump);

}  // namespace ikd::bench::paths
