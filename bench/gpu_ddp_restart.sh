#!/usr/bin/env bash
# GPU restart figures: a DDP/NCCL job (bench/gpu_ddp_restart.py) whose rank 1 is SIGKILLed mid-run,
# under `trainvisor run --nproc-per-node auto` and under torchrun --max-restarts 1.
#   bench/gpu_ddp_restart.sh TRAINVISOR PYTHON OUTDIR
# Prints launch time (launcher start -> every worker's first line), restart latency (kill ->
# last replacement's first line; "ready" = after NCCL init) and steps lost.
set -uo pipefail
tv=$1 py=$2 out=$3
here="$(cd "$(dirname "$0")" && pwd)"
# NVLink multicast stays off (shared GPUs), also for the workers.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$out"

run_one() {  # name, command...
  local name=$1; shift
  rm -rf "$out/ckpt-$name"; mkdir -p "$out/ckpt-$name"
  local t0; t0=$(date +%s.%N)
  "$@" > "$out/$name.log" 2>&1
  echo "exit=$? launcher_start=$t0" >> "$out/$name.log"
}

run_one trainvisor env PYTHON_EXEC="$py" "$tv" run --nproc-per-node auto --max-restarts 1 \
  --checkpoint-dir "$out/ckpt-trainvisor" --resume-arg "--resume={}" \
  "$here/gpu_ddp_restart.py" "$out/ckpt-trainvisor" 400
run_one torchrun "$py" -m torch.distributed.run --standalone --nproc_per_node 2 --max-restarts 1 --monitor-interval 0.1 \
  "$here/gpu_ddp_restart.py" "$out/ckpt-torchrun" 400 --self-resume

"$py" - "$out" <<'PY'
import re, sys, pathlib
out = pathlib.Path(sys.argv[1])
for name in ("trainvisor", "torchrun"):
    text = (out / f"{name}.log").read_text()
    t0 = float(re.search(r"launcher_start=([\d.]+)", text).group(1))
    starts = [(int(m[0]), int(m[1]), float(m[2]), float(m[3]), int(m[4])) for m in
              re.findall(r"START rank=(\d+) rc=(\d+) t0=([\d.]+) ready=([\d.]+) resume_step=(\d+)", text)]
    kill = re.search(r"KILL t=([\d.]+) step=(\d+)", text)
    first = [s for s in starts if s[1] == 0]
    second = [s for s in starts if s[1] == 1]
    exitc = re.search(r"exit=(\d+)", text).group(1)
    print(f"{name}: exit {exitc}, workers {len(first)}")
    if first:
        print(f"  launch: every worker started {max(s[2] for s in first) - t0:.3f} s, NCCL ready {max(s[3] for s in first) - t0:.3f} s after the launcher")
    if kill and second:
        k = float(kill.group(1))
        print(f"  restart: kill -> every replacement started {max(s[2] for s in second) - k:.3f} s, NCCL ready {max(s[3] for s in second) - k:.3f} s")
        print(f"  steps lost: killed at {kill.group(2)}, resumed at {second[0][4]} -> {int(kill.group(2)) - second[0][4]}")
PY
