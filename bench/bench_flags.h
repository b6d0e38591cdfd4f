// Command-line handling the benchmark programs share (Abseil flags): parsing that refuses
// leftover arguments, and range checks whose message names the flag and its bounds.
#pragma once

#include <optional>
#include <type_traits>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "bench_util.h"

namespace ikd::bench {

// Parses the flags; Abseil itself ends the program on an unknown flag or a malformed value.
// A positional argument is refused too: it is most likely an option missing its "--" or a
// value after a bool flag (--kdl false), and ignoring it would run another benchmark than
// the one asked for.
inline void ParseBenchFlags(const char* program, const char* usage, int argc, char** argv) {
  absl::SetProgramUsageMessage(usage);
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    DieIn(program, absl::StrCat("unexpected argument '", rest[1],
                                "' (flags are --name=value or --name value, bool flags --name, "
                                "--noname or --name=false; --help lists them)"));
  }
}

// `value` of flag --`name`, or exit 2 naming the flag and the bounds when outside [lo, hi]
// (NaN included).
template <class T>
T CheckRange(const char* program, absl::string_view name, T value, T lo, T hi) {
  if (!(value >= lo && value <= hi)) {
    DieIn(program, absl::StrCat("--", name, " must be in [", lo, ", ", hi, "], got ", value));
  }
  return value;
}

// The flag's value, range-checked.
template <class T>
T FlagIn(const char* program, const absl::Flag<T>& flag, std::type_identity_t<T> lo,
         std::type_identity_t<T> hi) {
  return CheckRange(program, absl::GetFlagReflectionHandle(flag).Name(),
                    absl::GetFlag(flag), lo, hi);
}

// An optional flag: its value, range-checked, when given, else `fallback`. For a default that
// depends on another flag (--quick) or an override that is off unless given.
template <class T>
T FlagOr(const char* program, const absl::Flag<std::optional<T>>& flag,
         std::type_identity_t<T> fallback, std::type_identity_t<T> lo, std::type_identity_t<T> hi) {
  const std::optional<T> value = absl::GetFlag(flag);
  if (!value.has_value()) return fallback;
  return CheckRange(program, absl::GetFlagReflectionHandle(flag).Name(), *value, lo, hi);
}

}  // namespace ikd::bench
