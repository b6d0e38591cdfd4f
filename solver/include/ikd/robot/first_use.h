// What the IK side computes once per robot on its first use and keeps with it (seed_atlas.h's
// seed atlas, self_collision.h's allowed-collision matrix, analytic_ik.h's closed form: 0.1-0.2 s
// together for the presets), computed at once: for a server that stores an arm, or a benchmark
// that times its solves, so that no latency-bound call pays for it.
//
//   ikd::robot::BuildFirstUseData(robot);   // before the robot is shared or timed
#pragma once

#include "ikd/robot/robot.h"

namespace ikd::robot {

void BuildFirstUseData(const Robot& robot);

}  // namespace ikd::robot
