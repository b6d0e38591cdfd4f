#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for SECONDS each on its generated seed corpus and
# fails on any crash, leak, timeout (one input over 5 s) or OOM (over 2 GiB).
#
#   CXX=clang++ cmake -S . -B build-fuzz -DIKD_BUILD_FUZZERS=ON -DIKD_BUILD_TESTS=OFF \
#       -DIKD_BUILD_BENCH=OFF
#   cmake --build build-fuzz -j2 --target ikd_fuzzers
#   tests/fuzz/run_fuzzers.sh build-fuzz 60
#
# Corpora live in BUILD_DIR/fuzz-corpus/<target> (seeds from make_fuzz_seeds, plus what the runs
# add), findings in BUILD_DIR/fuzz-artifacts/<target>/, logs in BUILD_DIR/fuzz-logs/. Set
# IKD_FUZZ_TARGETS="a_fuzzer b_fuzzer" to run a subset, IKD_FUZZ_ARGS for extra libFuzzer flags.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build_dir="$(cd "$1" && pwd)"
seconds="$2"
fuzz_dir="$build_dir/tests/fuzz"
corpus_root="$build_dir/fuzz-corpus"
artifact_root="$build_dir/fuzz-artifacts"
log_dir="$build_dir/fuzz-logs"
mkdir -p "$corpus_root" "$artifact_root" "$log_dir"

targets=(${IKD_FUZZ_TARGETS:-})
if [ ${#targets[@]} -eq 0 ]; then
  for binary in "$fuzz_dir"/*_fuzzer; do
    [ -x "$binary" ] && targets+=("$(basename "$binary")")
  done
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "run_fuzzers: no *_fuzzer binaries in $fuzz_dir (build the ikd_fuzzers target)" >&2
  exit 1
fi

# Seeds are regenerated every run (cheap); inputs earlier runs added stay.
ASAN_OPTIONS=detect_leaks=0 "$fuzz_dir/make_fuzz_seeds" "$corpus_root"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
# Leaks inside Debian's urdfdom that ikd cannot free are suppressed (see the file).
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for target in "${targets[@]}"; do
  mkdir -p "$corpus_root/$target" "$artifact_root/$target"
  log="$log_dir/$target.log"
  echo "run_fuzzers: $target for ${seconds}s (log: $log)"
  # -jobs/-workers unset: one process (the cores are shared); libFuzzer exits non-zero on a
  # crash, leak, timeout or OOM and writes the input to the artifact directory.
  # shellcheck disable=SC2086
  if "$fuzz_dir/$target" "$corpus_root/$target" -max_total_time="$seconds" -timeout=5 \
      -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifact_root/$target/" ${IKD_FUZZ_ARGS:-} >"$log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+.*DONE' "$log" | tr '\n' ' ' || true
    echo
  else
    echo "run_fuzzers: $target FAILED; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    failed+=("$target")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "run_fuzzers: findings in ${failed[*]} (inputs in $artifact_root)" >&2
  exit 1
fi
echo "run_fuzzers: ${#targets[@]} targets clean"
