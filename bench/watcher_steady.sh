#!/usr/bin/env bash
# The watcher's steady-state CPU: `checkpoint watch --polling` over N torchtitan DCP directories
# (default 10,000 step-<n>/ copies of tests/data/checkpoint/dcp_real/one_rank, hard links), once
# WARMUP seconds for its first scan, for SECONDS seconds of unchanged tree: the
# process's utime+stime from /proc/PID/stat, printed as CPU seconds per minute and % of a core.
# The peer: what a hand-written poller does, `find TREE -name .metadata -newer MARK` every
# POLL_INTERVAL seconds (a shell loop; its finds' CPU counted through cutime+cstime).
# Usage: bench/watcher_steady.sh [TRAINVISOR_BIN] [N] [SECONDS] [POLL_INTERVAL] [WARMUP]
set -euo pipefail
BIN=${1:-build/trainvisor}
N=${2:-10000}
SECS=${3:-30}
POLL=${4:-2}
WARMUP=${5:-15}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(mktemp -d "${BENCH_DIR:-/tmp}/tv-bench-steady.XXXXXX")
trap 'rm -rf "$TREE"' EXIT
python3 - "$BIN" "$TREE" "$N" "$SECS" "$POLL" "$WARMUP" "$SRC/tests/data/checkpoint/dcp_real/one_rank" <<'PY'
import os, signal, subprocess, sys, time
binary, tree, n, secs, poll, warmup, src = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    float(sys.argv[4]), sys.argv[5], float(sys.argv[6]), sys.argv[7]
base = os.path.join(tree, "outputs/checkpoint")
for s in range(n):
    d = os.path.join(base, f"step-{(s + 1) * 10}")
    os.makedirs(d)
    for f in os.listdir(src):
        os.link(os.path.join(src, f), os.path.join(d, f))
hz = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / hz  # utime stime cutime cstime
def steady(argv, wait):
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(wait)  # the first scan (a steady rescan costs CPU too: no "CPU stopped" test)
    start = cpu(p.pid)
    time.sleep(secs)
    used = cpu(p.pid) - start
    p.send_signal(signal.SIGTERM)
    p.wait()
    return f"{used / secs * 60:.3f} CPU s per minute ({used / secs * 100:.2f}% of a core)"
mark = os.path.join(tree, "mark")
open(mark, "w").close()
tv = steady([binary, "checkpoint", "watch", "--dir", tree, "--polling", "--poll-interval", poll],
            warmup)
peer = steady(["sh", "-c", 'while :; do find "$1" -name .metadata -newer "$2" >/dev/null; '
               'sleep "$3"; done', "sh", base, mark, poll], 1)
print(f"{n} DCP directories, poll interval {poll} s, {secs:.0f} s steady:")
print(f"  trainvisor checkpoint watch --polling: {tv}")
print(f"  find -newer every {poll} s (peer):     {peer}")
PY
