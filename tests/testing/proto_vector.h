// The wire's Vector3 from its coordinates, for tests that build requests by hand.
#pragma once

#include "ikd/v1/types.pb.h"

namespace ikd::testing {

inline v1::Vector3 Vec(double x, double y, double z) {
  v1::Vector3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

}  // namespace ikd::testing
