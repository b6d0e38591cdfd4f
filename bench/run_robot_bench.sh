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
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-bench}"

ikd_install_packages "${IKD_BASE_PACKAGES[@]}"
if [ "${IKD_SKIP_APT:-0}" != 1 ] &&
   ! dpkg-query -W -f='${Status}' liborocos-kdl-dev 2>/dev/null | grep -q "install ok installed"; then
  deploy/install-bench-peers.sh
  ikd_install_packages liborocos-kdl-dev  # in case the peer list lacks it
fi

IKD_BUILD_TYPE=Release ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON -DIKD_BUILD_SERVER=OFF
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target robot_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$IKD_BUILD_DIR/bench/robot/robot_bench" "$@" | tee "$work/results.md"

ikd_bench_writes_docs "$@" || exit 0
ikd_bench_write_section docs/robot-benchmark.md robot-bench "$work/results.md" "bench/run_robot_bench.sh${*:+ $*}"
