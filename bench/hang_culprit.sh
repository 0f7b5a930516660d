#!/usr/bin/env bash
# The job-wide culprit of a hang and the user frame on a real machine (docs/supervision.md, "The
# culprit"): 1. a CUDA hang inside the script's own train_step (torch.cuda._sleep, then
# torch.cuda.synchronize), one GPU, --hang-timeout 15: the failure file must name train_step, with
# torch's synchronize as the innermost frame; 2. ROUNDS x 4 jobs of two trainvisor nodes of two
# ranks each on loopback with gloo, rank 3 in load_batch() or SIGSTOPped after the first
# all_reduce: prints, per job, how many of the two failure files name rank 3 on node 1.
#
# usage: bench/hang_culprit.sh [TRAINVISOR] [OUT_DIR]   (default: .device/trainvisor, $OUT or /tmp)
# needs: python3 with torch (PYTHON=...), a CUDA GPU for part 1.
set -uo pipefail
tv="$(realpath "${1:-.device/trainvisor}")"
out="${2:-${OUT:-/tmp}/hang_culprit}"
py="$(command -v "${PYTHON:-python3}")"
rounds="${ROUNDS:-2}"
rm -rf "$out" && mkdir -p "$out" && cd "$out" || exit 1
export PATH="$(dirname "$py"):$PATH" NCCL_NVLS_ENABLE=0
cat >cuda_hang.py <<'PY'
import torch

def warm_up():
    return float(torch.ones(1024, device="cuda").sum())

def train_step(step):
    torch.cuda._sleep(int(2e12))  # a kernel that outlasts the hang timeout
    torch.cuda.synchronize()

print("warm", warm_up(), flush=True)
for step in range(3):
    print(f"step {step}", flush=True)
    train_step(step)
PY
cat >gloo_culprit.py <<'PY'
import os, signal, time
import torch
import torch.distributed as dist

RANK = int(os.environ["RANK"])
MODE = os.environ["CULPRIT_MODE"]

def load_batch():
    while True:  # a batch that never comes
        time.sleep(0.05)

def step(t):
    dist.all_reduce(t)  # every other rank waits here for the culprit
    return t

dist.init_process_group("gloo")
t = torch.ones(4)
step(t)
print("first all_reduce done", flush=True)
if RANK == 3 and MODE == "elsewhere":
    load_batch()
elif RANK == 3 and MODE == "stopped":
    os.kill(os.getpid(), signal.SIGSTOP)
step(t)
PY
echo "== 1. CUDA hang in train_step, --hang-timeout 15"
start=$(date +%s)
"$tv" run --nproc-per-node 1 --max-restarts 0 --hang-timeout 15 --failure-file cuda_failure.txt \
  --log-dir cuda_logs cuda_hang.py >cuda.out 2>cuda.err
echo "exit $? after $(($(date +%s) - start)) s"
sed -n 1,6p cuda_failure.txt
echo "== 2. gloo culprit, 2 nodes x 2 ranks on loopback, $rounds round(s) of 4 jobs"
job() {  # mode index
  local d="g_$1_$2" mp=$((20000 + $2 * 10))
  mkdir -p "$d"
  for n in 0 1; do
    CULPRIT_MODE=$1 "$tv" run --preflight none --nnodes 2 --node-rank $n --nproc-per-node 2 \
      --master-addr 127.0.0.1 --master-port $mp --rdzv-port $((mp + 1)) --max-restarts 0 \
      --hang-timeout 8 --failure-file "$d/failure$n" gloo_culprit.py >"$d/out$n" 2>"$d/err$n" &
  done
  wait
  local ok=0
  for n in 0 1; do grep -q "^culprit: rank 3 on node 1 " "$d/failure$n" && ok=$((ok + 1)); done
  echo "$1 $2: $ok/2 $(grep -h '^culprit' "$d/failure0" | cut -c1-160)"
}
i=0
for _ in $(seq "$rounds"); do
  for mode in elsewhere stopped; do
    for _ in 1 2; do
      i=$((i + 1))
      job $mode $i &
    done
  done
  wait
done
