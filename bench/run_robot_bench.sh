#!/usr/bin/env bash
# Builds the industrial-arm IK benchmark (Release; side by side with Orocos KDL when
# liborocos-kdl-dev is installed), runs it and writes its tables into docs/robot-benchmark.md.
# Usage: bench/run_robot_bench.sh [robot_bench options, e.g. --quick or --targets 2000]
# Env:   IKD_BENCH_BUILD_DIR (default: build-bench), IKD_SKIP_APT=1 to skip apt-get,
#        IKD_BENCH_NO_DOCS=1 to print only. A run with options (--quick, ...) prints only unless
#        IKD_BENCH_DOCS=1: docs/robot-benchmark.md keeps the full default run.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh
source bench/bench_docs.sh
ikd_run_kdl_bench robot_bench docs/robot-benchmark.md robot-bench bench/run_robot_bench.sh "$@"
