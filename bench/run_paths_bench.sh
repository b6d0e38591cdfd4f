#!/usr/bin/env bash
# Builds the witness-based joint-path benchmark (bench/paths: PlanPath's tracker and driver on
# random chain arms, and plain per-sample solves against PlanRobotPath on UR5, Panda and iiwa14,
# whose tool paths come from known feasible joint motions, measured by an independent checker;
# plus fixed tool circles and lines centred at the industrial arms' ready TCPs), runs it and
# writes its Markdown output (stdout, as printed) into docs/paths-benchmark.md after a preamble
# with the commit and the command line. --dump files hold no timings: two runs give the same
# bytes.
# Usage: bench/run_paths_bench.sh [paths_bench options, e.g. --scenarios 20 --dump FILE,
#        --norobots, --nochains, --only KIND]
# Env:   IKD_BUILD_DIR (default: build-bench; an already configured directory is built as it
#        is, never reconfigured), IKD_JOBS (default 2), IKD_SKIP_APT=1 to skip apt-get,
#        IKD_BENCH_NO_DOCS=1 to print only, IKD_PATHS_DOC (default: docs/paths-benchmark.md),
#        IKD_BENCH_BUILD_ONLY=1 to build paths_bench and stop.
set -euo pipefail
cd "$(dirname "$0")/.."
IKD_BUILD_DIR="${IKD_BUILD_DIR:-build-bench}"
source deploy/common.sh
doc="${IKD_PATHS_DOC:-docs/paths-benchmark.md}"
# The tree the figures come from, read before the document (part of the tree) is rewritten.
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)

ikd_install_packages "${IKD_BASE_PACKAGES[@]}"
# Reconfiguring a shared build directory (build type, options) would rebuild all of it.
if [ ! -f "$IKD_BUILD_DIR/CMakeCache.txt" ]; then
  IKD_BUILD_TYPE=Release ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON -DIKD_BUILD_SERVER=OFF
fi
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target paths_bench
binary="$IKD_BUILD_DIR/bench/paths/paths_bench"
[ "${IKD_BENCH_BUILD_ONLY:-0}" = 1 ] && exit 0

results=$(mktemp)
trap 'rm -f "$results"' EXIT
"$binary" "$@" | tee "$results"
[ "${IKD_BENCH_NO_DOCS:-0}" = 1 ] && exit 0

build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$IKD_BUILD_DIR/CMakeCache.txt")
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
{
  echo "# Joint-path benchmark (witness-based)"
  echo
  echo "Written by \`bench/run_paths_bench.sh\`; edits are overwritten by the next run."
  echo
  echo "Each scenario is a random chain arm with a smooth random joint motion (the witness) that"
  echo "is clear of obstacles and of itself by 0.03 m and within the position limits; the hand"
  echo "path is the witness's hand, the declared rate limits are 1.5 x the witness's maxima, and"
  echo "the obstacles sit where a plain projection's path would go. A feasible answer exists, so"
  echo "every collision and limit violation is the solver's. Every figure comes from the"
  echo "benchmark's own checker (bench/paths/checker.cc), not from the solver's residuals."
  echo
  echo "The industrial-arm sections do the same for the UR5, Panda and iiwa14 presets: the witness"
  echo "is a smooth random joint motion inside the position limits, at no more than half of each"
  echo "joint's declared velocity limit (and acceleration limit: the Panda declares them) and away"
  echo "from singularities; the request is its TCP path, position only or full pose, from the"
  echo "witness's first configuration; the arms carry the presets' collision models and are"
  echo "checked against themselves too (--nobodies: 5 cm capsules on the joint origins); the"
  echo "-obstacles kinds add spheres that the witness's links clear by 0.03 m, in the way of a"
  echo "plain per-sample solve where possible, and the -blocking kinds place them one by one where"
  echo "that solve, given the scene so far, still goes, until it collides; the -near-base and"
  echo "-folded kinds bring the witness close to the arm itself. The chain kinds run a second"
  echo "time without declared rate limits, judged on how fast each limb turns in the world against"
  echo "the witness. The plain"
  echo "per-sample solve (RobotTracker::Solve from the previous answer) and PlanRobotPath are both"
  echo "measured by bench/paths/robot_checker.cc (its own forward kinematics and distances), their"
  echo "statuses and summaries compared with it. The fixed-path tables follow horizontal tool"
  echo "circles of radius 5-15 cm and straight lines of 5-15 cm, both centred at each arm's ready"
  echo "TCP, at 0.1-0.3 m/s (target: every sample REACHED and confirmed by the checker). Each"
  echo "section below explains its columns; everything after the command line is the program's"
  echo "own output (stdout), as printed."
  echo
  echo "Commit \`$commit\`, run $(date -u +%Y-%m-%d)" \
       "on ${cpu:-unknown CPU} ($(nproc) cores), ${build_type:-default} build."
  echo "Command: \`bench/run_paths_bench.sh${*:+ $*}\` (\`paths_bench${*:+ $*}\`)"
  echo
  cat "$results"
} > "$doc"
echo "$doc written"
