// Which closed-form family of analytic_ik.h six joint axes fit: each family's conditions
// (parallel, intersecting and non-parallel axes) checked within a tolerance, with the points
// the family solves with and the first condition that fails, named by joint.
#pragma once

#include <array>
#include <string>

#include <Eigen/Core>

#include "ikd/robot/analytic_ik.h"

namespace ikd::robot::internal {

// Two axis lines (point o, unit direction h).
struct Line {
  Eigen::Vector3d o, h;
};

// A family's conditions checked on six axes in solve order: the points it solves with and the
// signs of the parallel axes, or the first condition that fails.
struct Fit {
  bool ok = false;
  std::string failure;
  std::array<Eigen::Vector3d, 6> c;
  std::array<double, 6> sign = {1, 1, 1, 1, 1, 1};
  double error = 0.0;
};

// The axes in solve order; numbers: the joint number (1-based) of each axis, for the messages;
// locked: the locked joint's number (0: none); tolerance: AnalyticOptions::geometry_tolerance.
Fit CheckFamily(AnalyticFamily family, const std::array<Line, 6>& axes,
                const std::array<int, 6>& numbers, int locked, double tolerance);

}  // namespace ikd::robot::internal
