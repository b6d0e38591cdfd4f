# Shared by the bench/run_*_bench.sh scripts:
# whether a run rewrites its results section in docs/, and the rewrite itself.

# True for a run without options (a full run) or with IKD_BENCH_DOCS=1; false with
# IKD_BENCH_NO_DOCS=1. Pass the script's arguments.
ikd_bench_writes_docs() {
  local write=1
  [ $# -gt 0 ] && write="${IKD_BENCH_DOCS:-0}"
  [ "${IKD_BENCH_NO_DOCS:-0}" = 1 ] && write=0
  [ "$write" = 1 ]
}

# ikd_bench_write_section DOC MARKER RESULTS COMMAND: replaces what stands between
# "<!-- MARKER:begin -->" and "<!-- MARKER:end -->" in DOC by a line naming the date, the CPU,
# the commit and COMMAND, then the file RESULTS. "+ local changes" marks a tree that differs
# from the commit outside docs/ (what a run writes there does not change the figures).
ikd_bench_write_section() {
  local doc="$1" marker="$2" results="$3" command="$4"
  local cpu section
  cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
  section=$(mktemp)
  {
    echo "Run $(date -u +%Y-%m-%d) on ${cpu:-unknown CPU} ($(nproc) cores), commit" \
         "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- . ':(exclude)docs' 2>/dev/null || echo ' + local changes'):" \
         "\`$command\`"
    echo
    cat "$results"
  } > "$section"
  python3 - "$doc" "$marker" "$section" <<'PY'
import re, sys
path, marker, section = sys.argv[1:4]
doc = open(path).read()
body = open(section).read()
begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
if begin not in doc or end not in doc:
    sys.exit(f"{path} lacks the {marker} markers")
doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: begin + "\n" + body + end, doc, flags=re.S)
open(path, "w").write(doc)
PY
  rm -f "$section"
  echo "$doc updated"
}

# ikd_run_kdl_bench TARGET DOC MARKER SCRIPT ARGS...: what run_ik_bench.sh and
# run_robot_bench.sh share. Installs the packages (and Orocos KDL, the optional peer, unless
# IKD_SKIP_APT=1), builds TARGET in Release in ${IKD_BENCH_BUILD_DIR:-build-bench}, runs
# bench/<dir>/TARGET with ARGS and, for a full run, writes its output into DOC at MARKER.
ikd_run_kdl_bench() {
  local target="$1" doc="$2" marker="$3" script="$4"
  shift 4
  IKD_BUILD_DIR="${IKD_BENCH_BUILD_DIR:-build-bench}"
  ikd_install_packages "${IKD_BASE_PACKAGES[@]}"
  if [ "${IKD_SKIP_APT:-0}" != 1 ] &&
     ! dpkg-query -W -f='${Status}' liborocos-kdl-dev 2>/dev/null | grep -q "install ok installed"; then
    deploy/install-bench-peers.sh
    ikd_install_packages liborocos-kdl-dev  # in case the peer list lacks it
  fi
  IKD_BUILD_TYPE=Release ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON -DIKD_BUILD_SERVER=OFF
  cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target "$target"
  local work binary
  work=$(mktemp -d)
  binary=$(find "$IKD_BUILD_DIR/bench" -name "$target" -type f -perm -u+x | head -1)
  "$binary" "$@" | tee "$work/results.md"
  if ikd_bench_writes_docs "$@"; then
    ikd_bench_write_section "$doc" "$marker" "$work/results.md" "$script${*:+ $*}"
  fi
  rm -rf "$work"
}

# ikd_bench_build_with_server TARGET...: what the service benchmarks' scripts share. Installs
# the packages and builds TARGET... in Release, the server included, in $IKD_BUILD_DIR.
ikd_bench_build_with_server() {
  ikd_install_packages "${IKD_BASE_PACKAGES[@]}"
  IKD_BUILD_TYPE=Release ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=ON -DIKD_BUILD_SERVER=ON
  cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target "$@"
}
