// What the IK side computes once per robot on its first use and keeps with it (seed_atlas.h's
// seed atlas, self_collision.h's allowed-collision matrix, analytic_ik.h's closed form: 0.1-0.2 s
// together for the presets), computed at once: for a benchmark that times its solves. The server
// builds them on an arm's first solve, not when the arm is stored: a stored URDF arm with a 5 m
// tool offset kept CreateArm busy for over 35 s under the fuzz instrumentation.
//
//   ikd::robot::BuildFirstUseData(robot);   // before the robot is shared or timed
#pragma once

#include "ikd/robot/robot.h"

namespace ikd::robot {

void BuildFirstUseData(const Robot& robot);

}  // namespace ikd::robot
