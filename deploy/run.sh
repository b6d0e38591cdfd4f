#!/usr/bin/env bash
# Set up a fresh Debian 12 machine, build the ikd server and run it in the foreground.
# Usage: deploy/run.sh [ikd flags...]   e.g. deploy/run.sh --listen=0.0.0.0:50051 --threads=4
# Defaults: --listen=127.0.0.1:50051, the model store in ${IKD_DATA_DIR:-var}/ikd-models.db.
# Env: IKD_BUILD_DIR (default: build), IKD_JOBS (default: 2), IKD_SKIP_APT=1 to skip apt-get.
# SIGTERM / SIGINT reach ikd directly (exec): health goes NOT_SERVING, calls drain, exit 0.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh

ikd_install_packages "${IKD_BASE_PACKAGES[@]}"
ikd_configure -DIKD_BUILD_TESTS=OFF -DIKD_BUILD_BENCH=OFF -DIKD_BUILD_SERVER=ON
cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS" --target ikd

data_dir="${IKD_DATA_DIR:-var}"
mkdir -p "$data_dir"
exec "$IKD_BUILD_DIR/server/ikd" --store="$data_dir/ikd-models.db" "$@"
