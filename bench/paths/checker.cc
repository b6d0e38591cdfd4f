// The independent checker (checker.h). Written from arm.h's description of the angle convention
// and from first principles for the distances; it shares no code with the solver.
#include "checker.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include <Eigen/Geometry>  // cross

namespace ikd::bench::paths {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();

// x in (-pi, pi].
double Wrap(double x) {
  const double r = std::remainder(x, 2 * kPi);
  return r == -kPi ? kPi : r;
}

// The minimal rotation taking unit t to unit d (about t x d), applied to v: the composition of
// the reflections across the planes normal to t + d and to d. Undefined for d = -t (the caller
// handles that case).
Eigen::Vector3d MinimalRotation(const Eigen::Vector3d& t, const Eigen::Vector3d& d,
                                const Eigen::Vector3d& v) {
  const Eigen::Vector3d s = t + d;
  return v - (s.dot(v) / (1.0 + t.dot(d))) * s + 2.0 * t.dot(v) * d;
}

// Bend and azimuth per limb in the frame (t, n) carried along the chain by minimal rotations.
std::vector<double> SpatialAngles(const Eigen::Matrix3Xd& sites) {
  std::vector<double> angles;
  Eigen::Vector3d t = Eigen::Vector3d::UnitZ(), n = Eigen::Vector3d::UnitX();
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    const Eigen::Vector3d d = (sites.col(k + 1) - sites.col(k)).normalized();
    const Eigen::Vector3d b = t.cross(n);
    const double along = t.dot(d);
    const Eigen::Vector3d across = d - along * t;
    const double bend = std::atan2(across.norm(), along);
    const double azimuth = across.norm() > 0.0 ? std::atan2(across.dot(b), across.dot(n)) : 0.0;
    angles.push_back(bend);
    angles.push_back(azimuth);
    if (1.0 + along > 1e-9) {
      n = MinimalRotation(t, d, n);
    } else {  // folded straight back: a half turn about the axis the azimuth names
      const Eigen::Vector3d axis = std::cos(azimuth) * b - std::sin(azimuth) * n;
      n = 2.0 * axis.dot(n) * axis - n;
    }
    n = (n - n.dot(d) * d).normalized();  // keep the frame orthonormal against rounding
    t = d;
  }
  return angles;
}

// The interior joint angle k (1 <= k < limbs) that the position limits bound.
double LimitedAngle(const CheckModel& model, const std::vector<double>& angles, int k) {
  return model.planar ? angles[k] : angles[2 * k];
}

struct SampleGeometry {
  double hand_error = 0.0, limb_error = 0.0, off_plane = 0.0;
};

SampleGeometry MeasureGeometry(const CheckModel& model, const Eigen::Matrix3Xd& sites,
                               const Eigen::Vector3d& hand) {
  SampleGeometry g;
  g.hand_error = std::max((sites.col(sites.cols() - 1) - hand).norm(), sites.col(0).norm());
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    const double length = (sites.col(k + 1) - sites.col(k)).norm();
    g.limb_error = std::max(g.limb_error, std::abs(length - model.lengths[k]) / model.lengths[k]);
  }
  if (model.planar) g.off_plane = sites.row(2).cwiseAbs().maxCoeff();
  return g;
}

