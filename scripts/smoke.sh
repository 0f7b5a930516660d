#!/usr/bin/env bash
# Local smoke run: builds trainvisor if needed, then runs README's smoke command
#   PYTHON_EXEC=/usr/bin/python3 trainvisor run --nproc-per-node 2 examples/ddp_example.py
# (two gloo workers on CPU) and prints its result. Exit status is trainvisor's.
# On a machine without an NVIDIA driver (no libcuda.so.1) the default preflight would refuse to
# start 2 workers on 0 GPUs (exit 69), so there it adds --preflight none and says so.
# BUILD_DIR (default build) picks the build directory.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
if [[ ! -f "$build/build.ninja" && ! -f "$build/Makefile" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" --target trainvisor

# Debian's python3 has torch 1.13; a python3 earlier on PATH may not.
export PYTHON_EXEC="${PYTHON_EXEC:-/usr/bin/python3}"
opts=()
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "smoke.sh: no NVIDIA driver (libcuda.so.1) here: adding --preflight none" >&2
  opts=(--preflight none)
fi
set -x
"$build/trainvisor" run "${opts[@]}" --nproc-per-node 2 "$root/examples/ddp_example.py"
