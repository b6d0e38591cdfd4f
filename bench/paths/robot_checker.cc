// The industrial-arm checker (robot_checker.h): forward kinematics, Jacobian and distances
// written from first principles; no ikd::robot or ikd::ik code.
#include "robot_checker.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <Eigen/Geometry>  // cross
#include <Eigen/SVD>

namespace ikd::bench::paths {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Eigen::Matrix3d Skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d S;
  S << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return S;
}

// Joint velocities (k = 1 .. n-1, row k - 1) and accelerations (k = 1 .. n-2).
Eigen::MatrixXd Velocities(const Eigen::MatrixXd& q, double dt) {
  if (q.rows() < 2) return Eigen::MatrixXd(0, q.cols());
  return (q.bottomRows(q.rows() - 1) - q.topRows(q.rows() - 1)) / dt;
}

}  // namespace

double RobotCheckModel::SpeedWeight(int j) const { return 1.0 / joints[j].max_velocity; }
double RobotCheckModel::AccelerationWeight(int j) const {
  return std::isfinite(joints[j].max_acceleration) ? 1.0 / joints[j].max_acceleration
                                                   : 1.0 / joints[j].max_velocity;
}

Eigen::Matrix3d AxisAngle(const Eigen::Vector3d& axis, double angle) {
  const Eigen::Vector3d u = axis.normalized();
  const Eigen::Matrix3d K = Skew(u);
  return Eigen::Matrix3d::Identity() + std::sin(angle) * K + (1.0 - std::cos(angle)) * K * K;
}

// atan2 of the rotation's sine (half the norm of the antisymmetric part) and cosine: accurate
// at small angles, unlike acos of the trace.
double RotationAngleBetween(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) {
  const Eigen::Matrix3d M = a.transpose() * b;
  const Eigen::Vector3d s(M(2, 1) - M(1, 2), M(0, 2) - M(2, 0), M(1, 0) - M(0, 1));
  return std::atan2(0.5 * s.norm(), 0.5 * (M.trace() - 1.0));
}

RobotKinematics ForwardKinematics(const RobotCheckModel& model, const Eigen::VectorXd& q) {
  RobotKinematics fk;
  RigidTransform X = model.X_WB;
  for (int j = 0; j < model.num_joints(); ++j) {
    const RobotCheckJoint& joint = model.joints[j];
    X = X * joint.X_PJ;
    fk.origins.push_back(X.p);
    fk.axes.push_back(X.R * joint.axis.normalized());
    X = X * RigidTransform{AxisAngle(joint.axis, q[j]), Eigen::Vector3d::Zero()};
    fk.frames.push_back(X);
  }
  fk.tool = X * model.X_FT;
  fk.origins.push_back(fk.tool.p);
  return fk;
}

Eigen::MatrixXd ToolJacobianOf(const RobotCheckModel& model, const Eigen::VectorXd& q) {
  const RobotKinematics fk = ForwardKinematics(model, q);
  Eigen::MatrixXd J(6, model.num_joints());
  for (int j = 0; j < model.num_joints(); ++j) {
    J.col(j).head<3>() = fk.axes[j].cross(fk.tool.p - fk.origins[j]);
    J.col(j).tail<3>() = fk.axes[j];
  }
  return J;
}

double SmallestSingularValue(const RobotCheckModel& model, const Eigen::VectorXd& q) {
  const Eigen::MatrixXd J = ToolJacobianOf(model, q).topRows(model.pose ? 6 : 3);
  const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(J).singularValues();
  return s[s.size() - 1];
}

std::vector<CheckCapsule> LinkCapsulesInWorld(const RobotCheckModel& model,
                                              const RobotKinematics& fk, int k) {
  if (model.shapes.empty()) {
    return {{fk.origins[k], fk.origins[k + 1], model.radii.empty() ? 0.0 : model.radii[k]}};
  }
  std::vector<CheckCapsule> world;
  const RigidTransform& X = fk.frames[k];
  for (const CheckCapsule& c : model.shapes[k]) {
    world.push_back({X.R * c.a + X.p, X.R * c.b + X.p, c.radius});
  }
  return world;
}

namespace {

double CapsulesClearance(const std::vector<CheckCapsule>& a, const std::vector<CheckCapsule>& b) {
  double clearance = kInf;
  for (const CheckCapsule& x : a) {
    for (const CheckCapsule& y : b) {
      clearance =
          std::min(clearance, SegmentSegmentDistance(x.a, x.b, y.a, y.b) - x.radius - y.radius);
    }
  }
  return clearance;
}

}  // namespace

double RobotLinkClearance(const RobotCheckModel& model, const RobotKinematics& fk, int k,
                          const CheckCapsule& obstacle) {
  return CapsulesClearance(LinkCapsulesInWorld(model, fk, k), {obstacle});
}

double RobotSelfClearance(const RobotCheckModel& model, const RobotKinematics& fk) {
  double clearance = kInf;
  for (const auto& [a, b] : model.self_pairs) {
    clearance = std::min(clearance, CapsulesClearance(LinkCapsulesInWorld(model, fk, a),
                                                      LinkCapsulesInWorld(model, fk, b)));
  }
  return clearance;
}

double RobotMinClearance(const RobotCheckModel& model, const RobotKinematics& fk) {
  double clearance = RobotSelfClearance(model, fk);
  for (const CheckCapsule& o : model.obstacles) {
    for (int k = 0; k < model.num_joints(); ++k) {
      clearance = std::min(clearance, RobotLinkClearance(model, fk, k, o));
    }
  }
  return clearance;
}

