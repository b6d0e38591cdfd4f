// What every part of paths_bench shares: stopping with the program's name in the message, and
// the uniform draws under short names.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "bench_util.h"

namespace ikd::bench::paths {

[[noreturn]] inline void Die(const std::string& what) { DieIn("paths_bench", what); }

template <class T>
T Unwrap(absl::StatusOr<T> value, const char* what) {
  return UnwrapIn("paths_bench", std::move(value), what);
}

inline double Range(std::mt19937_64& rng, double lo, double hi) { return UniformIn(rng, lo, hi); }
inline int Count(std::mt19937_64& rng, int lo, int hi) { return UniformCount(rng, lo, hi); }

// Whether the library's least clearance of a path agrees with the checker's, the motions between
// samples included. The library's is a certified lower bound of the motions' least clearance
// (planning/swept_clearance.h): never above the checker's least (its samples and its finer
// subdivision of the motions). It may lie below, by up to a quarter of it, or by any amount
// where a close, fast motion used up the check's budget of evaluations (then the library calls
// the motion IN_COLLISION: it could not certify it; bench/paths seed 1 planar-obstacles #16's
// tracker, 1.46 mm clear by the checker, -1.02 mm by the bound after 256 evaluations): on the
// safe side, so not a disagreement. Where both touch they agree (the library does not refine a
// touching motion's depth).
inline bool ClearanceAgrees(double checker, double library) {
  if (checker >= 0.05 && library >= 0.05) return true;  // far from everything: not compared
  if (checker < 0.0 && library < 0.0) return true;
  return library <= checker + 1e-9;
}

}  // namespace ikd::bench::paths
