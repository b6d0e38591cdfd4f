#include "robot/subproblems.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <Eigen/Geometry>

namespace ikd::robot::internal {
namespace {

// Relative tolerance of exactness and degeneracy: round-off of a few hundred operations.
constexpr double kTolerance = 1e-9;

}  // namespace

Eigen::Matrix3d Rot(const Eigen::Vector3d& k, double theta) {
  return Eigen::AngleAxisd(theta, k).toRotationMatrix();
}

Eigen::Matrix3d Rot(const Eigen::Vector3d& k, double cos_theta, double sin_theta) {
  Eigen::Matrix3d R = (1.0 - cos_theta) * (k * k.transpose());
  R.diagonal().array() += cos_theta;
  R(0, 1) -= sin_theta * k.z();
  R(1, 0) += sin_theta * k.z();
  R(0, 2) += sin_theta * k.y();
  R(2, 0) -= sin_theta * k.y();
  R(1, 2) -= sin_theta * k.x();
  R(2, 1) += sin_theta * k.x();
  return R;
}

namespace {

// The angle of the direction (x, y), with its cosine and sine; (1, 0) for the zero vector.
Angle1 AngleOf(double x, double y) {
  Angle1 out;
  out.theta = std::atan2(y, x);
  const double r = std::sqrt(x * x + y * y);  // lengths of an arm's scale: no overflow
  if (r > 0.0) {
    out.cos = x / r;
    out.sin = y / r;
  }
  return out;
}

}  // namespace

double AngleAbout(const Eigen::Vector3d& k, const Eigen::Matrix3d& R) {
  return AngleAboutWithCosSin(k, R).theta;
}

Angle1 AngleAboutWithCosSin(const Eigen::Vector3d& k, const Eigen::Matrix3d& R) {
  // R = rot(k, t): trace R = 1 + 2 cos t and R - R^T = 2 sin t [k]x.
  const Eigen::Vector3d vee(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));
  return AngleOf(0.5 * (R.trace() - 1.0), 0.5 * k.dot(vee));
}

Angle1 Subproblem1(const Eigen::Vector3d& k, const Eigen::Vector3d& p1, const Eigen::Vector3d& p2) {
  // Only the components across k turn: theta is the angle between them about k.
  const Eigen::Vector3d a = p1 - k * k.dot(p1);
  const Eigen::Vector3d b = p2 - k * k.dot(p2);
  const double scale = std::max({p1.norm(), p2.norm(), 1e-300});
  Angle1 out;
  if (a.norm() <= kTolerance * scale || b.norm() <= kTolerance * scale) {
    out.degenerate = true;
    out.exact = std::abs(a.norm() - b.norm()) <= 1e-6 * scale;
    return out;
  }
  const Angle1 angle = AngleOf(a.dot(b), k.dot(a.cross(b)));
  out.theta = angle.theta;
  out.cos = angle.cos;
  out.sin = angle.sin;
  out.exact = std::abs(a.norm() - b.norm()) <= 1e-6 * scale &&
              std::abs(k.dot(p1) - k.dot(p2)) <= 1e-6 * scale;
  return out;
}

Angles Subproblem4(const Eigen::Vector3d& h, const Eigen::Vector3d& k, const Eigen::Vector3d& p,
                   double d) {
  // h . rot(k, t) p = A cos t + B sin t + C (IK-Geo's subproblem 4).
  const double hk = h.dot(k), kp = k.dot(p);
  const double A = h.dot(p) - hk * kp, B = h.dot(k.cross(p)), C = hk * kp;
  const double amplitude = std::hypot(A, B);
  const double scale = std::max(h.norm() * p.norm(), 1e-300);
  Angles out;
  out.count = 1;
  if (amplitude <= kTolerance * scale) {
    out.degenerate = true;
    out.exact = std::abs(d - C) <= 1e-6 * scale;
    return out;
  }
  const double phase = std::atan2(B, A);
  const double cos_phase = A / amplitude, sin_phase = B / amplitude;
  const double c = (d - C) / amplitude;
  if (std::abs(c) > 1.0) {
    out.exact = std::abs(c) - 1.0 <= 1e-12;  // a double root, past 1 by round-off
    out.theta[0] = WrapAngle(c > 0.0 ? phase : phase + std::numbers::pi);
    out.cos[0] = c > 0.0 ? cos_phase : -cos_phase;
    out.sin[0] = c > 0.0 ? sin_phase : -sin_phase;
    return out;
  }
  const double spread = std::acos(c);
  const double sin_spread = std::sqrt(std::max(0.0, 1.0 - c * c));
  out.count = 2;
  out.theta[0] = WrapAngle(phase + spread);
  out.theta[1] = WrapAngle(phase - spread);
  // cos and sin of phase +- spread by the sum formulas.
  out.cos[0] = cos_phase * c - sin_phase * sin_spread;
  out.sin[0] = sin_phase * c + cos_phase * sin_spread;
  out.cos[1] = cos_phase * c + sin_phase * sin_spread;
  out.sin[1] = sin_phase * c - cos_phase * sin_spread;
  return out;
}

Angles Subproblem3(const Eigen::Vector3d& k, const Eigen::Vector3d& p1, const Eigen::Vector3d& p2,
                   double d) {
  // |rot p1 - p2|^2 = |p1|^2 + |p2|^2 - 2 p2 . rot p1 = d^2.
  return Subproblem4(p2, k, p1, 0.5 * (p1.squaredNorm() + p2.squaredNorm() - d * d));
}

AnglePairs Subproblem2(const Eigen::Vector3d& k1, const Eigen::Vector3d& p1,
                       const Eigen::Vector3d& k2, const Eigen::Vector3d& p2) {
  // The common vector c = alpha k1 + beta k2 + gamma (k1 x k2) keeps p1's component along k1,
  // p2's along k2, and their length.
  const double c12 = k1.dot(k2);
  const double s2 = 1.0 - c12 * c12;
  const double a1 = k1.dot(p1), a2 = k2.dot(p2);
  const double alpha = (a1 - c12 * a2) / s2, beta = (a2 - c12 * a1) / s2;
  const double radius = 0.5 * (p1.norm() + p2.norm());
  const double in_plane = alpha * alpha + beta * beta + 2.0 * alpha * beta * c12;
  double gamma2 = (radius * radius - in_plane) / s2;
  AnglePairs out;
  const double scale = std::max(radius * radius, 1e-300);
  out.exact = gamma2 >= -1e-6 * scale && std::abs(p1.norm() - p2.norm()) <= 1e-6 * radius;
  gamma2 = std::max(gamma2, 0.0);
  const Eigen::Vector3d base = alpha * k1 + beta * k2;
  const Eigen::Vector3d across = k1.cross(k2) * std::sqrt(gamma2);
  out.count = gamma2 > 0.0 ? 2 : 1;
  for (int i = 0; i < out.count; ++i) {
    const Eigen::Vector3d c =
        i == 0 ? Eigen::Vector3d(base + across) : Eigen::Vector3d(base - across);
    const Angle1 first = Subproblem1(k1, p1, c);
    const Angle1 second = Subproblem1(k2, p2, c);
    out.theta1[i] = first.theta;
    out.theta2[i] = second.theta;
    out.cos1[i] = first.cos;
    out.sin1[i] = first.sin;
    out.cos2[i] = second.cos;
    out.sin2[i] = second.sin;
    out.degenerate = out.degenerate || first.degenerate || second.degenerate;
  }
  return out;
}

}  // namespace ikd::robot::internal
