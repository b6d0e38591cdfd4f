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
// (planning/swept_clearance.h), settled within a quarter of it (or 1e-6 m) unless its budget of
// evaluations runs out (fast spinning joints): never above the checker's least (its samples and
// its finer subdivision of the motions), and not below half of it.
// Where either is negative both must be (a touching motion's depth is not refined).
// `jumps`: the path passes a velocity limit, so some motion may have outrun the budget; the
// library's figure may then lie anywhere below the checker's (on the safe side).
inline bool ClearanceAgrees(double checker, double library, bool jumps = false) {
  if (jumps && library <= checker + 1e-9) return true;
  if (checker < 0.0 || library < 0.0) return checker < 0.0 && library < 0.0;
  if (checker >= 0.05 && library >= 0.05) return true;  // far from everything: not compared
  return library <= checker + 1e-9 && library >= 0.5 * checker - 1e-6;
}

}  // namespace ikd::bench::paths
