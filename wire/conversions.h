// Conversions between the wire types (ikd.v1 protos) and the solver types (ikd::ik). Pure
// field copies: validation is the solver's (ik::Arm::Create, planning::Scene::Create), see
// validation.h. Quaternions: wire (x, y, z, w), an absent or all-zero one is the identity.
#pragma once

#include <string>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "absl/status/status.h"
#include "ikd/ik/arm.h"
#include "ikd/planning/scene.h"
#include "ikd/v1/types.pb.h"

namespace ikd::server {

Eigen::Vector3d FromProto(const v1::Vector3& v);
v1::Vector3 ToProto(const Eigen::Vector3d& v);
Eigen::Quaterniond FromProto(const v1::Quaternion& q);
v1::Quaternion ToProto(const Eigen::Quaterniond& q);

// Joint limits with limited == false become std::nullopt (min and max are not looked at).
ik::ArmSpec FromProto(const v1::ArmSpec& spec);
// A wire JointRateLimit (chain arms' and industrial arms' rate_limits): every field finite and
// >= 0 (0: not given); else INVALID_ARGUMENT naming `field`.max_... and the bound.
absl::Status CheckRateLimit(const v1::JointRateLimit& limit, const std::string& field);
v1::ArmSpec ToProto(const ik::ArmSpec& spec);

// An obstacle without a shape becomes a zero-radius sphere at the origin; callers reject it
// first (validation.h).
planning::Obstacle FromProto(const v1::Obstacle& obstacle);
v1::Obstacle ToProto(const planning::Obstacle& obstacle);

std::vector<planning::Obstacle> FromProto(const v1::SceneSpec& spec);
v1::SceneSpec ToProto(const planning::Scene& scene);

// The net under every answer: shown the numbers of a message, it keeps the first that is not
// finite (NaN or infinity), by name. A client is never sent such a number: inputs that lead
// there are refused up front (ikd/world.h), and this catches any not yet refused.
class FiniteCheck {
 public:
  // `index` >= 0 names element `index` of a repeated field: "name[index]".
  void Number(double x, const char* name, int index = -1);
  void Vector(const v1::Vector3& v, const char* name, int index = -1);
  // OK, or OUT_OF_RANGE "<what> is beyond the range of doubles (<field> = <value>); ...".
  absl::Status Result(const std::string& what) const;

 private:
  std::string first_;  // "field = value" of the first non-finite number; empty: none
};

}  // namespace ikd::server
