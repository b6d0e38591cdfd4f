// Helpers the benchmark programs share: ending the program on a broken set-up, unwrapping a
// StatusOr that must hold, uniform draws that are the same on every standard library, and the
// machine's load (printed beside timings).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace ikd::bench {

// Prints "program: what" and exits 2 (a scenario that cannot be built is not a result).
[[noreturn]] inline void DieIn(const char* program, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program, what.c_str());
  std::exit(2);
}

template <class T>
T UnwrapIn(const char* program, absl::StatusOr<T> value, const char* what) {
  if (!value.ok()) DieIn(program, std::string(what) + ": " + std::string(value.status().message()));
  return *std::move(value);
}

// Uniform in [0, 1) from the raw 64-bit stream: portable across standard libraries, unlike
// std::uniform_real_distribution, so the scenarios are the same everywhere.
inline double Uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }
// Uniform in [lo, hi), and an integer uniform in [lo, hi], from the same stream.
inline double UniformIn(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * Uniform(rng);
}
inline int UniformCount(std::mt19937_64& rng, int lo, int hi) {
  return lo + static_cast<int>(Uniform(rng) * (hi - lo + 1));
}

// The 1-minute load average ("?" where /proc/loadavg cannot be read).
inline std::string LoadAverage() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "?";
  char text[64] = "";
  if (std::fgets(text, sizeof text, f) == nullptr) text[0] = '\0';
  std::fclose(f);
  const std::string s(text);
  return s.substr(0, s.find(' '));
}

}  // namespace ikd::bench
