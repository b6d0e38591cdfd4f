#!/usr/bin/env bash
# Set up a fresh Debian 12 machine, build ikd and run every test through ctest; then the same
# suite under AddressSanitizer + UndefinedBehaviorSanitizer, the service and integration tests
# under ThreadSanitizer, and a short run of every libFuzzer target. Exits non-zero on any failure
# or sanitizer report.
# Usage: deploy/test.sh            (as root or with sudo available for apt-get)
#        deploy/test.sh --quick    the plain build and its tests only (while developing)
# Env:   IKD_BUILD_DIR (default: build; the other stages use $IKD_BUILD_DIR-asan, -tsan, -fuzz),
#        IKD_JOBS (default: 2), IKD_SKIP_APT=1 to skip apt, IKD_TEST_STAGES (default
#        "plain asan tsan fuzz"), IKD_FUZZ_SECONDS (default: 15 per fuzz target),
#        IKD_FUZZ_SEED (libFuzzer -seed, default 1; 0: random).
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh

stages="${IKD_TEST_STAGES:-plain asan tsan fuzz}"
[ "${1:-}" = --quick ] && stages=plain
plain_dir="$IKD_BUILD_DIR"
root="$PWD"

ikd_install_packages "${IKD_TEST_PACKAGES[@]}"

# ctest in build dir $1 with extra arguments; sanitizer reports of every process the tests start
# (ikd, ikctl, mock_arm children too) land in $1/sanitizer-logs, and any report fails the stage.
run_ctest() {
  local dir
  dir="$(cd "$1" && pwd)"
  shift
  local logs="$dir/sanitizer-logs"
  rm -rf "$logs" && mkdir -p "$logs"
  local common="halt_on_error=1:log_path=$logs/report"
  (cd "$dir" &&
    ASAN_OPTIONS="$common:detect_leaks=1:abort_on_error=0" \
    LSAN_OPTIONS="print_suppressions=0:suppressions=$root/tests/sanitizers/lsan.supp" \
    UBSAN_OPTIONS="$common:print_stacktrace=1" \
    TSAN_OPTIONS="$common:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$root/tests/sanitizers/tsan.supp" \
    ctest --output-on-failure --no-tests=error --timeout 900 -j "$IKD_JOBS" "$@") || {
    cat "$logs"/report* 2>/dev/null || true
    return 1
  }
  if compgen -G "$logs/report*" >/dev/null; then
    echo "ikd: sanitizer reports in $logs:" >&2
    cat "$logs"/report* >&2
    return 1
  fi
}

for stage in $stages; do
  echo "ikd: test stage $stage"
  case "$stage" in
    plain)
      IKD_BUILD_DIR="$plain_dir"
      ikd_configure -DIKD_BUILD_TESTS=ON -DIKD_BUILD_BENCH=ON -DIKD_SANITIZE=
      ikd_build
      run_ctest "$IKD_BUILD_DIR"
      ;;
    asan)
      IKD_BUILD_DIR="$plain_dir-asan"
      ikd_configure -DIKD_BUILD_TESTS=ON -DIKD_BUILD_BENCH=OFF -DIKD_SANITIZE=address,undefined
      ikd_build
      run_ctest "$IKD_BUILD_DIR"
      ;;
    tsan)
      # gRPC, protobuf and Abseil come uninstrumented from Debian: ThreadSanitizer watches
      # ikd's own code (tests/sanitizers/tsan.supp says what it cannot see through).
      IKD_BUILD_DIR="$plain_dir-tsan"
      ikd_configure -DIKD_BUILD_TESTS=ON -DIKD_BUILD_BENCH=OFF -DIKD_SANITIZE=thread
      mapfile -t targets < <(cmake --build "$IKD_BUILD_DIR" --target help |
        sed -n 's/^\.\.\. \(\(server\|integration\)_[a-z0-9_]*_test\)$/\1/p')
      if [ ${#targets[@]} -eq 0 ]; then
        echo "ikd: no server or integration test targets in $IKD_BUILD_DIR" >&2
        exit 1
      fi
      cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target "${targets[@]}"
      run_ctest "$IKD_BUILD_DIR" -L '^(server|integration)$'
      ;;
    fuzz)
      IKD_BUILD_DIR="$plain_dir-fuzz"
      CXX=clang++ ikd_configure -DIKD_BUILD_FUZZERS=ON -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=OFF
      cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target ikd_fuzzers
      # A fixed libFuzzer seed: the stage replays the same mutations each run (a regression
      # gate); exploration is the long runs of docs/fuzzing.md (IKD_FUZZ_SEED=0: random).
      IKD_FUZZ_ARGS="-seed=${IKD_FUZZ_SEED:-1} ${IKD_FUZZ_ARGS:-}" \
        bash tests/fuzz/run_fuzzers.sh "$IKD_BUILD_DIR" "${IKD_FUZZ_SECONDS:-15}"
      ;;
    *)
      echo "ikd: unknown test stage '$stage' (IKD_TEST_STAGES: plain asan tsan fuzz)" >&2
      exit 2
      ;;
  esac
done
echo "ikd: all test stages passed ($stages)"
