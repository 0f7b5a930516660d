#!/usr/bin/env bash
# Builds the portable trainvisor binary: Release, spdlog/fmt header-only, Boost, libcrypto,
# libstdc++ and libgcc static, stripped. It needs nothing but glibc (>= 2.35) at run time.
# The Dockerfile's builder stage runs exactly this script; so does CI (scripts/test.sh).
#   scripts/build-portable.sh [BUILD_DIR=build-portable]      -> BUILD_DIR/trainvisor
# Env: TRAINVISOR_WERROR=ON to fail on warnings (CI), CC/CXX to pick the compiler (gcc, clang),
#      JOBS (default: nproc).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/build-portable}"
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINVISOR_PORTABLE=ON \
  -DTRAINVISOR_WERROR="${TRAINVISOR_WERROR:-OFF}" -DBUILD_TESTING=OFF -DTRAINVISOR_BENCH=OFF \
  >/dev/null
cmake --build "$dir" --target trainvisor -j "${JOBS:-$(nproc)}"
echo "portable binary: $dir/trainvisor ($(stat -c %s "$dir/trainvisor") bytes)"
