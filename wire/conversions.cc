#include "conversions.h"

#include <cmath>
#include <variant>

#include "absl/strings/str_cat.h"
#include "errors.h"

namespace ikd::server {

void FiniteCheck::Number(double x, const char* name, int index) {
  if (std::isfinite(x) || !first_.empty()) return;
  first_ = index < 0 ? absl::StrCat(name, " = ", x) : absl::StrCat(name, "[", index, "] = ", x);
}

void FiniteCheck::Vector(const v1::Vector3& v, const char* name, int index) {
  if ((std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z())) || !first_.empty()) {
    return;
  }
  const std::string field = index < 0 ? std::string(name) : absl::StrCat(name, "[", index, "]");
  first_ = absl::StrCat(field, " = (", v.x(), ", ", v.y(), ", ", v.z(), ")");
}

absl::Status FiniteCheck::Result(const std::string& what) const {
  if (first_.empty()) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(what, " is beyond the range of doubles (", first_,
                                            "); no non-finite value is sent"));
}

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

Eigen::Vector3d FromProto(const v1::Vector3& v) { return {v.x(), v.y(), v.z()}; }

v1::Vector3 ToProto(const Eigen::Vector3d& v) {
  v1::Vector3 out;
  out.set_x(v.x());
  out.set_y(v.y());
  out.set_z(v.z());
  return out;
}

Eigen::Quaterniond FromProto(const v1::Quaternion& q) {
  if (q.x() == 0.0 && q.y() == 0.0 && q.z() == 0.0 && q.w() == 0.0) {
    return Eigen::Quaterniond::Identity();  // proto3 default: absent means identity
  }
  return Eigen::Quaterniond(q.w(), q.x(), q.y(), q.z());
}

v1::Quaternion ToProto(const Eigen::Quaterniond& q) {
  v1::Quaternion out;
  out.set_x(q.x());
  out.set_y(q.y());
  out.set_z(q.z());
  out.set_w(q.w());
  return out;
}

namespace {

// A wire 0 is "not given": the default's 0 means unlimited, a joint's 0 the default's value.
double RateFromProto(double value, double fallback) { return value > 0.0 ? value : fallback; }
double RateToProto(double value) { return std::isfinite(value) ? value : 0.0; }

ik::JointRateLimit RateLimitFromProto(const v1::JointRateLimit& limit,
                                      const ik::JointRateLimit& fallback) {
  return {RateFromProto(limit.max_velocity(), fallback.max_velocity),
          RateFromProto(limit.max_acceleration(), fallback.max_acceleration),
          RateFromProto(limit.max_jerk(), fallback.max_jerk)};
}

void RateLimitToProto(const ik::JointRateLimit& limit, v1::JointRateLimit* out) {
  out->set_max_velocity(RateToProto(limit.max_velocity));
  out->set_max_acceleration(RateToProto(limit.max_acceleration));
  out->set_max_jerk(RateToProto(limit.max_jerk));
}

}  // namespace

// On the wire 0 means "not given" (types.proto), so the bound is >= 0 there.
absl::Status CheckRateLimit(const v1::JointRateLimit& limit, const std::string& field) {
  for (const auto& [name, value] : {std::pair{".max_velocity", limit.max_velocity()},
                                    std::pair{".max_acceleration", limit.max_acceleration()},
                                    std::pair{".max_jerk", limit.max_jerk()}}) {
    if (!std::isfinite(value) || value < 0.0) {
      return FieldViolation(field + name,
                            absl::StrCat("must be finite and >= 0 (0: not given), got ", value));
    }
  }
  return absl::OkStatus();
}

ik::ArmSpec FromProto(const v1::ArmSpec& spec) {
  ik::ArmSpec out;
  out.default_rate_limit = RateLimitFromProto(spec.default_rate_limit(), ik::JointRateLimit{});
  for (const v1::JointRateLimit& limit : spec.rate_limits()) {
    const bool given =
        limit.max_velocity() != 0.0 || limit.max_acceleration() != 0.0 || limit.max_jerk() != 0.0;
    out.rate_limits.push_back(given ? std::optional(RateLimitFromProto(limit, out.default_rate_limit))
                                    : std::nullopt);
  }
  out.base_position = FromProto(spec.base_position());
  out.base_orientation = FromProto(spec.base_orientation());
  out.planar = spec.planar();
  for (const v1::Limb& limb : spec.limbs()) out.limbs.push_back({limb.length(), limb.radius()});
  for (const v1::JointLimit& limit : spec.joint_limits()) {
    out.joint_limits.push_back(
        limit.limited() ? std::optional<ik::JointLimit>({limit.min(), limit.max()}) : std::nullopt);
  }
  out.site_weights.assign(spec.site_weights().begin(), spec.site_weights().end());
  out.home_angles.assign(spec.home_angles().begin(), spec.home_angles().end());
  return out;
}

