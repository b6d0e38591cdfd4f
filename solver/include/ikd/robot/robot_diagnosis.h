// Why an industrial arm's answer is not on its target (ik/diagnosis.h's reasons), read from the
// joint values themselves: link capsules in collision with the scene or inside the safety
// margin, joints at a position limit, a full pose that no configuration within the limits
// reaches (6R arms with a closed form: analytic_ik.h's Reach), a singular tool Jacobian, the
// tool's position and rotation errors against the options' tolerances.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "ikd/ik/diagnosis.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {

// A least singular value of the used rows of the tool Jacobian (m per rad for position rows)
// below this is reported as kSingular.
inline constexpr double kSingularValue = 1e-2;

// `scene` may be null. Reasons as DiagnoseChain lists them (collisions, the closest pair inside
// the margin, joints at limits, out of reach, then singular and the residuals).
std::vector<ik::Reason> DiagnoseRobot(const Robot& robot, const planning::Scene* scene,
                                      const Eigen::VectorXd& q, const ToolTarget& target,
                                      const RobotIkOptions& options);

}  // namespace ikd::robot