void CheckRates(const CheckModel& model, const Eigen::MatrixXd& q, double dt, PathMeasures& m) {
  const RateMaxima maxima = MaxRates(q, dt);
  m.max_speed = maxima.speed;
  m.max_acceleration = maxima.acceleration;
  m.max_jerk = maxima.jerk;
  if (!model.planar) {
    const Eigen::MatrixXd bends = q(Eigen::all, Eigen::seq(0, q.cols() - 1, 2));
    const RateMaxima bend_maxima = MaxRates(bends, dt);
    m.max_bend_speed = bend_maxima.speed;
    m.max_bend_acceleration = bend_maxima.acceleration;
    m.min_bend = bends.minCoeff();
  }
  const double v_limit = model.max_velocity * (1.0 + kRateSlack);
  const double a_limit = model.max_acceleration * (1.0 + kRateSlack);
  for (int k = 1; k < q.rows(); ++k) {
    const Eigen::VectorXd v = (q.row(k) - q.row(k - 1)).transpose() / dt;
    if (v.cwiseAbs().maxCoeff() > v_limit) ++m.velocity_violations;
    if (k + 1 < q.rows()) {
      const Eigen::VectorXd next = (q.row(k + 1) - q.row(k)).transpose() / dt;
      if (((next - v) / dt).cwiseAbs().maxCoeff() > a_limit) ++m.acceleration_violations;
    }
    if (k >= 2 && k + 1 < q.rows()) {  // (a_k - a_{k-1}) / dt, a third difference over dt^3
      const Eigen::VectorXd third =
          (q.row(k + 1) - 3 * q.row(k) + 3 * q.row(k - 1) - q.row(k - 2)).transpose() /
          (dt * dt * dt);
      if (third.cwiseAbs().maxCoeff() > model.max_jerk * (1.0 + kRateSlack)) ++m.jerk_violations;
    }
  }
}

}  // namespace

std::vector<double> PlanarAngles(const Eigen::Matrix3Xd& sites) {
  std::vector<double> angles;
  double previous = 0.0;  // direction of the arm-frame x axis
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    const Eigen::Vector3d d = sites.col(k + 1) - sites.col(k);
    const double direction = std::atan2(d.y(), d.x());
    angles.push_back(Wrap(direction - previous));
    previous = direction;
  }
  return angles;
}

double PointSegmentDistance(const Eigen::Vector3d& x, const Eigen::Vector3d& a,
                            const Eigen::Vector3d& b) {
  const Eigen::Vector3d ab = b - a;
  const double length2 = ab.squaredNorm();
  if (length2 == 0.0) return (x - a).norm();
  const double u = std::clamp((x - a).dot(ab) / length2, 0.0, 1.0);
  return (x - a - u * ab).norm();
}

// |r + s d1 - t d2|^2 over the unit square is convex: its minimum is the interior stationary
// point when that lies in the square, else on an edge, where it is a point-segment distance.
double SegmentSegmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                              const Eigen::Vector3d& q0, const Eigen::Vector3d& q1) {
  const Eigen::Vector3d d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.dot(d1), b = d1.dot(d2), e = d2.dot(d2), c = d1.dot(r), f = d2.dot(r);
  const double denominator = a * e - b * b;
  if (denominator > 1e-12 * a * e) {  // not parallel
    const double s = (b * f - c * e) / denominator, t = (a * f - b * c) / denominator;
    if (s >= 0.0 && s <= 1.0 && t >= 0.0 && t <= 1.0) return (r + s * d1 - t * d2).norm();
  }
  return std::min({PointSegmentDistance(p0, q0, q1), PointSegmentDistance(p1, q0, q1),
                   PointSegmentDistance(q0, p0, p1), PointSegmentDistance(q1, p0, p1)});
}

double LimbObstacleClearance(const CheckModel& model, const Eigen::Matrix3Xd& sites, int k,
                             const CheckCapsule& obstacle) {
  return SegmentSegmentDistance(sites.col(k), sites.col(k + 1), obstacle.a, obstacle.b) -
         model.radii[k] - obstacle.radius;
}

double MinObstacleClearance(const CheckModel& model, const Eigen::Matrix3Xd& sites) {
  double clearance = kInf;
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    for (const CheckCapsule& o : model.obstacles) {
      clearance = std::min(clearance, LimbObstacleClearance(model, sites, k, o));
    }
  }
  return clearance;
}

