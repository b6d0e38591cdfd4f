// URDF import (ikd_urdf, Debian's urdfdom) on arbitrary documents: the first byte picks the
// base and tip link names from the ones URDFs commonly use, the rest is the XML. A chain the
// importer accepts goes on to Robot::Create and forward kinematics at its mid-range, which must
// be finite. Malformed input must come back as InvalidArgument, never a crash.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "ikd/robot/robot.h"
#include "ikd/urdf/urdf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* const kLinks[][2] = {{"base_link", "ee_link"}, {"base_link", "tool0"},
                                          {"a", "b"},               {"base", "tip"},
                                          {"base_link", "base_link"}, {"", "ee_link"}};
  const auto& [base, tip] = kLinks[data[0] % 6];
  const std::string xml(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto chain = ikd::robot::ChainFromUrdf(xml, base, tip);
  if (!chain.ok()) return 0;
  auto robot = ikd::robot::Robot::Create(*chain);
  if (!robot.ok()) return 0;
  const Eigen::Matrix3Xd sites = robot->SitesFromAngles(robot->MidRange());
  if (!sites.allFinite()) {
    std::fprintf(stderr, "accepted URDF chain gives non-finite sites at mid-range\n");
    __builtin_trap();
  }
  return 0;
}
