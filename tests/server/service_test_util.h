// What the KinematicsService tests share: wire values made by hand, the 3-limb planar arm of
// their requests, and the field paths of a status's BadRequest.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

#include <Eigen/Core>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "ikd/v1/kinematics_service.pb.h"

namespace ikd::server::test_util {

inline v1::Vector3 Vec(double x, double y, double z) {
  v1::Vector3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

// A planar arm of three limbs of 0.5 m (radius 0.02) at the origin: reach 1.5 m.
inline v1::ArmSpec PlanarArm() {
  v1::ArmSpec spec;
  spec.set_planar(true);
  for (int k = 0; k < 3; ++k) {
    v1::Limb* limb = spec.add_limbs();
    limb->set_length(0.5);
    limb->set_radius(0.02);
  }
  return spec;
}

// The field paths of the google.rpc.BadRequest in the status details (empty when there is none).
inline std::vector<std::string> ViolatedFields(const grpc::Status& status) {
  google::rpc::Status details;
  std::vector<std::string> fields;
  if (!details.ParseFromString(status.error_details())) return fields;
  for (const google::protobuf::Any& any : details.details()) {
    google::rpc::BadRequest bad_request;
    if (!any.UnpackTo(&bad_request)) continue;
    for (const auto& violation : bad_request.field_violations()) fields.push_back(violation.field());
  }
  return fields;
}

inline Eigen::VectorXd Positions(const v1::JointState& state) {
  return Eigen::Map<const Eigen::VectorXd>(state.positions().data(), state.positions_size());
}

}  // namespace ikd::server::test_util