// Non-adjacent limbs only: adjacent ones share a joint.
double MinSelfClearance(const CheckModel& model, const Eigen::Matrix3Xd& sites) {
  double clearance = kInf;
  const int limbs = static_cast<int>(sites.cols()) - 1;
  for (int i = 0; i < limbs; ++i) {
    for (int j = i + 2; j < limbs; ++j) {
      const double d = SegmentSegmentDistance(sites.col(i), sites.col(i + 1), sites.col(j),
                                              sites.col(j + 1));
      clearance = std::min(clearance, d - model.radii[i] - model.radii[j]);
    }
  }
  return clearance;
}

std::vector<double> JointAngles(const CheckModel& model, const Eigen::Matrix3Xd& sites) {
  return model.planar ? PlanarAngles(sites) : SpatialAngles(sites);
}

Eigen::MatrixXd Unwrap(const std::vector<std::vector<double>>& angles) {
  const int rows = static_cast<int>(angles.size());
  const int cols = rows == 0 ? 0 : static_cast<int>(angles[0].size());
  Eigen::MatrixXd q(rows, cols);
  for (int k = 0; k < rows; ++k) {
    for (int j = 0; j < cols; ++j) {
      q(k, j) = k == 0 ? angles[k][j] : q(k - 1, j) + std::remainder(angles[k][j] - q(k - 1, j), 2 * kPi);
    }
  }
  return q;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * v.size()));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

RateMaxima MaxRates(const Eigen::MatrixXd& q, double dt) {
  RateMaxima m;
  for (int k = 1; k < q.rows(); ++k) {
    const Eigen::VectorXd v = (q.row(k) - q.row(k - 1)).transpose() / dt;
    m.speed = std::max(m.speed, v.cwiseAbs().maxCoeff());
    if (k + 1 < q.rows()) {
      const Eigen::VectorXd next = (q.row(k + 1) - q.row(k)).transpose() / dt;
      m.acceleration = std::max(m.acceleration, ((next - v) / dt).cwiseAbs().maxCoeff());
    }
    if (k >= 2 && k + 1 < q.rows()) {
      const Eigen::VectorXd third =
          (q.row(k + 1) - 3 * q.row(k) + 3 * q.row(k - 1) - q.row(k - 2)).transpose();
      m.jerk = std::max(m.jerk, third.cwiseAbs().maxCoeff() / (dt * dt * dt));
    }
  }
  return m;
}

Eigen::Matrix3Xd SitesOfAngles(const CheckModel& model, const Eigen::VectorXd& q) {
  const int limbs = static_cast<int>(model.lengths.size());
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, limbs + 1);
  double heading = 0.0;
  Eigen::Vector3d t = Eigen::Vector3d::UnitZ(), n = Eigen::Vector3d::UnitX();
  for (int k = 0; k < limbs; ++k) {
    Eigen::Vector3d dir;
    if (model.planar) {
      heading += q[k];
      dir = Eigen::Vector3d(std::cos(heading), std::sin(heading), 0.0);
    } else {
      const double bend = q[2 * k], azimuth = q[2 * k + 1];
      const Eigen::Vector3d b = t.cross(n);
      dir = std::cos(bend) * t + std::sin(bend) * (std::cos(azimuth) * n + std::sin(azimuth) * b);
      // The frame turns with the limb: n rotated by the bend about cos(az) b - sin(az) n.
      const Eigen::Vector3d axis = std::cos(azimuth) * b - std::sin(azimuth) * n;
      n = std::cos(bend) * n + std::sin(bend) * axis.cross(n) +
          (1.0 - std::cos(bend)) * axis.dot(n) * axis;
      t = dir;
    }
    sites.col(k + 1) = sites.col(k) + model.lengths[k] * dir;
  }
  return sites;
}

int MotionSubsteps(double largest_joint_move) {
  const double steps = std::ceil(largest_joint_move / kMotionJointStep);
  return static_cast<int>(std::clamp(steps, double(kMotionSubsteps), double(kMaxMotionSubsteps)));
}

