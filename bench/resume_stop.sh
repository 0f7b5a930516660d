#!/usr/bin/env bash
# How long `trainvisor run` takes to exit after a SIGTERM sent during its first resume lookup: N
# skrl agent_<step>.pt files (default 100,000 hard links to one torch.save zip of tests/data cut
# to 600 bytes, so no candidate is complete and the lookup judges every one: seconds), SIGTERM
# DELAY seconds after the start; beside it the lookup alone (the same run with nothing to stop
# it, worker /bin/true). R runs each; prints medians and maxima. GEN=1: the SIGTERM goes DELAY
# seconds after generation 0's worker failed (exit 3 at once, --max-restarts 1), i.e. into
# generation 1's lookup, which runs on the Supervisor's loop.
# Usage: bench/resume_stop.sh [TRAINVISOR_BIN] [N] [R] [DELAY] [GEN]
set -euo pipefail
BIN=${1:-build/trainvisor}
N=${2:-100000}
R=${3:-5}
DELAY=${4:-0.2}
GEN=${5:-0}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(mktemp -d "${BENCH_DIR:-/tmp}/tv-bench-resume-stop.XXXXXX")
trap 'rm -rf "$TREE"' EXIT
python3 - "$BIN" "$TREE" "$N" "$R" "$DELAY" "$SRC/tests/data/checkpoint/agent_1000.pt" "$GEN" <<'PY'
import os, signal, statistics, subprocess, sys, time
binary, tree, n, runs, delay, pt, gen = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), float(sys.argv[5]), sys.argv[6], int(sys.argv[7])
d = os.path.join(tree, "logs/skrl/Isaac-Ant-v0/2025-01-20_10-00-00_ppo_torch/checkpoints")
os.makedirs(d)
data = open(pt, "rb").read()[:600]
for s in range(n):
    path = os.path.join(d, f"agent_{(s + 1) * 100}.pt")
    if s % 60000 == 0:  # ext4 allows 65,000 links per inode
        first = path
        open(first, "wb").write(data)
    else:
        os.link(first, path)
cmd = [binary, "run", "--preflight", "none", "--checkpoint-dir", tree, "--no-python", "--"]
stop_ms, alone_ms = [], []
starts = os.path.join(tree, "starts")
later = ["/bin/sh", "-c", f'echo >> {starts}; [ "$(wc -l < {starts})" -gt 1 ] && exec sleep 60; exit 3']
for _ in range(runs):
    if gen == 0:
        p = subprocess.Popen(cmd + ["/bin/sleep", "60"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    else:
        if os.path.exists(starts):
            os.unlink(starts)
        log = os.path.join(tree, "run.log")
        with open(log, "w") as out:
            p = subprocess.Popen(cmd[:2] + ["--max-restarts", "1"] + cmd[2:] + later, stdout=out,
                                 stderr=subprocess.STDOUT)
        while "attempt 0 failed" not in open(log).read():
            time.sleep(0.005)
    time.sleep(delay)
    t0 = time.perf_counter()
    p.send_signal(signal.SIGTERM)
    rc = p.wait()
    stop_ms.append((time.perf_counter() - t0) * 1000)
    assert rc == 143, rc
    t0 = time.perf_counter()
    subprocess.run(cmd + ["/bin/true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    alone_ms.append((time.perf_counter() - t0) * 1000)
print(f"{n} files, SIGTERM {delay} s after " + ("start" if gen == 0 else "generation 0 failed") + f", {runs} runs")
print(f"SIGTERM to exit:          median {statistics.median(stop_ms):8.1f} ms  max {max(stop_ms):8.1f} ms")
print(f"run with the lookup alone: median {statistics.median(alone_ms):8.1f} ms  max {max(alone_ms):8.1f} ms")
PY
