#!/usr/bin/env bash
# Local smoke run: builds trainvisor if needed, then runs README's smoke command
#   PYTHON_EXEC=/usr/bin/python3 trainvisor run --nproc-per-node 2 examples/ddp_example.py
# (two gloo workers on CPU) and prints its result. Exit status is trainvisor's.
# The default (basic) preflight runs too: on a machine without GPUs it reports that and passes,
# since CPU (gloo) workers need none.
# BUILD_DIR (default build) picks the build directory. The run is bounded on any machine: the
# example leaves without gloo's teardown (examples/ddp_example.py: leave), and SMOKE_TIMEOUT
# seconds (default 300) after the start `timeout` sends trainvisor SIGTERM (it stops the workers
# and exits 143), SIGKILL 30 s later.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
if [[ ! -f "$build/build.ninja" && ! -f "$build/Makefile" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" --target trainvisor

# Debian's python3 has torch 1.13; a python3 earlier on PATH may not.
export PYTHON_EXEC="${PYTHON_EXEC:-/usr/bin/python3}"
set -x
timeout --kill-after=30 "${SMOKE_TIMEOUT:-300}" \
  "$build/trainvisor" run --nproc-per-node 2 "$root/examples/ddp_example.py"
