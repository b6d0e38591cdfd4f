#!/usr/bin/env bash
# Builds the constraint benchmark (Release, with GROMACS SHAKE and OpenMM CCMA when installed),
# runs it, writes its tables into docs/benchmarks.md and plots docs/img/constraint_bench.png.
# Usage: bench/run_constraint_bench.sh [--quick] [--passes P]
# Env:   IKD_BENCH_BUILD_DIR (default: build-bench), IKD_SKIP_APT=1 to skip apt-get,
#        IKD_BENCH_NO_DOCS=1 to print only (docs/ untouched). A run with options (--quick, ...)
#        prints only unless IKD_BENCH_DOCS=1: docs/benchmarks.md keeps the full default run.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh
source bench/bench_docs.sh
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-bench}"

ikd_install_packages "${IKD_BASE_PACKAGES[@]}"
if [ "${IKD_SKIP_APT:-0}" != 1 ]; then
  for p in libgromacs-dev libopenmm-dev gnuplot-nox; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      deploy/install-bench-peers.sh
      break
    fi
  done
fi

IKD_BUILD_TYPE=Release ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON -DIKD_BUILD_SERVER=OFF
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target constraint_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$IKD_BUILD_DIR/bench/constraint_bench" "$@" --markdown "$work/results.md" --data "$work/results.dat" \
  | tee "$work/stdout.txt"
"$IKD_BUILD_DIR/bench/constraint_bench" --ccma_probe | tee "$work/probe.txt" || true
ikd_bench_writes_docs "$@" || exit 0

# Each section names the date, the CPU, the commit and the command that wrote it.
ikd_bench_write_section docs/benchmarks.md constraint-bench "$work/results.md" \
  "bench/run_constraint_bench.sh${*:+ $*}"
{ echo '```'; cat "$work/probe.txt"; echo '```'; } > "$work/probe.md"
ikd_bench_write_section docs/benchmarks.md ccma-probe "$work/probe.md" \
  "$IKD_BUILD_DIR/bench/constraint_bench --ccma_probe (run by bench/run_constraint_bench.sh)"

if command -v gnuplot >/dev/null; then
  mkdir -p docs/img
  methods=$(awk 'NF >= 4 && $1 !~ /^#/ {print $2}' "$work/results.dat" | awk '!seen[$0]++' | tr '\n' ' ')
  gnuplot <<GP
set terminal pngcairo size 1400,1100 font ",11" noenhanced
set output "docs/img/constraint_bench.png"
set multiplot layout 2,2 title "Restoring unit-link constraints after a 0.1% RMS random violation, tau = 1e-8 (Bailey 2008 Fig. 5); OpenMM_CCMA stops above tau (see docs/benchmarks.md)"
set logscale xy
set xrange [7:14000]
set ylabel "CPU time per constraint (µs)"
set key below horizontal maxcols 4 font ",9"
set grid
methods = "$methods"
do for [shape in "helix coil straight ring"] {
  set title shape." (x: sites N)"
  plot for [m in methods] "$work/results.dat" using 3:((strcol(1) eq shape && strcol(2) eq m) ? \$4 : 1/0) \
       with linespoints title m
}
unset multiplot
GP
  echo "docs/img/constraint_bench.png written"
else
  echo "gnuplot not installed (apt-get install gnuplot-nox): no plot"
fi
