#!/usr/bin/env bash
# Builds the constraint benchmark (Release; with OpenMM CCMA from libopenmm-dev) and writes its results into docs/benchmarks.md.
# Usage: bench/run_constraint_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-bench}"
ikd_install_packages "${IKD_TEST_PACKAGES[@]}" libopenmm-dev
IKD_BUILD_TYPE=Release ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target constraint_bench
results=$(mktemp)
"$IKD_BUILD_DIR/bench/constraint_bench" "$@" --markdown "$results"
python3 - "$results" <<'PY'
import re, sys
doc = open("docs/benchmarks.md").read()
table = open(sys.argv[1]).read()
begin, end = "<!-- constraint-bench:begin -->", "<!-- constraint-bench:end -->"
doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), begin + "\n" + table + end, doc, flags=re.S)
open("docs/benchmarks.md", "w").write(doc)
PY
echo "docs/benchmarks.md updated"