v1::ArmSpec ToProto(const ik::ArmSpec& spec) {
  v1::ArmSpec out;
  *out.mutable_base_position() = ToProto(spec.base_position);
  *out.mutable_base_orientation() = ToProto(spec.base_orientation);
  out.set_planar(spec.planar);
  for (const ik::Limb& limb : spec.limbs) {
    v1::Limb* l = out.add_limbs();
    l->set_length(limb.length);
    l->set_radius(limb.radius);
  }
  for (const std::optional<ik::JointLimit>& limit : spec.joint_limits) {
    v1::JointLimit* l = out.add_joint_limits();
    l->set_limited(limit.has_value());
    if (limit) {
      l->set_min(limit->min);
      l->set_max(limit->max);
    }
  }
  out.mutable_site_weights()->Add(spec.site_weights.begin(), spec.site_weights.end());
  out.mutable_home_angles()->Add(spec.home_angles.begin(), spec.home_angles.end());
  if (std::isfinite(spec.default_rate_limit.max_velocity) ||
      std::isfinite(spec.default_rate_limit.max_acceleration) ||
      std::isfinite(spec.default_rate_limit.max_jerk)) {
    RateLimitToProto(spec.default_rate_limit, out.mutable_default_rate_limit());
  }
  for (const std::optional<ik::JointRateLimit>& limit : spec.rate_limits) {
    v1::JointRateLimit* l = out.add_rate_limits();
    if (limit) RateLimitToProto(*limit, l);
  }
  return out;
}

planning::Obstacle FromProto(const v1::Obstacle& obstacle) {
  planning::Obstacle out{obstacle.id(), planning::Sphere{}};
  switch (obstacle.shape_case()) {
    case v1::Obstacle::kSphere:
      out.shape =
          planning::Sphere{FromProto(obstacle.sphere().center()), obstacle.sphere().radius()};
      break;
    case v1::Obstacle::kCapsule:
      out.shape = planning::Capsule{FromProto(obstacle.capsule().a()),
                                    FromProto(obstacle.capsule().b()), obstacle.capsule().radius()};
      break;
    case v1::Obstacle::kBox:
      out.shape =
          planning::Box{FromProto(obstacle.box().center()), FromProto(obstacle.box().orientation()),
                        FromProto(obstacle.box().half_extents())};
      break;
    case v1::Obstacle::kHalfSpace:
      out.shape = planning::HalfSpace{FromProto(obstacle.half_space().normal()),
                                      obstacle.half_space().offset()};
      break;
    case v1::Obstacle::SHAPE_NOT_SET:
      break;
  }
  return out;
}

v1::Obstacle ToProto(const planning::Obstacle& obstacle) {
  v1::Obstacle out;
  out.set_id(obstacle.id);
  std::visit(Overloaded{
                 [&](const planning::Sphere& s) {
                   *out.mutable_sphere()->mutable_center() = ToProto(s.center);
                   out.mutable_sphere()->set_radius(s.radius);
                 },
                 [&](const planning::Capsule& c) {
                   *out.mutable_capsule()->mutable_a() = ToProto(c.a);
                   *out.mutable_capsule()->mutable_b() = ToProto(c.b);
                   out.mutable_capsule()->set_radius(c.radius);
                 },
                 [&](const planning::Box& b) {
                   *out.mutable_box()->mutable_center() = ToProto(b.center);
                   *out.mutable_box()->mutable_orientation() = ToProto(b.orientation);
                   *out.mutable_box()->mutable_half_extents() = ToProto(b.half_extents);
                 },
                 [&](const planning::HalfSpace& h) {
                   *out.mutable_half_space()->mutable_normal() = ToProto(h.normal);
                   out.mutable_half_space()->set_offset(h.offset);
                 },
             },
             obstacle.shape);
  return out;
}

std::vector<planning::Obstacle> FromProto(const v1::SceneSpec& spec) {
  std::vector<planning::Obstacle> out;
  out.reserve(spec.obstacles_size());
  for (const v1::Obstacle& obstacle : spec.obstacles()) out.push_back(FromProto(obstacle));
  return out;
}

v1::SceneSpec ToProto(const planning::Scene& scene) {
  v1::SceneSpec out;
  for (const planning::Obstacle& obstacle : scene.obstacles())
    *out.add_obstacles() = ToProto(obstacle);
  return out;
}

}  // namespace ikd::server
