#!/usr/bin/env bash
# Evidence on hang on a real GPU (docs/supervision.md, "Evidence on hang"): a CUDA job whose rank
# hangs in a kernel wait (torch.cuda._sleep in a loop inside tv_cuda_hang_here), under
# `trainvisor run --hang-timeout 5`; prints the failure file (the stacks trainvisor took before it
# stopped the workers) and every rank's stacks file. With 2 GPUs or more it also forces an NCCL
# watchdog timeout (rank 1 skips an all_reduce; a 10 s process-group timeout) and lists the flight
# recorder's dump files that torch wrote into the attempt's rank directories.
#
# usage: bench/cuda_hang_stacks.sh [TRAINVISOR] [OUT_DIR]   (default: .device/trainvisor, $OUT or /tmp)
set -uo pipefail
tv="${1:-.device/trainvisor}"
out="${2:-${OUT:-/tmp}/cuda_hang}"
py="${PYTHON:-python3}"
rm -rf "$out" && mkdir -p "$out"
cat >"$out/cuda_hang.py" <<'PY'
import os, torch
def tv_cuda_hang_here():
    while True:  # the host thread waits on the GPU: a kernel that spins ~1 s each time
        torch.cuda._sleep(1_000_000_000)
        torch.cuda.synchronize()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
print("cuda up on", torch.cuda.get_device_name(), flush=True)
tv_cuda_hang_here()
PY
cat >"$out/nccl_timeout.py" <<'PY'
import datetime, os, time, torch, torch.distributed as dist
rank = int(os.environ["RANK"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=10))
x = torch.ones(1 << 20, device="cuda")
for step in range(3):
    dist.all_reduce(x)
torch.cuda.synchronize()
print("warm", flush=True)
def tv_skip_the_collective():
    time.sleep(120)
if rank == 1:
    tv_skip_the_collective()  # rank 1 never enters the 4th all_reduce
dist.all_reduce(x)
torch.cuda.synchronize()
PY
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "== $gpus GPU(s); $("$tv" version 2>&1 | head -1)"
echo "== 1 rank hung in a CUDA kernel wait, --hang-timeout 5"
/usr/bin/time -f "wall %e s" "$tv" run --preflight none --nproc-per-node 1 --hang-timeout 5 \
  --max-restarts 0 --log-dir "$out/logs1" --failure-file "$out/failure1" --grace-period 5 \
  --warm-standby off "$out/cuda_hang.py" 2>&1 | tail -12
echo "exit ${PIPESTATUS[0]}"
echo "== failure file"; cat "$out/failure1"
echo "== stacks file"; cat "$out/logs1/attempt_0/rank_0/stacks.txt"
if [ "$gpus" -ge 2 ]; then
  echo "== 2 ranks, NCCL watchdog timeout (10 s), --hang-timeout 60"
  "$tv" run --preflight none --nproc-per-node 2 --hang-timeout 60 --max-restarts 0 \
    --log-dir "$out/logs2" --failure-file "$out/failure2" --grace-period 5 --warm-standby off \
    "$out/nccl_timeout.py" 2>&1 | grep -v "^\[rank" | tail -15
  echo "== failure file"; cat "$out/failure2"
  echo "== flight recorder dumps"; ls -la "$out"/logs2/attempt_0/rank_*/nccl_trace_rank_* 2>&1
  for f in "$out"/logs2/attempt_0/rank_*/nccl_trace_rank_*; do
    [ -f "$f" ] && "$py" - "$f" <<'PY'
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
print(sys.argv[1], "version", d.get("version"), "entries", len(d.get("entries", [])))
for e in d.get("entries", [])[-3:]:
    print("  seq", e.get("collective_seq_id"), e.get("profiling_name"), e.get("state"))
PY
  done
fi
