#!/usr/bin/env bash
# The whole test suite, as CI runs it: install dependencies, then
#   0. the portable Release binary (GCC and clang, -Werror) and its portability check,
#   1. the normal build and every test (unit + integration against the real binary),
#   1b. the container tests against an image of a debootstrap root + the portable binary + the
#       helpers, built once per run (scripts/test-image.sh; one "skipped:" line where the host
#       has no root, podman, debootstrap, mirror or working container runtime),
#   1c. with TV_CONTAINER_TESTS=1: the image built from the Dockerfile with no registry, and the
#       container tests (scripts/container-test.sh),
#   2. the same build with ASan + UBSan: the unit suites, the checks and the PID-1 integration suites,
#   3. every libFuzzer harness for a bounded time (FUZZ_SECONDS each, default 30).
# Usage: scripts/test.sh [--quick]   (--quick: only step 1)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

jobs=$(nproc)
quick=0
[ "${1:-}" = "--quick" ] && quick=1
if ((!quick)); then
  echo "== portable Release build (what the Dockerfile builds), GCC and clang, warnings as errors"
  TRAINVISOR_WERROR=ON bash scripts/build-portable.sh build-portable
  bash scripts/check-portable.sh build-portable/trainvisor
  CC=clang CXX=clang++ TRAINVISOR_WERROR=ON bash scripts/build-portable.sh build-portable-clang
  bash scripts/check-portable.sh build-portable-clang/trainvisor
fi

echo "== normal build"
bash scripts/build.sh build
(cd build && TV_PORTABLE_BIN="$PWD/../build-portable/trainvisor" ctest --output-on-failure -j "$jobs" --timeout 900)
((quick)) && exit 0

echo "== container tests, trainvisor as PID 1: debootstrap root + the portable binary (one image per run)"
bash scripts/test-image.sh build-portable/trainvisor build/helpers

echo "== image from the Dockerfile (no registry) and container tests, trainvisor as PID 1"
# Opt-in (TV_CONTAINER_TESTS=1): the image's builder compiles the whole binary again with no
# cache (~30 min on 2 busy cores), which would take CI too close to its 90-minute limit.
if [ "${TV_CONTAINER_TESTS:-0}" = 1 ] && [ "$(id -u)" -eq 0 ] && command -v podman >/dev/null &&
   command -v debootstrap >/dev/null; then
  bash scripts/container-test.sh
else
  echo "skipped: TV_CONTAINER_TESTS=1 bash scripts/test.sh runs them (needs root, podman, debootstrap;"
  echo "         or bash scripts/container-test.sh alone, docs/deployment.md)"
fi

echo "== ASan + UBSan build"
# Under the sanitizers: every unit suite and check, and the integration suites that drive PID 1's
# signal, spawn and reaping paths; the whole integration and scenario suites run against the
# normal build above (all of them under ASan took CI past its 90 minutes on 2 cores).
bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DTRAINVISOR_SANITIZE=ON -DTRAINVISOR_BENCH=OFF
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   ctest --output-on-failure -j "$jobs" --timeout 900 -E "${TV_ASAN_EXCLUDE:-^(scenario|integration)[.]}")
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   ctest --output-on-failure -j "$jobs" --timeout 900 \
   -R '^integration[.]test_(pid1_signals|command_signals|stacks_phases|leftovers|root_cause_order)$')

echo "== fuzzers"
# 30 s per harness (9 harnesses: under 5 minutes beside their build), seeded with the tests' data.
bash scripts/run-fuzzers.sh "${FUZZ_SECONDS:-30}"
