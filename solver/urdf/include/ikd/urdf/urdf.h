// URDF import (ROS Unified Robot Description Format, parsed by Debian's urdfdom): the serial
// chain from `base_link` to `tip_link` as a ChainSpec, with the links' <collision> geometry.
// Lives in the ikd_urdf library so that the solver itself needs no XML parser.
//
//   auto chain = ikd::robot::ChainFromUrdf(xml, "base_link", "tool0", X_FT, {{"upper_arm.stl",
//   bytes}}); auto robot = ikd::robot::Robot::Create(*chain);
#pragma once

#include <map>
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
//
// Collision geometry (ChainSpec::link_shapes): every <collision> element of the links the
// moving joints move, and of the links fixed to them on the way to the tip, in the moving
// link's frame, covered by capsules (link_geometry.h): a sphere exactly, a cylinder and a box
// with rounded ends, a mesh by 1-3 capsules around its triangles. `meshes` holds the mesh files
// the document references, by the filename as written (package://robot/meshes/link1.stl) or
// its last path component (link1.stl); binary and ASCII STL. What was approximated or left out
// (a cylinder's rounded ends, a mesh that was not sent or is not STL, the base's geometry,
// which no joint moves) is listed in ChainSpec::geometry_notes. A chain none of whose links has
// a <collision> element that could be read (none, or only meshes that were not sent) keeps
// link_shapes empty: the joint-origin capsules of link_radii.
// Errors (InvalidArgument) name the element ("<collision> #1 of link 'l2'"): a negative or
// non-finite size or scale, a size that is no number (which urdfdom itself would drop), and
// "meshes: 'name'" for a mesh that was sent but is not readable STL.
using MeshFiles = std::map<std::string, std::string>;  // filename -> file contents
absl::StatusOr<ChainSpec> ChainFromUrdf(
    const std::string& urdf_xml, const std::string& base_link, const std::string& tip_link,
    const Eigen::Isometry3d& X_FT = Eigen::Isometry3d::Identity(), const MeshFiles& meshes = {});

}  // namespace ikd::robot
