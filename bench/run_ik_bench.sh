#!/usr/bin/env bash
# Builds the IK benchmark (Release; with Orocos KDL when liborocos-kdl-dev is installed) and
# prints its table. Usage: bench/run_ik_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-bench}"
ikd_install_packages "${IKD_TEST_PACKAGES[@]}" liborocos-kdl-dev
IKD_BUILD_TYPE=Release ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target ik_bench
"$IKD_BUILD_DIR/bench/ik_bench" "$@"
