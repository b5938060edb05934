#!/usr/bin/env bash
# Installs everything Trellis needs on a fresh Debian 12 machine (run as root).
# The list is the whole of DESIGN.md's dependencies, so later work need not touch it.
# Idempotent: when everything is present it does nothing and returns quickly.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config git clang-format
  # The compiler cache (cmake/compiler_cache.cmake): a clean clone rebuilds what an earlier
  # build of the same code compiled from ~/.cache/ccache.
  ccache
  libcli11-dev libtomlplusplus-dev libcpp-httplib-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev libsqlite3-dev sqlite3 libpqxx-dev postgresql
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler munge libmunge-dev
  iproute2 libssl-dev
  chromium chromium-driver
  clang libclang-rt-14-dev
  # A real Slurm client for the "Coming from Slurm" tests: snakemake 7.21's --slurm executor.
  snakemake
  # Real parallel programs (tests, `trellis bench mpi`): MPICH (PMI-1), Open MPI and the PMIx
  # server library the job shell loads for it (libpmix-dev and libhwloc-dev: the headers of what
  # the shell dlopens).
  mpich libmpich-dev openmpi-bin libopenmpi-dev libpmix-dev libhwloc-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js with npm builds the report's chart bundle; a machine may already have it from another
# source, in which case Debian's npm package would conflict with it.
if ! command -v npm >/dev/null 2>&1; then missing+=(nodejs npm); fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: missing packages: ${missing[*]}" >&2
    echo "bootstrap: run as root (or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The HTML reports inline Apache ECharts, pinned by web/package-lock.json; CMake embeds the
# installed bundle into the trellis binary. npm ci is skipped when the pinned version is present.
here="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$here/web/node_modules/echarts/dist/echarts.min.js"
if [ ! -f "$bundle" ] || ! grep -q '"version": "6.1.0"' "$here/web/node_modules/echarts/package.json"; then
  echo "bootstrap: npm ci in web/ (Apache ECharts for the HTML reports)"
  (cd "$here/web" && npm ci --no-audit --no-fund --loglevel=error)
fi
