#!/usr/bin/env bash
# Side-by-side cost of two commits on the same machine in one run: builds bench/paths'
# paths_bench at BASE (a git worktree) and at the current tree, both with the same build type and
# flags, then runs them kind by kind back to back (which goes first alternating, so that drift in
# the machine's speed falls on both) for ROUNDS rounds and prints per kind and solver the median over rounds of each build's
# "us per sample" (PlanPath, PlanRobotPath; the planner alone, the checker is not timed), the cost
# case's median (a 200-sample 7-link path among 20 obstacles) and live Track's mean us per answer,
# with the ratio HEAD / BASE.
# Writes its Markdown output (stdout, as printed) into docs/cost-comparison.md after a preamble
# with both commits and the command line.
# Usage: bench/run_cost_comparison.sh BASE [ROUNDS (default 5)] [SCENARIOS per kind (default 20)]
# Env:   IKD_BUILD_DIR (this tree's build, default build; an existing directory is built as it is),
#        IKD_COMPARE_DIR (default build-compare: the worktree and its build), IKD_JOBS,
#        IKD_SKIP_APT=1 to skip apt-get, IKD_BENCH_NO_DOCS=1 to print only, IKD_COST_DOC (default
#        docs/cost-comparison.md), IKD_COST_HEAD_FLAGS (paths_bench flags for the current tree
#        only, e.g. --nobodies: its industrial arms without the presets' collision models, as the
#        base had them; named in the doc), IKD_COST_KINDS (the kinds run, default all; "cost" and
#        "track" are the cost case and the Track tables).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/run_cost_comparison.sh BASE [ROUNDS] [SCENARIOS]}
rounds=${2:-5}
scenarios=${3:-20}
source deploy/common.sh
compare_dir="${IKD_COMPARE_DIR:-build-compare}"
base_rev=$(git rev-parse --short "$base")
head_rev=$(git describe --always --dirty)

ikd_install_packages "${IKD_BASE_PACKAGES[@]}"
if [ ! -f "$IKD_BUILD_DIR/CMakeCache.txt" ]; then
  ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON -DIKD_BUILD_SERVER=OFF
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$IKD_BUILD_DIR/CMakeCache.txt")
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target paths_bench

# The base tree: a detached worktree, rebuilt with this build's type (ccache shares the objects of
# every file the two trees have in common).
src="$compare_dir/src"
if [ -d "$src" ]; then
  git -C "$src" checkout -q --detach "$base"
else
  mkdir -p "$compare_dir"
  git worktree add -f --detach "$src" "$base" >/dev/null
fi
(cd "$src" && IKD_BUILD_DIR="$PWD/../build" IKD_BUILD_TYPE="$build_type" &&
  if [ ! -f "$IKD_BUILD_DIR/CMakeCache.txt" ]; then
    source deploy/common.sh
    ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON -DIKD_BUILD_SERVER=OFF
  fi &&
  cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target paths_bench)
declare -A binary=([base]="$compare_dir/build/bench/paths/paths_bench"
                   [head]="$IKD_BUILD_DIR/bench/paths/paths_bench")

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
exec 3>&1 > >(tee "$out/report.md")
tee_pid=$!
# One table row per kind and solver: "kind solver us_per_sample" (the column named in the header).
timings() {
  awk -F'|' '
    /^\| kind \| solver \|/ { col = 0; for (i = 1; i <= NF; ++i) if ($i ~ /us per sample/) col = i; next }
    /^\|---/ { next }
    /^\|/ && col > 0 && NF >= col { gsub(/ /, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $col);
                                   print $2, $3, $col }
    /^$/ { col = 0 }' "$1"
}
# Kind by kind, the two builds back to back (the first of them alternating), so that a slow
# spell of the machine falls on both.
kinds=(planar-free planar-obstacles spatial-free spatial-obstacles ur5-position ur5-pose
       panda-position panda-pose iiwa14-position iiwa14-pose ur5-position-obstacles
       ur5-pose-obstacles panda-position-obstacles panda-pose-obstacles
       iiwa14-position-obstacles iiwa14-pose-obstacles cost track)
