#include "ikd/ik/arm.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "ikd/world.h"

namespace ikd::ik {

using constraints::ConstraintModel;
using constraints::DistanceConstraint;

namespace {

constexpr int kMaxLimbs = 10000;
constexpr double kPi = std::numbers::pi;

absl::Status FieldError(const std::string& field, const std::string& bound, double got) {
  return absl::InvalidArgumentError(absl::StrCat(field, " must be ", bound, ", got ", got));
}

absl::Status ValidateLimbs(const ArmSpec& spec) {
  const size_t n = spec.limbs.size();
  if (n == 0 || n > kMaxLimbs) {
    return absl::InvalidArgumentError(
        absl::StrCat("limbs: need between 1 and ", kMaxLimbs, " limbs, got ", n));
  }
  for (size_t k = 0; k < n; ++k) {
    const Limb& limb = spec.limbs[k];
    const std::string field = absl::StrCat("limbs[", k, "]");
    if (absl::Status st = CheckWorldLength(limb.length, field + ".length", false); !st.ok()) {
      return st;
    }
    if (absl::Status st = CheckWorldLength(limb.radius, field + ".radius", true); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateLimits(const ArmSpec& spec) {
  const size_t joints = spec.limbs.size() - 1;
  if (!spec.joint_limits.empty() && spec.joint_limits.size() != joints) {
    return absl::InvalidArgumentError(absl::StrCat(
        "joint_limits: need 0 or ", joints, " entries (one per interior joint), got ",
        spec.joint_limits.size()));
  }
  const double lo = spec.planar ? -kPi : 0.0;
  for (size_t k = 0; k < spec.joint_limits.size(); ++k) {
    if (!spec.joint_limits[k]) continue;
    const JointLimit& l = *spec.joint_limits[k];
    const std::string field = absl::StrCat("joint_limits[", k, "]");
    if (!std::isfinite(l.min) || l.min < lo || l.min > kPi) {
      return FieldError(field + ".min", absl::StrCat("in [", lo, ", pi]"), l.min);
    }
    if (!std::isfinite(l.max) || l.max < lo || l.max > kPi) {
      return FieldError(field + ".max", absl::StrCat("in [", lo, ", pi]"), l.max);
    }
    if (l.min > l.max) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": min ", l.min, " must be <= max ", l.max));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRateLimit(const JointRateLimit& limit, const std::string& field) {
  if (std::isnan(limit.max_velocity) || limit.max_velocity <= 0.0) {
    return FieldError(field + ".max_velocity", "> 0 (+inf: unlimited)", limit.max_velocity);
  }
  if (std::isnan(limit.max_acceleration) || limit.max_acceleration <= 0.0) {
    return FieldError(field + ".max_acceleration", "> 0 (+inf: unlimited)",
                      limit.max_acceleration);
  }
  if (std::isnan(limit.max_jerk) || limit.max_jerk <= 0.0) {
    return FieldError(field + ".max_jerk", "> 0 (+inf: unlimited)", limit.max_jerk);
  }
  return absl::OkStatus();
}

absl::Status ValidateRateLimits(const ArmSpec& spec) {
  if (absl::Status s = ValidateRateLimit(spec.default_rate_limit, "default_rate_limit"); !s.ok()) {
    return s;
  }
  if (!spec.rate_limits.empty() && spec.rate_limits.size() != spec.limbs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rate_limits: need 0 or ", spec.limbs.size(),
                     " entries (one per joint), got ", spec.rate_limits.size()));
  }
  for (size_t k = 0; k < spec.rate_limits.size(); ++k) {
    if (!spec.rate_limits[k]) continue;
    absl::Status s = ValidateRateLimit(*spec.rate_limits[k], absl::StrCat("rate_limits[", k, "]"));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ValidateRest(const ArmSpec& spec) {
  if (absl::Status st = CheckInWorld(spec.base_position, "base_position"); !st.ok()) return st;
  const double qn = spec.base_orientation.coeffs().norm();
  if (!std::isfinite(qn) || qn < 1e-9) {
    return absl::InvalidArgumentError("base_orientation must be a finite, non-zero quaternion");
  }
  const size_t sites = spec.limbs.size() + 1;
  if (!spec.site_weights.empty() && spec.site_weights.size() != sites) {
    return absl::InvalidArgumentError(absl::StrCat(
        "site_weights: need 0 or ", sites, " entries, got ", spec.site_weights.size()));
  }
  for (size_t k = 0; k < spec.site_weights.size(); ++k) {
    const double w = spec.site_weights[k];
    if (!std::isfinite(w) || w <= 0.0) {
      return FieldError(absl::StrCat("site_weights[", k, "]"), "finite and > 0", w);
    }
  }
  const size_t angles = spec.planar ? spec.limbs.size() : 2 * spec.limbs.size();
  if (!spec.home_angles.empty() && spec.home_angles.size() != angles) {
    return absl::InvalidArgumentError(absl::StrCat(
        "home_angles: need 0 or ", angles, " entries, got ", spec.home_angles.size()));
  }
  for (size_t k = 0; k < spec.home_angles.size(); ++k) {
    if (!std::isfinite(spec.home_angles[k])) {
      return FieldError(absl::StrCat("home_angles[", k, "]"), "finite", spec.home_angles[k]);
    }
  }
  return absl::OkStatus();
}

// Signed angle from a to b about +z (both in the x-y plane).
double PlanarAngle(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  return std::atan2(a.x() * b.y() - a.y() * b.x(), a.x() * b.x() + a.y() * b.y());
}

// Minimal-rotation axis of the transport for a given azimuth in frame (t, n): see arm.h.
Eigen::Vector3d TransportAxis(const Eigen::Vector3d& t, const Eigen::Vector3d& n, double azimuth) {
  return std::cos(azimuth) * t.cross(n) - std::sin(azimuth) * n;
}

}  // namespace

absl::StatusOr<Arm> Arm::Create(ArmSpec spec) {
  for (auto check : {ValidateLimbs, ValidateLimits, ValidateRateLimits, ValidateRest}) {
    if (absl::Status s = check(spec); !s.ok()) return s;
  }
  spec.base_orientation.normalize();
  const int n = static_cast<int>(spec.limbs.size());
  Eigen::VectorXd inverse_masses(n + 1);
  for (int k = 0; k <= n; ++k) {
    inverse_masses[k] = spec.site_weights.empty() ? 1.0 : 1.0 / spec.site_weights[k];
  }
  inverse_masses[0] = inverse_masses[n] = 0.0;
  std::vector<DistanceConstraint> constraints;
  for (int k = 0; k < n; ++k) constraints.push_back({k, k + 1, spec.limbs[k].length});
  auto model = ConstraintModel::Create(inverse_masses, constraints);
  if (!model.ok()) return model.status();
  return Arm(std::move(spec), *std::move(model));
}

Arm::Arm(ArmSpec spec, ConstraintModel chain_model)
    : spec_(std::move(spec)),
      chain_model_(std::move(chain_model)),
      R_WB_(spec_.base_orientation.toRotationMatrix()) {
  double longest = 0.0;
  shortest_limb_ = spec_.limbs[0].length;
  for (const Limb& l : spec_.limbs) {
    max_reach_ += l.length;
    longest = std::max(longest, l.length);
    shortest_limb_ = std::min(shortest_limb_, l.length);
  }
  min_reach_ = num_limbs() == 1 ? max_reach_ : std::max(0.0, 2.0 * longest - max_reach_);
}

const JointRateLimit& Arm::RateLimit(int joint) const {
  if (spec_.rate_limits.empty() || !spec_.rate_limits[joint]) return spec_.default_rate_limit;
  return *spec_.rate_limits[joint];
}

bool Arm::HasRateLimits() const {
  for (int k = 0; k < num_limbs(); ++k) {
    const JointRateLimit& l = RateLimit(k);
    if (std::isfinite(l.max_velocity) || std::isfinite(l.max_acceleration) ||
        std::isfinite(l.max_jerk)) {
      return true;
    }
  }
  return false;
}

Eigen::Vector3d Arm::ToArmFrame(const Eigen::Vector3d& p_W) const {
  return spec_.base_orientation.conjugate() * (p_W - spec_.base_position);
}

Eigen::Vector3d Arm::ToWorld(const Eigen::Vector3d& p_B) const {
  return spec_.base_position + spec_.base_orientation * p_B;
}

absl::StatusOr<Eigen::Matrix3Xd> Arm::SitesFromAngles(const std::vector<double>& angles) const {
  if (static_cast<int>(angles.size()) != num_angles()) {
    return absl::InvalidArgumentError(absl::StrCat("angles: need ", num_angles(),
                                                   " values, got ", angles.size()));
  }
  for (size_t k = 0; k < angles.size(); ++k) {
    if (!std::isfinite(angles[k])) return FieldError(absl::StrCat("angles[", k, "]"), "finite", angles[k]);
  }
  Eigen::Matrix3Xd p_B(3, num_sites());
  p_B.col(0).setZero();
  if (planar()) {
    double heading = 0.0;
    for (int k = 0; k < num_limbs(); ++k) {
      heading += angles[k];
      p_B.col(k + 1) = p_B.col(k) + spec_.limbs[k].length *
                                        Eigen::Vector3d(std::cos(heading), std::sin(heading), 0.0);
    }
  } else {
    Eigen::Vector3d t = Eigen::Vector3d::UnitZ(), n = Eigen::Vector3d::UnitX();
    for (int k = 0; k < num_limbs(); ++k) {
      const double bend = angles[2 * k], azimuth = angles[2 * k + 1];
      const Eigen::Vector3d b = t.cross(n);
      const Eigen::Vector3d dir =
          std::cos(bend) * t + std::sin(bend) * (std::cos(azimuth) * n + std::sin(azimuth) * b);
      p_B.col(k + 1) = p_B.col(k) + spec_.limbs[k].length * dir;
      const Eigen::AngleAxisd transport(bend, TransportAxis(t, n, azimuth));
      n = (transport * n).normalized();
      t = dir.normalized();
    }
  }
  Eigen::Matrix3Xd p_W(3, num_sites());
  for (int k = 0; k < num_sites(); ++k) p_W.col(k) = ToWorld(p_B.col(k));
  return p_W;
}

std::vector<double> Arm::AnglesFromSites(const Eigen::Matrix3Xd& sites) const {
  std::vector<double> angles;
  angles.reserve(num_angles());
  const Eigen::Matrix3d R_BW = R_WB().transpose();
  if (planar()) {
    Eigen::Vector3d previous = Eigen::Vector3d::UnitX();
    for (int k = 0; k < num_limbs(); ++k) {
      const Eigen::Vector3d dir = R_BW * (sites.col(k + 1) - sites.col(k));
      angles.push_back(PlanarAngle(previous, dir));
      previous = dir;
    }
    return angles;
  }
  Eigen::Vector3d t = Eigen::Vector3d::UnitZ(), n = Eigen::Vector3d::UnitX();
  for (int k = 0; k < num_limbs(); ++k) {
    const Eigen::Vector3d dir = (R_BW * (sites.col(k + 1) - sites.col(k))).normalized();
    const Eigen::Vector3d b = t.cross(n);
    const Eigen::Vector3d normal_part = dir - t.dot(dir) * t;
    const double bend = std::atan2(normal_part.norm(), t.dot(dir));
    // The azimuth of a straight joint is undefined; 0 keeps forward kinematics consistent.
    const double azimuth =
        normal_part.norm() > 1e-300 ? std::atan2(normal_part.dot(b), normal_part.dot(n)) : 0.0;
    angles.push_back(bend);
    angles.push_back(azimuth);
    const Eigen::AngleAxisd transport(bend, TransportAxis(t, n, azimuth));
    n = (transport * n).normalized();
    t = dir;
  }
  return angles;
}

Eigen::Matrix3Xd Arm::HomeSites() const {
  if (!spec_.home_angles.empty()) return *SitesFromAngles(spec_.home_angles);
  // A gentle arc bending 1.5 rad in all: a straight arm is singular, and a zig-zag brings
  // every other limb close to its neighbour's neighbour.
  std::vector<double> angles(num_angles(), 0.0);
  const double bend = std::min(0.3, 1.5 / num_limbs());
  if (planar()) {
    for (int k = 1; k < num_limbs(); ++k) angles[k] = bend;
  } else {
    angles[0] = kPi / 2;
    for (int k = 1; k < num_limbs(); ++k) angles[2 * k] = bend, angles[2 * k + 1] = kPi / 2;
  }
  return *SitesFromAngles(angles);
}

double Arm::JointAngle(const Eigen::Matrix3Xd& sites, int k) const {
  const Eigen::Vector3d a = sites.col(k) - sites.col(k - 1);
  const Eigen::Vector3d b = sites.col(k + 1) - sites.col(k);
  if (planar()) {
    const Eigen::Matrix3d R_BW = R_WB().transpose();
    return PlanarAngle(R_BW * a, R_BW * b);
  }
  return std::atan2(a.cross(b).norm(), a.dot(b));
}

double Arm::LimitViolation(const Eigen::Matrix3Xd& sites) const {
  double violation = 0.0;
  for (size_t j = 0; j < spec_.joint_limits.size(); ++j) {
    if (!spec_.joint_limits[j]) continue;
    const double angle = JointAngle(sites, static_cast<int>(j) + 1);
    violation += std::max(0.0, spec_.joint_limits[j]->min - angle) +
                 std::max(0.0, angle - spec_.joint_limits[j]->max);
  }
  return violation;
}

double Arm::SpanAtBend(int k, double angle) const {
  const double a = spec_.limbs[k - 1].length, b = spec_.limbs[k].length;
  return std::sqrt(std::max(0.0, a * a + b * b + 2.0 * a * b * std::cos(angle)));
}

}  // namespace ikd::ik