MotionMeasures MeasureMotions(const Eigen::MatrixXd& q, const std::vector<bool>& clear,
                              const std::function<double(const Eigen::VectorXd&)>& clearance) {
  MotionMeasures m;
  for (int s = 1; s < q.rows(); ++s) {
    bool touched = false;
    const int substeps = MotionSubsteps((q.row(s) - q.row(s - 1)).cwiseAbs().maxCoeff());
    for (int i = 1; i < substeps; ++i) {
      const double f = static_cast<double>(i) / substeps;
      const double c = clearance(((1.0 - f) * q.row(s - 1) + f * q.row(s)).transpose());
      m.min_clearance = std::min(m.min_clearance, c);
      touched = touched || c < 0.0;
    }
    if (touched && clear[s - 1] && clear[s]) ++m.collisions;
    m.touched = m.touched || touched;
  }
  return m;
}

double MaxLimbTurnSpeed(const std::vector<Eigen::Matrix3Xd>& sites, double dt) {
  double largest = 0.0;
  for (size_t s = 1; s < sites.size(); ++s) {
    for (Eigen::Index k = 0; k + 1 < sites[s].cols(); ++k) {
      const Eigen::Vector3d before = sites[s - 1].col(k + 1) - sites[s - 1].col(k);
      const Eigen::Vector3d after = sites[s].col(k + 1) - sites[s].col(k);
      const double turn = std::atan2(before.cross(after).norm(), before.dot(after));
      largest = std::max(largest, turn / dt);
    }
  }
  return largest;
}

PathMeasures CheckPath(const CheckModel& model, const std::vector<Eigen::Matrix3Xd>& sites,
                       const std::vector<Eigen::Vector3d>& hand, double dt) {
  PathMeasures m;
  m.min_obstacle_clearance = m.min_self_clearance = m.min_motion_clearance = kInf;
  std::vector<std::vector<double>> angles;
  std::vector<bool> clear;
  for (size_t s = 0; s < sites.size(); ++s) {
    const SampleGeometry g = MeasureGeometry(model, sites[s], hand[s]);
    m.max_hand_error = std::max(m.max_hand_error, g.hand_error);
    m.max_limb_error = std::max(m.max_limb_error, g.limb_error);
    m.max_off_plane = std::max(m.max_off_plane, g.off_plane);
    const double obstacle = MinObstacleClearance(model, sites[s]);
    const double self = MinSelfClearance(model, sites[s]);
    m.min_obstacle_clearance = std::min(m.min_obstacle_clearance, obstacle);
    m.min_self_clearance = std::min(m.min_self_clearance, self);
    m.collided = m.collided || std::min(obstacle, self) < 0.0;
    clear.push_back(std::min(obstacle, self) >= 0.0);
    if (std::min(obstacle, self) < model.safety_margin) ++m.margin_samples;
    angles.push_back(JointAngles(model, sites[s]));
    double excess = 0.0;
    for (size_t k = 1; k < model.lengths.size(); ++k) {
      const double q = LimitedAngle(model, angles.back(), static_cast<int>(k));
      excess = std::max({excess, model.limit_min[k - 1] - q, q - model.limit_max[k - 1]});
    }
    m.max_position_excess = std::max(m.max_position_excess, excess);
    if (excess > kPositionSlack) ++m.position_violations;
  }
  const Eigen::MatrixXd q = Unwrap(angles);
  CheckRates(model, q, dt, m);
  const MotionMeasures motions = MeasureMotions(q, clear, [&](const Eigen::VectorXd& between) {
    const Eigen::Matrix3Xd sites = SitesOfAngles(model, between);
    return std::min(MinObstacleClearance(model, sites), MinSelfClearance(model, sites));
  });
  m.motion_collisions = motions.collisions;
  m.min_motion_clearance = motions.min_clearance;
  m.collided = m.collided || motions.touched;
  m.max_limb_turn_speed = MaxLimbTurnSpeed(sites, dt);
  return m;
}

}  // namespace ikd::bench::paths
