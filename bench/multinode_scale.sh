#!/bin/bash
# The coordinator's cost with many agents: NNODES `trainvisor run` agents on 127.0.0.1, each with
# --nproc-per-node 1 running `sleep`; node 0's process (its supervisor, its agent and the
# coordinator) is measured from /proc over a steady-state window once every worker runs:
# CPU (utime+stime) and memory (VmRSS, VmHWM). A 2-agent job is the baseline.
# Usage: bench/multinode_scale.sh [BUILD_DIR] [NNODES] [PEER_TIMEOUT_S] [WINDOW_S]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export TV_HERE="$here" TV_BIN="${1:-$here/../build}/trainvisor" TV_NNODES="${2:-64}" TV_PEER="${3:-30}" TV_WINDOW="${4:-20}"
exec /usr/bin/python3 - <<'EOF'
import os, signal, socket, subprocess, sys, tempfile, time
from pathlib import Path

TV, PEER, WINDOW = os.environ["TV_BIN"], int(os.environ["TV_PEER"]), int(os.environ["TV_WINDOW"])
MARK = ("TV_BENCH_MARK", str(os.getpid()))
HZ = os.sysconf("SC_CLK_TCK")

sys.path.insert(0, os.environ["TV_HERE"])
from bench_util import ports, kill_marked as _kill_marked

def kill_marked():
    _kill_marked(*MARK)

def cpu_ticks(pid):
    f = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])

def mem(pid):
    st = dict(l.split(":", 1) for l in Path("/proc/%d/status" % pid).read_text().splitlines() if ":" in l)
    return st["VmRSS"].strip(), st["VmHWM"].strip()

def measure(nnodes):
    out = tempfile.mkdtemp(prefix="tvscale")
    m, r = ports(2)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", MARK[0]: MARK[1]}
    cmd = ["/bin/sh", "-c", 'touch "%s/started_$RANK"; exec sleep 600' % out]
    t0 = time.monotonic()
    procs = []
    for k in range(nnodes):
        argv = [TV, "run", "--nnodes", str(nnodes), "--node-rank", str(k), "--master-addr", "127.0.0.1",
                "--master-port", str(m), "--rdzv-port", str(r), "--nproc-per-node", "1",
                "--peer-timeout", str(PEER), "--rdzv-token", "bench", "--preflight", "none",
                "--failure-file", os.path.join(out, "f"), "--termination-log", os.path.join(out, "t"),
                "--no-python", "--", *cmd]
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        while len(list(Path(out).glob("started_*"))) < nnodes:
            if time.monotonic() - t0 > 300 or any(p.poll() is not None for p in procs):
                raise SystemExit("not every worker started (exit codes %s)" % [p.poll() for p in procs])
            time.sleep(0.05)
        barrier = time.monotonic() - t0
        pid = procs[0].pid
        c0, w0 = cpu_ticks(pid), time.monotonic()
        time.sleep(WINDOW)
        c1, w1 = cpu_ticks(pid), time.monotonic()
        rss, hwm = mem(pid)
        alive = all(p.poll() is None for p in procs)
        print("%3d agents: all workers running %.2f s after launch; node 0 process over %d s: "
              "CPU %.2f%% of one core, VmRSS %s, VmHWM %s, job intact: %s"
              % (nnodes, barrier, WINDOW, 100.0 * (c1 - c0) / HZ / (w1 - w0), rss, hwm, alive))
    finally:
        kill_marked()

print("--peer-timeout %d s (heartbeats every %.1f s each way)" % (PEER, PEER / 4))
measure(2)
measure(int(os.environ["TV_NNODES"]))
EOF
