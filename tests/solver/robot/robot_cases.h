// The industrial-arm presets the robot tests run on, each with a ready pose: one list for the
// parameterized suites of robot_ik_test.cc and robot_path_test.cc.
#pragma once

#include <vector>

#include <Eigen/Geometry>

#include "ikd/robot/chain.h"
#include "ikd/robot/presets.h"

namespace ikd::robot {

// The tests' own forward kinematics of a chain (URDF composition; every preset joint is
// revolute): the tool frame at joint values q, a second opinion on the library's ToolPose.
inline Eigen::Isometry3d ToolFrame(const ChainSpec& spec, const Eigen::VectorXd& q) {
  Eigen::Isometry3d X = spec.X_WB;
  for (size_t k = 0; k < spec.joints.size(); ++k) {
    X = X * spec.joints[k].X_PJ * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
  }
  return X * spec.X_FT;
}

struct RobotCase {
  const char* name;
  ChainSpec (*make)();
  std::vector<double> ready;  // a working pose away from singularities and limits
};

inline const RobotCase kRobotCases[] = {
    {"ur5", presets::Ur5, {0.0, -1.2, 1.5, -1.8, -1.57, 0.0}},
    {"panda", presets::Panda, {0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785}},
    {"iiwa14", presets::Iiwa14, {0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0}}};

}  // namespace ikd::robot
