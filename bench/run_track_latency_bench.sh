#!/usr/bin/env bash
# Builds ikd and the Track latency benchmark (bench/service/track_latency.cc: ikd in its own
# process, controllers in theirs, 1 kHz) in Release and runs it; a full run (no arguments)
# rewrites its section of docs/service-benchmark.md.
#
#   bench/run_track_latency_bench.sh [--seconds=S] [--streams=1,10] [--arms=planar7] ...
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh
source bench/bench_docs.sh
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-svc}"

ikd_bench_build_with_server track_latency_bench ikd

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$IKD_BUILD_DIR/bench/service/track_latency_bench" --ikd="$IKD_BUILD_DIR/server/ikd" "$@" |
  tee "$work/results.md"

ikd_bench_writes_docs "$@" || exit 0
ikd_bench_write_section docs/service-benchmark.md track-latency "$work/results.md" \
  "bench/run_track_latency_bench.sh${*:+ $*}"
