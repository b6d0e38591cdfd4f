#!/usr/bin/env bash
# Set up a fresh Debian 12 machine, build the ikd server and its clients (ikctl, mock_arm), and
# run ikd in the foreground. On the first start (no store file yet) the demo models of
# deploy/models/ are loaded with ikctl once the health check answers: NAME.arm.json becomes
# arms/NAME, NAME.scene.json scenes/NAME (ones that already exist are left as they are).
# Usage: deploy/run.sh [ikd flags...]   e.g. deploy/run.sh --listen=0.0.0.0:50051 --threads=4
# Defaults: --listen=127.0.0.1:50051, the model store in ${IKD_DATA_DIR:-var}/ikd-models.db.
# Env: IKD_BUILD_DIR (default: build), IKD_JOBS (default: 2), IKD_SKIP_APT=1 to skip apt-get,
#      IKD_LOAD_DEMO=0 never loads the demo models, 1 loads them even if the store exists.
# SIGTERM / SIGINT are forwarded to ikd: health goes NOT_SERVING, calls drain, exit 0.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh

ikd_install_packages "${IKD_BASE_PACKAGES[@]}"
ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=OFF -DIKD_BUILD_SERVER=ON
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target ikd ikctl mock_arm

data_dir="${IKD_DATA_DIR:-var}"
mkdir -p "$data_dir"
store="$data_dir/ikd-models.db"
listen="127.0.0.1:50051"
# The last --store / --listen given wins, as in ikd's own flag parsing.
for arg in "$@"; do
  case "$arg" in
    --store=*) store="${arg#--store=}" ;;
    --listen=*) listen="${arg#--listen=}" ;;
  esac
done
first_start=0
[ -e "$store" ] || first_start=1

# host:port to reach the server from here: a wildcard listen address is reached on loopback.
client_address() {
  local host="${listen%:*}" port="${listen##*:}"
  case "$host" in
    0.0.0.0 | "[::]" | "" | "*") host=127.0.0.1 ;;
  esac
  echo "$host:$port"
}

# Creates every deploy/models/*.{arm,scene}.json and the industrial arm of every
# deploy/models/*.urdf (base_link to ee_link); ALREADY_EXISTS (exit 1 with that code) is fine.
load_demo_models() {
  local ikctl=("$IKD_BUILD_DIR/clients/ikctl" --server="$(client_address)" --timeout=10s)
  "${ikctl[@]}" health --wait_for_ready --timeout=30s >/dev/null || {
    echo "ikd: health check did not answer; demo models not loaded" >&2
    return 0
  }
  local file kind id output
  for file in deploy/models/*.json deploy/models/*.urdf; do
    [ -e "$file" ] || continue
    local create=(create)
    case "$file" in
      *.urdf) kind=arms; id="$(basename "$file" .urdf)"
              create=(import-urdf --base_link=base_link --tip_link=ee_link) ;;
      *.arm.json) kind=arms; id="$(basename "$file" .arm.json)" ;;
      *.scene.json) kind=scenes; id="$(basename "$file" .scene.json)" ;;
      *) echo "ikd: skipping $file (not NAME.arm.json, NAME.scene.json or NAME.urdf)" >&2; continue ;;
    esac
    if output="$("${ikctl[@]}" "$kind" "${create[0]}" "$id" "$file" "${create[@]:1}" --format=table 2>&1)"; then
      echo "ikd: loaded $kind/$id from $file"
    elif grep -q ALREADY_EXISTS <<<"$output"; then
      echo "ikd: $kind/$id already exists"
    else
      echo "ikd: could not load $file: $output" >&2
    fi
  done
  print_quick_start
}

print_quick_start() {
  local ikctl="$IKD_BUILD_DIR/clients/ikctl --server=$(client_address)"
  cat <<EOF
ikd: serving on $(client_address). Try:
  $ikctl health
  $ikctl arms list
  $ikctl trajectory --arm=planar7 --scene=pillars --line=1.0,0.45,0.3:1.0,-0.45,0.3 \\
      --duration=2 --period=0.02 --svg=sweep.svg
  $ikctl solve --arm=spatial6 --scene=pillars --target=0.5,0.2,0.6
  $IKD_BUILD_DIR/clients/mock_arm --server=$(client_address) --arm=planar7 --scene=pillars \\
      --path=circle --center=0.8,0,0.3 --radius=0.3 --duration=4
EOF
}

"$IKD_BUILD_DIR/server/ikd" --store="$store" "$@" &
ikd_pid=$!
trap 'kill -TERM "$ikd_pid" 2>/dev/null || true' TERM INT

# The loader runs beside ikd so that a signal reaches ikd at once, even while it waits.
loader_pid=
if [ "${IKD_LOAD_DEMO:-$first_start}" = 1 ]; then
  load_demo_models &
  loader_pid=$!
fi

# `wait` returns early when a trapped signal arrives; wait again until ikd has really exited.
while true; do
  status=0
  wait "$ikd_pid" || status=$?
  kill -0 "$ikd_pid" 2>/dev/null || break
done
if [ -n "$loader_pid" ]; then kill "$loader_pid" 2>/dev/null || true; fi
exit "$status"
