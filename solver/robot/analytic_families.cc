#include "robot/analytic_families.h"

#include "robot/subproblems.h"

namespace ikd::robot::internal {
namespace {

// The wrist of a spherical-wrist arm appended to (q1, q2, q3) of `arm_part`: two branches,
// flipped wrist or not, from R36 = R03^T R06 = rot(h4, q4) rot(h5, q5) rot(h6, q6).
void AppendWristAt(const Arm6& arm, const Eigen::Matrix3d& R06, const RawSolution& arm_part,
                   std::vector<RawSolution>& out) {
  const Eigen::Matrix3d R03 = Rot(arm.h[0], arm_part.cos[0], arm_part.sin[0]) *
                              Rot(arm.h[1], arm_part.cos[1], arm_part.sin[1]) *
                              Rot(arm.h[2], arm_part.cos[2], arm_part.sin[2]);
  const Eigen::Matrix3d R36 = R03.transpose() * R06;
  // rot(h4, -q4) R36 h6 = rot(h5, q5) h6 (subproblem 2, IK-Geo eq. for the spherical wrist).
  const AnglePairs wrist = Subproblem2(arm.h[3], R36 * arm.h[5], arm.h[4], arm.h[5]);
  for (int i = 0; i < wrist.count; ++i) {
    RawSolution s = arm_part;
    s.branch = 2 * arm_part.branch + i;
    s.q[3] = -wrist.theta1[i];
    s.q[4] = wrist.theta2[i];
    const Eigen::Matrix3d R35 =
        Rot(arm.h[3], wrist.cos1[i], -wrist.sin1[i]) * Rot(arm.h[4], wrist.cos2[i], wrist.sin2[i]);
    s.q[5] = AngleAbout(arm.h[5], R35.transpose() * R36);
    s.singular = s.singular || wrist.degenerate;
    out.push_back(s);
  }
}

Eigen::Matrix3d R06Of(const Arm6& arm, const Eigen::Isometry3d& X) {
  return X.linear() * arm.home.linear().transpose();
}

// From axis 1's point to axis 6's, which joint 6 does not move: the tool's position less its
// offset from axis 6's point, turned by R06.
Eigen::Vector3d FirstToLastPoint(const Arm6& arm, const Eigen::Isometry3d& X,
                                 const Eigen::Matrix3d& R06) {
  return X.translation() - R06 * (arm.home.translation() - arm.c[5]) - arm.c[0];
}

}  // namespace

std::vector<RawSolution> SolveThreeParallel(const Arm6& arm, const Eigen::Isometry3d& X) {
  const auto& h = arm.h;
  const auto& c = arm.c;
  const Eigen::Matrix3d R06 = R06Of(arm, X);
  // To the point where axes 5 and 6 meet, which joints 5 and 6 do not move.
  const Eigen::Vector3d w16 = FirstToLastPoint(arm, X, R06);
  std::vector<RawSolution> out;
  out.reserve(8);  // the most branches a 6R arm has
  // Joints 2-4 turn about h2, so h2 . R10 w16 is fixed: subproblem 4 for q1.
  const Angles first = Subproblem4(h[1], h[0], w16, h[1].dot(c[4] - c[0]));
  for (int i1 = 0; i1 < first.count; ++i1) {
    const double q1 = -first.theta[i1];
    const Eigen::Matrix3d R10 = Rot(h[0], first.cos[i1], first.sin[i1]);
    const Eigen::Matrix3d M = R10 * R06;  // = rot(h2, q2 + q3 + q4) rot(h5, q5) rot(h6, q6)
    // h2 . M h6 = h2 . rot(h5, q5) h6: subproblem 4 for q5.
    const Angles fifth = Subproblem4(h[1], h[4], h[5], h[1].dot(M * h[5]));
    for (int i5 = 0; i5 < fifth.count; ++i5) {
      const double q5 = fifth.theta[i5];
      const Eigen::Matrix3d R45 = Rot(h[4], fifth.cos[i5], fifth.sin[i5]);
      // rot(h6, -q6) rot(h5, -q5) h2 = M^T h2: subproblem 1 for q6.
      const Angle1 sixth = Subproblem1(h[5], R45.transpose() * h[1], M.transpose() * h[1]);
      const double q6 = -sixth.theta;
      const Angle1 a14 =
          AngleAboutWithCosSin(h[1], M * (R45 * Rot(h[5], sixth.cos, -sixth.sin)).transpose());
      const double q14 = a14.theta;
      const Eigen::Matrix3d R14 = Rot(h[1], a14.cos, a14.sin);
      // rot(h2, q2) (p23 + rot(h3, q3) p34) = v: subproblem 3 for q3, then 1 for q2.
      const Eigen::Vector3d p23 = c[2] - c[1], p34 = c[3] - c[2];
      const Eigen::Vector3d v = R10 * w16 - (c[1] - c[0]) - R14 * (c[4] - c[3]);
      const Angles third = Subproblem3(h[2], p34, -p23, v.norm());
      for (int i3 = 0; i3 < third.count; ++i3) {
        const double q3 = third.theta[i3];
        const double q2 =
            Subproblem1(h[1], p23 + Rot(h[2], third.cos[i3], third.sin[i3]) * p34, v).theta;
        RawSolution s;
        s.q = {q1, q2, q3, arm.sign[3] * (q14 - q2 - arm.sign[2] * q3), q5, q6};
        s.singular = first.degenerate || fifth.degenerate || sixth.degenerate;
        s.branch = static_cast<int>(out.size());
        out.push_back(s);
      }
    }
  }
  return out;
}

std::vector<RawSolution> ElbowArmParts(const Arm6& arm, const Eigen::Isometry3d& X) {
  const auto& h = arm.h;
  const auto& c = arm.c;
  const Eigen::Matrix3d R06 = R06Of(arm, X);
  const Eigen::Vector3d w16 = FirstToLastPoint(arm, X, R06);
  const Eigen::Vector3d p12 = c[1] - c[0], p23 = c[2] - c[1], p34 = c[3] - c[2];
  std::vector<RawSolution> out;
  out.reserve(4);  // the most arm parts: two of one joint, two of the next
  // Joints 2, 3 turn about h2: h2 . R10 w16 = h2 . (p12 + p23 + p34), subproblem 4 for q1.
  const Angles first = Subproblem4(h[1], h[0], w16, h[1].dot(c[3] - c[0]));
  for (int i1 = 0; i1 < first.count; ++i1) {
    const double q1 = -first.theta[i1];
    const Eigen::Vector3d v = Rot(h[0], first.cos[i1], first.sin[i1]) * w16 - p12;
    // |p23 + rot(h3, q3) p34| = |v| (subproblem 3), then rot(h2, q2) (...) = v (subproblem 1).
    const Angles third = Subproblem3(h[2], p34, -p23, v.norm());
    for (int i3 = 0; i3 < third.count; ++i3) {
      RawSolution s;
      s.q[0] = q1;
      s.cos[0] = first.cos[i1];
      s.sin[0] = -first.sin[i1];
      s.q[2] = third.theta[i3];
      s.cos[2] = third.cos[i3];
      s.sin[2] = third.sin[i3];
      const Angle1 second =
          Subproblem1(h[1], p23 + Rot(h[2], third.cos[i3], third.sin[i3]) * p34, v);
      s.q[1] = second.theta;
      s.cos[1] = second.cos;
      s.sin[1] = second.sin;
      s.singular = first.degenerate;
      out.push_back(s);
    }
  }
  return out;
}

std::vector<RawSolution> ShoulderArmParts(const Arm6& arm, const Eigen::Isometry3d& X) {
  const auto& h = arm.h;
  const auto& c = arm.c;
  const Eigen::Matrix3d R06 = R06Of(arm, X);
  // From the shoulder point (axes 1 and 2) to the wrist centre: its length is fixed by q3 alone.
  const Eigen::Vector3d w16 = FirstToLastPoint(arm, X, R06);
  const Eigen::Vector3d p23 = c[2] - c[1], p34 = c[3] - c[2];
  std::vector<RawSolution> out;
  out.reserve(4);  // the most arm parts: two of one joint, two of the next
  const Angles third = Subproblem3(h[2], p34, -p23, w16.norm());
  for (int i3 = 0; i3 < third.count; ++i3) {
    const Eigen::Vector3d u = p23 + Rot(h[2], third.cos[i3], third.sin[i3]) * p34;
    // rot(h1, -q1) w16 = rot(h2, q2) u: subproblem 2 for (q1, q2).
    const AnglePairs shoulder = Subproblem2(h[0], w16, h[1], u);
    for (int i = 0; i < shoulder.count; ++i) {
      RawSolution s;
      s.q[0] = -shoulder.theta1[i];
      s.q[1] = shoulder.theta2[i];
      s.q[2] = third.theta[i3];
      s.cos = {shoulder.cos1[i], shoulder.cos2[i], third.cos[i3]};
      s.sin = {-shoulder.sin1[i], shoulder.sin2[i], third.sin[i3]};
      s.singular = shoulder.degenerate;
      out.push_back(s);
    }
  }
  return out;
}

void AppendWrist(const Arm6& arm, const Eigen::Isometry3d& X, const RawSolution& arm_part,
                 std::vector<RawSolution>& out) {
  AppendWristAt(arm, R06Of(arm, X), arm_part, out);
}

namespace {

std::vector<RawSolution> WithWrists(const Arm6& arm, const Eigen::Isometry3d& X,
                                    const std::vector<RawSolution>& arm_parts) {
  const Eigen::Matrix3d R06 = R06Of(arm, X);
  std::vector<RawSolution> out;
  out.reserve(2 * arm_parts.size());
  for (int p = 0; p < static_cast<int>(arm_parts.size()); ++p) {
    RawSolution part = arm_parts[p];
    part.branch = p;
    AppendWristAt(arm, R06, part, out);
  }
  return out;
}

}  // namespace

std::vector<RawSolution> SolveSphericalWristElbow(const Arm6& arm, const Eigen::Isometry3d& X) {
  return WithWrists(arm, X, ElbowArmParts(arm, X));
}

std::vector<RawSolution> SolveSphericalWristShoulder(const Arm6& arm, const Eigen::Isometry3d& X) {
  return WithWrists(arm, X, ShoulderArmParts(arm, X));
}

}  // namespace ikd::robot::internal