std::vector<std::pair<int, int>> SelfPairs(const RobotCheckModel& model, int samples) {
  const int n = model.num_joints();
  std::vector<std::pair<int, int>> candidates;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 2; b < n; ++b) candidates.push_back({a, b});
  }
  std::vector<bool> parted(candidates.size(), false);
  std::mt19937_64 rng(11);
  for (int s = 0; s < samples; ++s) {
    Eigen::VectorXd q(n);
    for (int j = 0; j < n; ++j) {
      q[j] =
          std::uniform_real_distribution<double>(model.joints[j].lower, model.joints[j].upper)(rng);
    }
    const RobotKinematics fk = ForwardKinematics(model, q);
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (parted[i]) continue;
      const auto [a, b] = candidates[i];
      parted[i] = CapsulesClearance(LinkCapsulesInWorld(model, fk, a),
                                    LinkCapsulesInWorld(model, fk, b)) >= 0.0;
    }
  }
  std::vector<std::pair<int, int>> pairs;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (parted[i]) pairs.push_back(candidates[i]);
  }
  return pairs;
}

RateMaxima WeightedRates(const RobotCheckModel& model, const Eigen::MatrixXd& q, double dt) {
  const Eigen::MatrixXd v = Velocities(q, dt), a = Velocities(v, dt);
  RateMaxima m;
  for (int j = 0; j < model.num_joints(); ++j) {
    if (v.rows() > 0) m.speed = std::max(m.speed, v.col(j).cwiseAbs().maxCoeff() * model.SpeedWeight(j));
    if (a.rows() > 0) {
      m.acceleration = std::max(m.acceleration, a.col(j).cwiseAbs().maxCoeff() * model.AccelerationWeight(j));
    }
  }
  return m;
}

RobotPathMeasures CheckRobotPath(const RobotCheckModel& model, const Eigen::MatrixXd& q,
                                 const std::vector<ToolRequest>& request, double dt) {
  RobotPathMeasures m;
  std::vector<bool> ok(q.rows(), false), clear(q.rows(), false);
  for (int k = 0; k < q.rows(); ++k) {
    const Eigen::VectorXd qk = q.row(k).transpose();
    const RobotKinematics fk = ForwardKinematics(model, qk);
    const double position_error = (fk.tool.p - request[k].position).norm();
    const double rotation_error =
        model.pose ? RotationAngleBetween(fk.tool.R, request[k].rotation) : 0.0;
    m.max_position_error = std::max(m.max_position_error, position_error);
    m.max_rotation_error = std::max(m.max_rotation_error, rotation_error);
    if (const double sigma = SmallestSingularValue(model, qk); sigma < m.min_sigma) {
      m.min_sigma = sigma;
      m.min_sigma_sample = k;
    }
    const double clearance = RobotMinClearance(model, fk);
    m.min_clearance = std::min(m.min_clearance, clearance);
    m.collided = m.collided || clearance < 0.0;
    clear[k] = clearance >= 0.0;
    if (clearance < model.safety_margin) ++m.margin_samples;
    double excess = 0.0;
    for (int j = 0; j < model.num_joints(); ++j) {
      excess = std::max({excess, model.joints[j].lower - qk[j], qk[j] - model.joints[j].upper});
    }
    m.max_position_excess = std::max(m.max_position_excess, excess);
    if (excess > kRobotSlack) ++m.position_violations;
    // The solver's success test (1e-5 m, 1e-5 rad, within the limits), up to rounding.
    const double slack = 1e-12;
    if (position_error <= kRobotTolerance + slack && rotation_error <= kRobotTolerance + slack &&
        excess <= 0.0) {
      ++m.reached;
      ok[k] = true;
    }
  }
  // Rows of `rates` (row k: into or at sample k + 1) with a joint over its limit: counted, and
  // their samples not confirmed.
  auto count_over = [&](const Eigen::MatrixXd& rates, double RobotCheckJoint::*limit) {
    int count = 0;
    for (int k = 0; k < rates.rows(); ++k) {
      bool over = false;
      for (int j = 0; j < model.num_joints(); ++j) {
        over = over || std::abs(rates(k, j)) > model.joints[j].*limit * (1.0 + kRateSlack);
      }
      count += over;
      if (over) ok[k + 1] = false;
    }
    return count;
  };
  const MotionMeasures motions = MeasureMotions(q, clear, [&](const Eigen::VectorXd& between) {
    return RobotMinClearance(model, ForwardKinematics(model, between));
  });
  m.motion_collisions = motions.collisions;
  m.min_motion_clearance = motions.min_clearance;
  m.collided = m.collided || motions.touched;
  const Eigen::MatrixXd v = Velocities(q, dt), a = Velocities(v, dt);
  m.velocity_violations += count_over(v, &RobotCheckJoint::max_velocity);
  m.acceleration_violations += count_over(a, &RobotCheckJoint::max_acceleration);
  m.confirmed = static_cast<int>(std::count(ok.begin(), ok.end(), true));
  m.rates = WeightedRates(model, q, dt);
  if (v.rows() > 0) m.raw.speed = v.cwiseAbs().maxCoeff();
  if (a.rows() > 0) m.raw.acceleration = a.cwiseAbs().maxCoeff();
  return m;
}

}  // namespace ikd::bench::paths
