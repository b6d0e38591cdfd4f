#!/usr/bin/env bash
# Builds the service benchmark (Release, with the server), runs it and writes its tables into
# docs/service-benchmark.md.
# Usage: bench/run_service_bench.sh [service_bench options, e.g. --quick]
# Env:   IKD_BENCH_BUILD_DIR (default: build-svc), IKD_SKIP_APT=1 to skip apt-get,
#        IKD_BENCH_NO_DOCS=1 to print only. A run with options (--quick, ...) prints only unless
#        IKD_BENCH_DOCS=1: docs/service-benchmark.md keeps the full default run.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh
source bench/bench_docs.sh
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-svc}"

ikd_bench_build_with_server service_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$IKD_BUILD_DIR/bench/service/service_bench" "$@" | tee "$work/results.md"

ikd_bench_writes_docs "$@" || exit 0
ikd_bench_write_section docs/service-benchmark.md service-bench "$work/results.md" "bench/run_service_bench.sh${*:+ $*}"
