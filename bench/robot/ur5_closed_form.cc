#include "ur5_closed_form.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <Eigen/LU>

namespace ikd::bench {
namespace {

// The benchmark's own count of a UR5 pose's solutions: the closed form of Hawkins (2013,
// "Analytic inverse kinematics for the Universal Robots UR-5/UR-10 arms"), shoulder (2) x wrist
// (2) x elbow (2) where each exists, every candidate checked by the benchmark's own DH forward
// kinematics (1e-9) and told apart by more than 0.1 rad. The UR5's joints turn +-2 pi, so every
// solution is inside the limits modulo a full turn.
constexpr double kUr5D1 = 0.089159, kUr5A2 = -0.425, kUr5A3 = -0.39225, kUr5D4 = 0.10915,
                 kUr5D5 = 0.09465, kUr5D6 = 0.0823;
constexpr double kUr5Alpha[6] = {std::numbers::pi / 2, 0, 0, std::numbers::pi / 2, -std::numbers::pi / 2, 0};
constexpr double kUr5A[6] = {0, kUr5A2, kUr5A3, 0, 0, 0};
constexpr double kUr5D[6] = {kUr5D1, 0, 0, kUr5D4, kUr5D5, kUr5D6};

}  // namespace

// The largest joint difference modulo a full turn: the benchmark's own.
double TurnDistance(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  double largest = 0.0;
  for (int j = 0; j < a.size(); ++j) {
    largest = std::max(largest, std::abs(std::remainder(a[j] - b[j], 2.0 * std::numbers::pi)));
  }
  return largest;
}

// Standard DH: Rz(theta) Tz(d) Tx(a) Rx(alpha).
static Eigen::Matrix4d Ur5Link(int i, double theta) {
  const double ct = std::cos(theta), st = std::sin(theta);
  const double ca = std::cos(kUr5Alpha[i]), sa = std::sin(kUr5Alpha[i]);
  Eigen::Matrix4d A;
  A << ct, -st * ca, st * sa, kUr5A[i] * ct, st, ct * ca, -ct * sa, kUr5A[i] * st, 0, sa, ca, kUr5D[i], 0, 0, 0, 1;
  return A;
}

Eigen::Matrix4d Ur5Forward(const Eigen::VectorXd& q) {
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  for (int i = 0; i < 6; ++i) T = T * Ur5Link(i, q[i]);
  return T;
}

std::vector<Eigen::VectorXd> Ur5ClosedForm(const Eigen::Matrix4d& T) {
  std::vector<Eigen::VectorXd> solutions;
  const Eigen::Vector3d p5 = (T * Eigen::Vector4d(0, 0, -kUr5D6, 1)).head<3>();
  const double r5 = p5.head<2>().norm();
  if (r5 < kUr5D4) return solutions;
  const Eigen::Matrix4d T60 = T.inverse();
  for (int shoulder : {1, -1}) {
    const double q1 = std::atan2(p5.y(), p5.x()) + shoulder * std::acos(kUr5D4 / r5) + std::numbers::pi / 2;
    const double c5 = (T(0, 3) * std::sin(q1) - T(1, 3) * std::cos(q1) - kUr5D4) / kUr5D6;
    if (std::abs(c5) > 1.0) continue;
    for (int wrist : {1, -1}) {
      const double q5 = wrist * std::acos(c5), s5 = std::sin(q5);
      if (std::abs(s5) < 1e-9) continue;
      const double q6 = std::atan2((-T60(1, 0) * std::sin(q1) + T60(1, 1) * std::cos(q1)) / s5,
                                   (T60(0, 0) * std::sin(q1) - T60(0, 1) * std::cos(q1)) / s5);
      const Eigen::Matrix4d T14 = Ur5Link(0, q1).inverse() * T * Ur5Link(5, q6).inverse() * Ur5Link(4, q5).inverse();
      const Eigen::Vector3d p13 = (T14 * Eigen::Vector4d(0, -kUr5D4, 0, 1)).head<3>();
      const double c3 = (p13.squaredNorm() - kUr5A2 * kUr5A2 - kUr5A3 * kUr5A3) / (2 * kUr5A2 * kUr5A3);
      if (std::abs(c3) > 1.0) continue;
      for (int elbow : {1, -1}) {
        const double q3 = elbow * std::acos(c3);
        const double q2 = -std::atan2(p13.y(), -p13.x()) + std::asin(kUr5A3 * std::sin(q3) / p13.norm());
        const Eigen::Matrix4d T34 = (Ur5Link(1, q2) * Ur5Link(2, q3)).inverse() * T14;
        const double q4 = std::atan2(T34(1, 0), T34(0, 0));
        Eigen::VectorXd q(6);
        q << q1, q2, q3, q4, q5, q6;
        if ((Ur5Forward(q) - T).cwiseAbs().maxCoeff() > 1e-9) continue;
        const bool known = std::any_of(solutions.begin(), solutions.end(), [&](const Eigen::VectorXd& s) {
          return TurnDistance(s, q) < 0.1;
        });
        if (!known) solutions.push_back(q);
      }
    }
  }
  return solutions;
}

}  // namespace ikd::bench
