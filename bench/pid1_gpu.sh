#!/bin/bash
# PID 1 on a real GPU machine (issue #11): with real libcuda and libnccl present,
#   1. trainvisor's own process never maps a vendor library while the preflight's children and the
#      workers do (read from /proc/PID/maps during a real 2-GPU DDP run);
#   2. SIGTERM at many moments of `run --preflight full` (real CUDA and NCCL probe children) ends
#      it with 143, as PID 1 of a fresh PID namespace when `unshare` allows it, and the time from
#      the signal to the exit.
# Run from the repository root with the binary (and any non-glibc libraries) in build-portable/:
#   bench/pid1_gpu.sh [TRAINVISOR_BIN]
set -u
tv=${1:-$PWD/build-portable/trainvisor}
# NVLink multicast stays off on shared hosts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=$(command -v python3)
cat > "$work/ddp.py" <<'PY'
import os, sys, time
import torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank {r} all-reduce ok {x[0].item()}", flush=True)
if r == 0:
    open(sys.argv[1], "w").write("up")
time.sleep(float(sys.argv[2]))
dist.destroy_process_group()
PY

vendor='libcuda\.so|libnccl|libfabric|libcudart'
maps_of() { grep -E "$vendor" "/proc/$1/maps" 2>/dev/null | awk '{print $6}' | sort -u; }

echo "== 1. vendor libraries in trainvisor's own process during a 2-GPU DDP run (--preflight full)"
"$tv" run --preflight full --nproc-per-node 2 --log-dir "$work/logs" -- "$py" "$work/ddp.py" \
  "$work/up" 6 > "$work/run.log" 2>&1 &
tvpid=$!
seen_tv=""
seen_workers=""
for _ in $(seq 1 600); do  # sample every 50 ms until the workers are up (max 30 s)
  seen_tv+=$(maps_of "$tvpid")
  [ -e "$work/up" ] && break
  sleep 0.05
done
for c in $(pgrep -P "$tvpid"); do seen_workers+="$(maps_of "$c") "; done
seen_tv+=$(maps_of "$tvpid")
wait "$tvpid"
rc=$?
echo "run exit $rc"
grep -E "preflight|all-reduce ok" "$work/run.log" | head -8
echo "trainvisor pid $tvpid mapped: ${seen_tv:-nothing of $vendor}"
echo "its workers mapped: $(echo "$seen_workers" | tr ' ' '\n' | sort -u | xargs -n1 basename 2>/dev/null | tr '\n' ' ')"

echo "== 2. SIGTERM at many moments of run --preflight full (real CUDA + NCCL probe children)"
ns=()
if unshare --pid --fork --mount-proc true 2>/dev/null; then ns=(unshare --pid --fork --mount-proc); fi
echo "as PID 1 of a new PID namespace: $([ ${#ns[@]} -gt 0 ] && echo yes || echo "no (unshare refused)")"
printf '%-8s %-6s %-14s %s\n' delay_s exit term_to_exit_s "phase logged"
for d in 0.02 0.1 0.3 0.6 1.0 1.5 2.0 3.0 4.0 6.0; do
  rm -f "$work/up"
  "${ns[@]}" "$tv" run --preflight full --nproc-per-node 2 --grace-period 5 -- "$py" "$work/ddp.py" \
    "$work/up" 30 > "$work/sweep.log" 2>&1 &
  pid=$!
  sleep "$d"
  # Under unshare --fork the signal goes to trainvisor (PID 1 inside), not to unshare, which
  # ignores SIGTERM and waits for its child.
  target=$pid
  if [ ${#ns[@]} -gt 0 ]; then
    for _ in $(seq 1 100); do target=$(pgrep -P "$pid" | head -1); [ -n "$target" ] && break; sleep 0.01; done
  fi
  t0=$(date +%s.%N)
  kill -TERM "${target:-$pid}"
  wait "$pid"
  rc=$?
  t1=$(date +%s.%N)
  phase=$(grep -oE "received SIG[A-Z]+ during [a-z (-]+|received SIG[A-Z]+: [a-z ]+" "$work/sweep.log" | head -1)
  printf '%-8s %-6s %-14s %s\n' "$d" "$rc" "$(python3 -c "print(round($t1 - $t0, 3))")" "${phase:-?}"
  sleep 0.5
  leftover=$(pgrep -f "$work/ddp.py" | wc -l)
  if [ "$leftover" -gt 0 ]; then
    echo "   $leftover worker process(es) left over"
    pkill -9 -f "$work/ddp.py"
  fi
done
