#!/usr/bin/env bash
# How long `trainvisor checkpoint watch` takes to exit after a SIGTERM sent during its first scan
# of N checkpoints in one directory (default 100,000 agent_<t>.pt hard links to one real
# torch.save file from tests/data), against how long that first scan takes when left alone
# (the time a SIGTERM waited before the watcher's stop flag). R runs each; the SIGTERM is sent
# DELAY seconds after the start (inside the first scan). Prints medians and maxima.
# Usage: bench/watcher_stop.sh [TRAINVISOR_BIN] [N] [R] [DELAY]
set -euo pipefail
BIN=${1:-build/trainvisor}
N=${2:-100000}
R=${3:-5}
DELAY=${4:-0.5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(mktemp -d "${BENCH_DIR:-/tmp}/tv-bench-stop.XXXXXX")
trap 'rm -rf "$TREE"' EXIT
DIR="$TREE/logs/skrl/Isaac-Ant-v0/2025-01-20_10-00-00_ppo_torch/checkpoints"
python3 - "$DIR" "$N" "$SRC/tests/data/checkpoint/agent_1000.pt" <<'PY'
import os, sys
d, n, pt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.makedirs(d)
data = open(pt, "rb").read()
for s in range(n):
    path = os.path.join(d, f"agent_{(s + 1) * 100}.pt")
    if s % 60000 == 0:  # a new copy every 60,000 links (ext4 allows 65,000 per inode)
        first = path
        with open(first, "wb") as f:
            f.write(data)
    else:
        os.link(first, path)
print(f"created {n} checkpoints in {d}", file=sys.stderr)
PY
python3 - "$BIN" "$TREE" "$R" "$DELAY" <<'PY'
import signal, statistics, subprocess, sys, time
binary, tree, runs, delay = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
stop_ms = []
for _ in range(runs):
    p = subprocess.Popen([binary, "checkpoint", "watch", "--dir", tree, "--polling",
                          "--poll-interval", "3600"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(delay)
    t0 = time.perf_counter()
    p.send_signal(signal.SIGTERM)
    p.wait()
    stop_ms.append((time.perf_counter() - t0) * 1000)
# The first scan alone: `checkpoint latest --resume latest` is not it; time a watcher that is
# asked to stop only after its baseline (a poll interval of 3600 s: one scan, then idle) by
# watching its CPU time: /proc/<pid>/stat utime+stime stops growing when the scan is done.
import os
scan_s = []
for _ in range(max(1, runs // 2)):
    p = subprocess.Popen([binary, "checkpoint", "watch", "--dir", tree, "--polling",
                          "--poll-interval", "3600"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    t0 = time.perf_counter()
    last, still = -1, 0
    while still < 5:
        time.sleep(0.1)
        f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
        cpu = int(f[11]) + int(f[12])
        still = still + 1 if cpu == last else 0
        last = cpu
    scan_s.append(time.perf_counter() - t0 - 0.5)
    p.send_signal(signal.SIGTERM)
    p.wait()
print(f"{'what':58} {'median':>10} {'max':>10}")
print(f"{'SIGTERM during the first scan -> exit (ms)':58} {statistics.median(stop_ms):10.1f} "
      f"{max(stop_ms):10.1f}")
print(f"{'the first scan alone, what a SIGTERM used to wait for (s)':58} "
      f"{statistics.median(scan_s):10.2f} {max(scan_s):10.2f}")
PY
