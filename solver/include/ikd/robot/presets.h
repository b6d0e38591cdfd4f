// Four industrial arms from their published kinematic parameters, as test and benchmark
// fixtures and as starting points for users:
//   Ur5():    Universal Robots UR5, standard DH (UR's published table), 6 joints, +-2 pi.
//   Panda():  Franka Emika Panda, modified DH (Franka's documented table), 7 joints, flange
//             0.107 m along z of frame 7.
//   Iiwa14(): KUKA LBR iiwa 14 R820, standard DH (0.36 / 0.42 / 0.40 m, flange 0.126 m),
//             7 joints.
//   Irb120(): ABB IRB 120, a 6R arm with a spherical wrist (the Puma / KUKA KR / ABB class of
//             analytic_ik.h), from its product specification; joint 6 turns +-400 degrees.
// Limits: position and maximum velocity as the makers' data sheets give them.
//
// The ...WithBody() variants add the arm's collision model (ChainSpec::link_shapes, so that
// self-collision is checked too): capsules enclosing every vertex of the published robot
// description's collision and visual meshes, with their source in geometry_notes
// (docs/preset_geometry.md: sources, fit, margins). The base link is not part of it. The IRB 120
// has none (no description here to fit); give it link_radii.
#pragma once

#include "ikd/robot/chain.h"

namespace ikd::robot::presets {

ChainSpec Ur5();
ChainSpec Panda();
ChainSpec Iiwa14();
ChainSpec Irb120();

ChainSpec Ur5WithBody();
ChainSpec PandaWithBody();
ChainSpec Iiwa14WithBody();

}  // namespace ikd::robot::presets