[ -n "${IKD_COST_KINDS:-}" ] && read -r -a kinds <<<"$IKD_COST_KINDS"
declare -A flags=([base]="" [head]="${IKD_COST_HEAD_FLAGS:-}")
turn=0
for ((r = 1; r <= rounds; ++r)); do
  echo "round $r" >&2
  for kind in "${kinds[@]}"; do
    order=(base head)
    ((turn++ % 2 == 1)) && order=(head base)
    for which in "${order[@]}"; do
      read -r -a extra <<<"${flags[$which]}"
      case "$kind" in
        cost)
          "${binary[$which]}" --cost "${extra[@]}" |
            sed -n 's/.*: median \([0-9.]*\) ms.*/cost-case 7-link-20-posts \1/p' >> "$out/$which.rows" ;;
        track) "${binary[$which]}" --track "${extra[@]}" > "$out/$which.track.$r.txt" ;;
        *)
          "${binary[$which]}" --scenarios "$scenarios" --only "$kind" "${extra[@]}" 2>/dev/null \
            > "$out/run.txt"
          timings "$out/run.txt" >> "$out/$which.rows" ;;
      esac
    done
  done
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "# Cost of $head_rev${IKD_COST_HEAD_FLAGS:+ (run with $IKD_COST_HEAD_FLAGS)} against $base_rev ($build_type, $rounds rounds, $scenarios scenarios per kind, $(nproc) cores)"
echo
echo "| kind | solver | $base_rev us per sample | $head_rev us per sample | ratio |"
echo "|---|---|---:|---:|---:|"
touch "$out/base.rows" "$out/head.rows" "$out/base.track.rows"
awk '{ print $1, $2 }' "$out/head.rows" | sort -u | while read -r kind solver; do
  b=$(awk -v k="$kind" -v s="$solver" '$1 == k && $2 == s { print $3 }' "$out/base.rows" | median)
  h=$(awk -v k="$kind" -v s="$solver" '$1 == k && $2 == s { print $3 }' "$out/head.rows" | median)
  [ -z "$b" ] && continue
  echo "| $kind | $solver | $b | $h | $(awk -v b="$b" -v h="$h" 'BEGIN { printf "%.2f", (b > 0) ? h / b : 0 }') |"
done
echo
echo "Track (paths_bench --track): mean us per answer, median over rounds, per row of its tables"
echo
echo "| row | $base_rev | $head_rev | ratio |"
echo "|---|---:|---:|---:|"
# Each Track table row (scene or arm, limits or target, speed) and its last column, us per answer.
for which in base head; do
  for ((r = 1; r <= rounds; ++r)); do
    [ -f "$out/$which.track.$r.txt" ] || continue
    awk -F'|' '/^\| *[a-z0-9]/ && NF > 10 { row = $2 "/" $3 "/" $4; gsub(/ /, "", row);
                                            v = $(NF - 1); gsub(/ /, "", v);
                                            if (v ~ /^[0-9.e+]+$/) print row, v }' \
      "$out/$which.track.$r.txt"
  done > "$out/$which.track.rows"
done
awk '{ print $1 }' "$out/head.track.rows" | awk '!seen[$0]++' | while read -r row; do
  # A row the base's tables do not have (limits it could not declare) is no comparison.
  grep -q "^$row " "$out/base.track.rows" || continue
  b=$(awk -v k="$row" '$1 == k { print $2 }' "$out/base.track.rows" | median)
  h=$(awk -v k="$row" '$1 == k { print $2 }' "$out/head.track.rows" | median)
  echo "| $row | $b | $h | $(awk -v b="$b" -v h="$h" 'BEGIN { printf "%.2f", (b > 0) ? h / b : 0 }') |"
done

exec >&3
wait "$tee_pid"
[ "${IKD_BENCH_NO_DOCS:-0}" = 1 ] && exit 0
doc="${IKD_COST_DOC:-docs/cost-comparison.md}"
{
  echo "# Cost of the current tree against an earlier commit, side by side"
  echo
  prefix=""
  [ -n "${IKD_COST_HEAD_FLAGS:-}" ] && prefix+="IKD_COST_HEAD_FLAGS=\"$IKD_COST_HEAD_FLAGS\" "
  [ -n "${IKD_COST_KINDS:-}" ] && prefix+="IKD_COST_KINDS=\"$IKD_COST_KINDS\" "
  echo "Written by \`${prefix}bench/run_cost_comparison.sh $*\`; edits are overwritten by the next run."
  echo "Both builds run kind by kind back to back on one machine ($(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)), which goes first"
  echo "alternating; each figure is the median over the rounds. Timings are wall time of the planner or"
  echo "tracker alone (paths_bench's \"us per sample\" and Track's \"us per answer\"), never of"
  echo "the checker. Same scenarios, same options, same seeds for both builds."
  echo
  cat "$out/report.md"
} > "$doc"
echo "wrote $doc" >&2
