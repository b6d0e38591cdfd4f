// The Paden-Kahan subproblems that closed-form IK of a revolute arm decomposes into (Elias & Wen,
// "IK-Geo: unified robot inverse kinematics using subproblem decomposition", 2022), each with a
// least-squares answer where no exact one exists, so a pose just out of reach still gives the
// nearest joint values and a caller can tell exact from approximate by `exact`.
//
// Conventions: k, k1, k2 are unit axes; rot(k, theta) is the right-handed rotation about k
// (Rodrigues). Angles are returned in (-pi, pi].
#pragma once

#include <cmath>

#include <Eigen/Core>

namespace ikd::robot::internal {

// theta moved into [-pi, pi] by whole turns (std::remainder's result, at a fraction of its cost).
inline double WrapAngle(double theta) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return theta - kTwoPi * std::nearbyint(theta / kTwoPi);
}

// rot(k, theta) p = p cos(theta) + (k x p) sin(theta) + k (k . p) (1 - cos(theta)).
Eigen::Matrix3d Rot(const Eigen::Vector3d& k, double theta);
// The same from cos(theta) and sin(theta) (the subproblems give both: no sine or cosine to
// evaluate).
Eigen::Matrix3d Rot(const Eigen::Vector3d& k, double cos_theta, double sin_theta);

struct Angle1 {
  double theta = 0.0;
  double cos = 1.0, sin = 0.0;  // of theta
  bool exact = true;        // |p1| = |p2| and k . p1 = k . p2, within the tolerance
  bool degenerate = false;  // p1 or p2 (nearly) along k: every theta serves; 0 is returned
};
// The angle theta of the rotation about k nearest R (exact when R = rot(k, theta)), with its
// cosine and sine.
double AngleAbout(const Eigen::Vector3d& k, const Eigen::Matrix3d& R);
Angle1 AngleAboutWithCosSin(const Eigen::Vector3d& k, const Eigen::Matrix3d& R);

// Subproblem 1: theta minimizing |rot(k, theta) p1 - p2|.
Angle1 Subproblem1(const Eigen::Vector3d& k, const Eigen::Vector3d& p1, const Eigen::Vector3d& p2);

struct Angles {
  int count = 0;  // 1 or 2 (a least-squares answer, or a double root, is one)
  double theta[2] = {0.0, 0.0};
  double cos[2] = {1.0, 1.0}, sin[2] = {0.0, 0.0};  // of theta[i]
  bool exact = true;        // false: no exact solution, theta[0] is the least-squares one
  bool degenerate = false;  // the equation does not depend on theta: theta[0] = 0, count 1
};
// Subproblem 4: theta with h . rot(k, theta) p = d.
Angles Subproblem4(const Eigen::Vector3d& h, const Eigen::Vector3d& k, const Eigen::Vector3d& p,
                   double d);
// Subproblem 3: theta with |rot(k, theta) p1 - p2| = d (d >= 0).
Angles Subproblem3(const Eigen::Vector3d& k, const Eigen::Vector3d& p1, const Eigen::Vector3d& p2,
                   double d);

struct AnglePairs {
  int count = 0;  // 1 or 2
  double theta1[2] = {0.0, 0.0};
  double theta2[2] = {0.0, 0.0};
  double cos1[2] = {1.0, 1.0}, sin1[2] = {0.0, 0.0};  // of theta1[i]
  double cos2[2] = {1.0, 1.0}, sin2[2] = {0.0, 0.0};  // of theta2[i]
  bool exact = true;
  bool degenerate = false;  // p1 along k1 (or p2 along k2): theta1 (theta2) = 0 was chosen
};
// Subproblem 2: (theta1, theta2) with rot(k1, theta1) p1 = rot(k2, theta2) p2; k1, k2 not
// parallel. |p1| and |p2| should agree; their mean is used.
AnglePairs Subproblem2(const Eigen::Vector3d& k1, const Eigen::Vector3d& p1,
                       const Eigen::Vector3d& k2, const Eigen::Vector3d& p2);

}  // namespace ikd::robot::internal
