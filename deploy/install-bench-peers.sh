#!/usr/bin/env bash
# Installs the benchmark-only peer libraries and the plotting tool (Debian 12, as root or with
# sudo): GROMACS (libgromacs-dev: double-precision libgromacs_d with the SHAKE kernel), OpenMM
# (libopenmm-dev: CCMA), Orocos KDL (liborocos-kdl-dev: IK peer) and gnuplot-nox (docs/img plots). The build and the tests never need them.
# Usage: deploy/install-bench-peers.sh
set -euo pipefail
packages=(libgromacs-dev libopenmm-dev liborocos-kdl-dev gnuplot-nox)
sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${packages[@]}"
