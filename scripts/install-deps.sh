#!/usr/bin/env bash
# Installs everything trainvisor needs to build and test, from Debian 12 packages only.
# Idempotent: packages already present are skipped by apt; safe to run again.
#   scripts/install-deps.sh              build + test (CI, development)
#   scripts/install-deps.sh --build-only only what the portable binary is built from (the
#                                        Dockerfile's builder stage)
set -euo pipefail

build_packages=(
  g++ cmake ninja-build binutils ccache
  libboost1.81-dev libboost-filesystem1.81-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libfabric-dev libssl-dev zlib1g-dev
)
test_packages=(
  build-essential pkg-config clang clang-format libclang-rt-14-dev libboost1.81-all-dev
  libfabric-bin googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-torch python3-pytest python3-yaml python3-jsonschema python3-botocore
  iproute2 util-linux procps time hyperfine strace e2fsprogs
  podman buildah runc debootstrap
  slurm-wlm munge  # tests/integration/test_slurm.py: a real Slurm cluster (scripts/slurm-cluster.sh)
  prometheus  # promtool: tests/integration/test_observability.py lints the scraped /metrics
)

packages=("${build_packages[@]}")
[ "${1:-}" = "--build-only" ] || packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
