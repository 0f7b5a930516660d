#!/usr/bin/env bash
# Installs everything trainvisor needs to build and test, from Debian 12 packages only.
# Idempotent: packages already present are skipped by apt; safe to run again.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
  libboost1.81-all-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libfabric-dev libfabric-bin libssl-dev zlib1g-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-torch python3-pytest
  iproute2 util-linux procps time hyperfine
)

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
