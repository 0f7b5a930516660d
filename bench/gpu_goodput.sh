#!/usr/bin/env bash
# Goodput of a real GPU job (docs/observability.md): the DDP/NCCL job of bench/gpu_ddp_restart.py
# (rank 1 SIGKILLs itself at step 230 on the first attempt; rank 0 saves every 50 steps and prints
# rsl_rl's "Learning iteration N/TOTAL" every 10) under
#   trainvisor run --nproc-per-node auto --max-restarts 1 --checkpoint-dir D --resume-arg --resume={}
#     --metrics-port P --metrics-address 127.0.0.1 --progress-regex auto --summary-file OUT/summary.json
# while a scraper saves /metrics 10 times a second. Writes OUT/run.log (trainvisor's output with
# the goodput table), OUT/summary.json, OUT/last.prom (the last scrape before the exit),
# OUT/promtool.txt, and prints the figures to read: restarts (expect 1), lost steps (expect the
# step printed last before the kill minus 200), goodput, badput by cause, advised interval.
#   bench/gpu_goodput.sh TRAINVISOR PYTHON OUTDIR [TOTAL_STEPS=400]
set -uo pipefail
tv=$1 py=$2 out=$3 total=${4:-400}
here="$(cd "$(dirname "$0")" && pwd)"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$out"; rm -rf "$out/ckpt"; mkdir -p "$out/ckpt"
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
env PYTHON_EXEC="$py" "$tv" run --nproc-per-node auto --max-restarts 1 \
  --checkpoint-dir "$out/ckpt" --resume-arg "--resume={}" \
  --metrics-port "$port" --metrics-address 127.0.0.1 --progress-regex auto \
  --summary-file "$out/summary.json" \
  "$here/gpu_ddp_restart.py" "$out/ckpt" "$total" > "$out/run.log" 2>&1 &
pid=$!
"$py" - "$port" "$pid" "$out" <<'PY'
import os, sys, time, urllib.request
port, pid, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n, last = 0, ""
while True:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        break
    t = time.monotonic()
    try:
        last = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        n += 1
    except OSError:
        pass
    time.sleep(max(0.0, 0.1 - (time.monotonic() - t)))
open(os.path.join(out, "last.prom"), "w").write(last)
print(f"scrapes: {n}")
PY
wait $pid; rc=$?
echo "trainvisor exit: $rc"
promtool check metrics < "$out/last.prom" > "$out/promtool.txt" 2>&1; echo "promtool check metrics: exit $? ($out/promtool.txt)"
grep -E "^trainvisor_(restarts_total|lost_steps_total|goodput_ratio|badput_seconds|productive_seconds|wall_seconds|progress_step|checkpoint_(cost|interval_advised)_seconds|mtbf_seconds)" "$out/last.prom"
sed -n '/goodput summary/,/advised interval\|observed interval/p' "$out/run.log"
