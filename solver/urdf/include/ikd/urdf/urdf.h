// URDF import (ROS Unified Robot Description Format, parsed by Debian's urdfdom): the serial
// chain from `base_link` to `tip_link` as a ChainSpec. Lives in the ikd_urdf library so that the
// solver itself needs no XML parser.
//
//   auto chain = ikd::robot::ChainFromUrdf(xml, "base_link", "tool0");
//   auto robot = ikd::robot::Robot::Create(*chain);
#pragma once

#include <string>

#include <Eigen/Geometry>

#include "absl/status/statusor.h"
#include "ikd/robot/chain.h"

namespace ikd::robot {

// Joint types: revolute (with its limits), continuous (a revolute joint without position
// limits), fixed (kept, merged by Robot::Create), prismatic (kept; Robot::Create rejects it).
// Errors (InvalidArgument): malformed XML or URDF (the parser's own message), unknown base or
// tip link, a tip that is not below the base, floating or planar joints on the chain, a zero
// axis, limits with lower > upper. `X_FT` is appended after the tip link (a tool offset).
absl::StatusOr<ChainSpec> ChainFromUrdf(const std::string& urdf_xml, const std::string& base_link,
                                        const std::string& tip_link,
                                        const Eigen::Isometry3d& X_FT = Eigen::Isometry3d::Identity());

}  // namespace ikd::robot
