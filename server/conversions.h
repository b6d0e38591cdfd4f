// Conversions between the wire types (ikd.v1 protos) and the solver types (ikd::ik). Pure
// field copies: validation is the solver's (ik::Arm::Create, ik::Scene::Create), see
// validation.h. Quaternions: wire (x, y, z, w), an absent or all-zero one is the identity.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "ikd/ik/arm.h"
#include "ikd/ik/scene.h"
#include "ikd/v1/types.pb.h"

namespace ikd::server {

Eigen::Vector3d FromProto(const v1::Vector3& v);
v1::Vector3 ToProto(const Eigen::Vector3d& v);
Eigen::Quaterniond FromProto(const v1::Quaternion& q);
v1::Quaternion ToProto(const Eigen::Quaterniond& q);

// Joint limits with limited == false become std::nullopt (min and max are not looked at).
ik::ArmSpec FromProto(const v1::ArmSpec& spec);
v1::ArmSpec ToProto(const ik::ArmSpec& spec);

// An obstacle without a shape becomes a zero-radius sphere at the origin; callers reject it
// first (validation.h).
ik::Obstacle FromProto(const v1::Obstacle& obstacle);
v1::Obstacle ToProto(const ik::Obstacle& obstacle);

std::vector<ik::Obstacle> FromProto(const v1::SceneSpec& spec);
v1::SceneSpec ToProto(const ik::Scene& scene);

}  // namespace ikd::server
