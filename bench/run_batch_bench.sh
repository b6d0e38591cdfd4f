#!/usr/bin/env bash
# Builds the SolveBatch throughput benchmark (bench/service/batch_bench.cc: the same poses by
# unary Solve calls, one and two callers, and by one SolveBatch call, in-process server) in
# Release and runs it; a full run (no arguments) rewrites its section of
# docs/service-benchmark.md.
#
#   bench/run_batch_bench.sh [--targets=N] [--chunk_size=C]
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh
source bench/bench_docs.sh
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-svc}"

ikd_bench_build_with_server batch_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$IKD_BUILD_DIR/bench/service/batch_bench" "$@" | tee "$work/results.md"

ikd_bench_writes_docs "$@" || exit 0
ikd_bench_write_section docs/service-benchmark.md batch-bench "$work/results.md" \
  "bench/run_batch_bench.sh${*:+ $*}"
