// The benchmark's own UR5 kinematics, independent of ikd's: its DH forward kinematics and the
// closed form of Hawkins (2013), the oracle that counts a pose's solutions.
#pragma once

#include <vector>

#include <Eigen/Core>

namespace ikd::bench {

// The largest joint difference modulo a full turn.
double TurnDistance(const Eigen::VectorXd& a, const Eigen::VectorXd& b);
// The tool frame of the UR5's DH table at q (4 x 4).
Eigen::Matrix4d Ur5Forward(const Eigen::VectorXd& q);
// Every solution of tool frame T by Hawkins' closed form, each checked by Ur5Forward (1e-9) and
// told apart from the others by more than 0.1 rad.
std::vector<Eigen::VectorXd> Ur5ClosedForm(const Eigen::Matrix4d& T);

}  // namespace ikd::bench
