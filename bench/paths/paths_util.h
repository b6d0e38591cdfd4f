// What every part of paths_bench shares: stopping with the program's name in the message, and
// the uniform draws under short names.
#pragma once

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

}  // namespace ikd::bench::paths
