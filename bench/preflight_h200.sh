#!/bin/bash
# The preflight on a GPU machine (used on 2 H200s; see docs/health.md for the figures).
# Run from the repository root with the binary and its non-glibc libraries in .device/:
#   bench/preflight_h200.sh OUTDIR
# Writes OUTDIR/{version.txt,p2p.json,socket-efa.json,system-nccl.json,logs.tar.gz}.
set -u
out=${1:?usage: bench/preflight_h200.sh OUTDIR}
mkdir -p "$out"
# NVLink multicast stays off on shared hosts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tv=$PWD/.device/trainvisor
logs=$(mktemp -d)
system_nccl=$(ls /usr/lib/x86_64-linux-gnu/libnccl.so.2 2>/dev/null || ldconfig -p | awk '/libnccl.so.2/{print $NF; exit}')

nvidia-smi -L
"$tv" version | tee "$out/version.txt"

run() {  # name, args...
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$tv" preflight --json --log-dir "$logs/$name" "$@" > "$out/$name.json"
  local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name: exit $rc, wall $(python3 -c "print(round($t1 - $t0, 2))") s"
  python3 - "$out/$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["checks"]:
    print(f'  {c["name"]:17} {c["outcome"]:4} {c["message"][:300]}')
print("  passed:", r["passed"], "seconds:", round(r["seconds"], 2))
PY
}

run p2p
run socket-efa --single-node-net --require-transport efa
run system-nccl --nccl-lib "$system_nccl"
for f in "$logs"/*/nccl-rank0.log; do
  "$tv" preflight --nccl-log "$f" --require-transport any | head -1
done
tar -C "$logs" -czf "$out/logs.tar.gz" .
