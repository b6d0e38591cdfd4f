#!/usr/bin/env bash
# Builds ikd and the load benchmark (Release), runs it against a fresh ikd and writes its
# tables into the "Load, faults and recovery" section of docs/operations.md.
# Usage: bench/run_load_bench.sh [load_bench options, e.g. --quick or --streams 100 --seconds 60]
# Env:   IKD_BENCH_BUILD_DIR (default: build-load), IKD_SKIP_APT=1 to skip apt-get,
#        IKD_BENCH_NO_DOCS=1 to print only. A run with options prints only unless
#        IKD_BENCH_DOCS=1: docs/operations.md keeps the full default run.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh
source bench/bench_docs.sh
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-load}"

ikd_bench_build_with_server ikd load_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
"$IKD_BUILD_DIR/bench/load/load_bench" "$@" | tee "$work/results.md" || status=$?

ikd_bench_writes_docs "$@" || exit "$status"
ikd_bench_write_section docs/operations.md load-bench "$work/results.md" "bench/run_load_bench.sh${*:+ $*}"
exit "$status"
