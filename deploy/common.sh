# Shared by deploy/run.sh and deploy/test.sh: Debian packages, configure, build.
IKD_BUILD_DIR="${IKD_BUILD_DIR:-build}"
IKD_JOBS="${IKD_JOBS:-2}"
# ccache keys on absolute paths unless told the tree's root: with it, clones in other
# directories (CI's clean clone) reuse each other's objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# Debug builds (-g) also hash the working directory unless told not to; without this every clone
# misses (only the debug info's compilation directory differs, which nothing here reads).
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
# The test stages keep four builds (plain, ASan, TSan, fuzz) warm: room for all of them.
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"
IKD_BASE_PACKAGES=(build-essential cmake ccache pkg-config libeigen3-dev libabsl-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto libsqlite3-dev
  golang-github-gogo-googleapis-dev liburdfdom-dev libpqxx-dev
  prometheus-cpp-dev)
# openssl: security_test makes its TLS certificates at run time; postgresql: the PostgreSQL
# store and replicas tests start a real server; libyaml-cpp-dev: the deploy manifests test.
IKD_TEST_PACKAGES=("${IKD_BASE_PACKAGES[@]}" libgtest-dev libgmock-dev libbenchmark-dev
  openssl postgresql libyaml-cpp-dev
  python3-grpcio python3-protobuf python3-numpy  # clients/python and its test
  clang libclang-rt-14-dev)  # clang + libFuzzer runtime: tests/fuzz (IKD_BUILD_FUZZERS)

ikd_install_packages() {
  [ "${IKD_SKIP_APT:-0}" = 1 ] && return 0
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  echo "ikd: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
}

ikd_configure() {
  cmake -S . -B "$IKD_BUILD_DIR" -DCMAKE_BUILD_TYPE="${IKD_BUILD_TYPE:-RelWithDebInfo}" "$@"
}

ikd_build() {
  cmake --build "$IKD_BUILD_DIR" -j "$IKD_JOBS"
}
