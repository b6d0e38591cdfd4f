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
IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-svc}"

ikd_install_packages "${IKD_BASE_PACKAGES[@]}"

IKD_BUILD_TYPE=Release ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON -DIKD_BUILD_SERVER=ON
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target service_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$IKD_BUILD_DIR/bench/service/service_bench" "$@" | tee "$work/results.md"

write_docs=1
[ $# -gt 0 ] && write_docs="${IKD_BENCH_DOCS:-0}"
[ "${IKD_BENCH_NO_DOCS:-0}" = 1 ] && write_docs=0
[ "$write_docs" = 1 ] || exit 0

cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
{
  echo "Run $(date -u +%Y-%m-%d) on ${cpu:-unknown CPU} ($(nproc) cores), commit" \
       "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' + local changes'):" \
       "\`bench/run_service_bench.sh${*:+ $*}\`"
  echo
  cat "$work/results.md"
} > "$work/section.md"
python3 - "$work/section.md" <<'PY'
import re, sys
doc = open("docs/service-benchmark.md").read()
body = open(sys.argv[1]).read()
begin, end = "<!-- service-bench:begin -->", "<!-- service-bench:end -->"
if begin not in doc or end not in doc:
    sys.exit("docs/service-benchmark.md lacks the service-bench markers")
doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: begin + "\n" + body + end, doc, flags=re.S)
open("docs/service-benchmark.md", "w").write(doc)
PY
echo "docs/service-benchmark.md updated"
