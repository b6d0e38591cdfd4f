#!/usr/bin/env bash
# Set up a fresh Debian 12 machine, build ikd and run every test through ctest.
# Usage: deploy/test.sh            (as root or with sudo available for apt-get)
# Env:   IKD_BUILD_DIR (default: build), IKD_JOBS (default: 2), IKD_SKIP_APT=1 to skip apt.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/common.sh

ikd_install_packages "${IKD_TEST_PACKAGES[@]}"
ikd_configure -DIKD_BUILD_TESTS=ON -DIKD_BUILD_BENCH=ON
ikd_build
cd "$IKD_BUILD_DIR"
ctest --output-on-failure --timeout 900 -j "$IKD_JOBS"
