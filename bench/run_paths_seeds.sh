#!/usr/bin/env bash
# Runs bench/paths over many seeds and writes, per section, kind and solver, on how many seeds
# its targets were met and what failed on the others (docs/paths-seeds.md). The per-seed
# outputs are kept beside it in $IKD_SEEDS_DIR for a closer look.
# Usage: bench/run_paths_seeds.sh FIRST LAST [paths_bench options, e.g. --norobots]
# Env:   IKD_BUILD_DIR (default: build-bench, built as run_paths_bench.sh builds it),
#        IKD_SKIP_APT=1, IKD_SEEDS_DOC (default: docs/paths-seeds.md),
#        IKD_SEEDS_DIR (default: a temporary directory, removed at the end),
#        IKD_SEEDS_ONLY="KIND KIND ..." (each seed runs these kinds one by one, --only KIND,
#        instead of every kind at once), IKD_SEEDS_JOBS (default 1: seeds run at once; each is
#        independent, and the doc reports targets met, never timings), IKD_SEEDS_KEEP=1 (a seed
#        whose output is already in IKD_SEEDS_DIR is not run again: an interrupted run resumed
#        by the same build).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 FIRST LAST [paths_bench options]" >&2; exit 2; }
first=$1 last=$2
shift 2
options=("$@")
doc="${IKD_SEEDS_DOC:-docs/paths-seeds.md}"
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
dir="${IKD_SEEDS_DIR:-}"
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
IKD_BENCH_BUILD_ONLY=1 bash bench/run_paths_bench.sh
binary="${IKD_BUILD_DIR:-build-bench}/bench/paths/paths_bench"
[ -x "$binary" ] || { echo "no $binary" >&2; exit 1; }
read -r -a only <<<"${IKD_SEEDS_ONLY:-}"
run_seed() {
  local seed=$1 kind
  if [ "${IKD_SEEDS_KEEP:-0}" = 1 ] && [ -s "$dir/seed$seed.md" ]; then
    echo "seed $seed kept" >&2
    return
  fi
  echo "seed $seed" >&2
  if [ ${#only[@]} -eq 0 ]; then
    "$binary" --seed "$seed" "${options[@]}" >"$dir/seed$seed.md" 2>/dev/null
  else
    for kind in "${only[@]}"; do "$binary" --seed "$seed" --only "$kind" "${options[@]}" 2>/dev/null; done \
      >"$dir/seed$seed.md"
  fi
}
for seed in $(seq "$first" "$last"); do
  while [ "$(jobs -rp | wc -l)" -ge "${IKD_SEEDS_JOBS:-1}" ]; do wait -n; done
  run_seed "$seed" &
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n; done
command="bench/run_paths_seeds.sh $first $last $*"
[ ${#only[@]} -eq 0 ] || command="IKD_SEEDS_ONLY=\"${only[*]}\" $command"

# Target lines ("- KIND, SOLVER: MET" or "...: NOT MET (why)"), by section.
summary=$(for seed in $(seq "$first" "$last"); do
  awk -v seed="$seed" '
    /^## Chain arms/ { section = "chain arms, declared limits" }
    /^### Without declared limits/ { section = "chain arms, no limits declared" }
    /^## Industrial arms/ { section = "industrial arms" }
    /^## / && !/^## (Chain|Industrial) arms/ { section = "" }
    section != "" && /^- [a-z0-9-]+, [A-Za-z]+: (MET|NOT MET)/ {
      line = substr($0, 3); colon = index(line, ": ")
      print section "\t" substr(line, 1, colon - 1) "\t" seed "\t" substr(line, colon + 2)
    }' "$dir/seed$seed.md"
done | awk -F'\t' '
  { key = $1 " | " $2; if (!(key in runs)) order[++n] = key; runs[key]++
    if ($4 == "MET") met[key]++; else failed[key] = failed[key] sprintf("<br>seed %s: %s", $3, $4) }
  END { for (i = 1; i <= n; ++i) { k = order[i]; split(k, part, " \\| ")
          printf "| %s | %s | %d of %d |%s |\n", part[1], part[2], met[k] + 0, runs[k], failed[k] } }')

{
  echo "# bench/paths over seeds $first-$last"
  echo
  echo "Written by \`bench/run_paths_seeds.sh\`; edits are overwritten by the next run. Each seed"
  echo "is a full \`paths_bench\` run (docs/paths-benchmark.md explains the scenarios, the"
  echo "checker and the targets); this table says on how many seeds each row met its targets"
  echo "and, for the others, which targets it missed."
  echo
  echo "Commit \`$commit\`, run $(date -u +%Y-%m-%d) on $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores)."
  echo "Command: \`$command\`"
  echo
  echo "| section | kind, solver | seeds met | what failed |"
  echo "|---|---|---:|---|"
  echo "$summary"
} >"$doc"
echo "wrote $doc" >&2
