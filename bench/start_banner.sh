#!/bin/bash
# What the start banner's GPU line costs at start: the wall time of `trainvisor run` of a worker
# that exits at once (`/bin/true`, one worker), N runs each (default 30), for two binaries side by
# side (BASE: one built before the GPU line, e.g. from main; NEW: this tree's), with
# `--preflight none` (the banner's own `__query gpu-health` child, where the node has a GPU device)
# and `--preflight basic` (the banner reuses the preflight's reading). Prints the median and the
# mean per mode and binary, and NEW's gpus line. On a GPU machine it also compares the banner's
# UUIDs with `nvidia-smi -L`.
#   bench/start_banner.sh BASE_BINARY NEW_BINARY [N]
set -u
base=${1:?usage: bench/start_banner.sh BASE_BINARY NEW_BINARY [N]}
new=${2:?usage: bench/start_banner.sh BASE_BINARY NEW_BINARY [N]}
n=${3:-30}
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
once() {  # BINARY MODE: one wall time in microseconds
  local t0 t1
  t0=$(date +%s%N)
  "$1" run --preflight "$2" --gpu-health off --nproc-per-node 1 --no-python -- /bin/true \
    2>/dev/null || echo "exit $? ($1 $2)" >&2
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000))
}
stats() {  # median and mean of microseconds on stdin, in ms
  sort -n | awk '{v[NR] = $1; s += $1} END {printf "median %.1f ms, mean %.1f ms (%d runs)", \
    v[int((NR + 1) / 2)] / 1000, s / NR / 1000, NR}'
}
tmp=$(mktemp -d)
for mode in none basic; do
  once "$base" "$mode" >/dev/null && once "$new" "$mode" >/dev/null  # warm the page cache
  for _ in $(seq "$n"); do  # interleaved, so that the machine's load falls on both alike
    once "$base" "$mode" >>"$tmp/base.$mode"
    once "$new" "$mode" >>"$tmp/new.$mode"
  done
  echo "--preflight $mode  base $(stats <"$tmp/base.$mode")  ($base)"
  echo "--preflight $mode  new  $(stats <"$tmp/new.$mode")  ($new)"
done
rm -r "$tmp"
line=$("$new" run --preflight none --gpu-health off --nproc-per-node 1 --no-python -- /bin/true \
  2>&1 | grep "start: gpus:")
echo "$line"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L
  for uuid in $(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); do
    case "$line" in *"$uuid"*) echo "GPU 0's UUID $uuid: in the banner" ;;
      *) echo "GPU 0's UUID $uuid: NOT in the banner" ;; esac
  done
fi
