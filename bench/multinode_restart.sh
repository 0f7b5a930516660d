#!/bin/bash
# Cross-node figures on loopback (docs/coordination.md), trainvisor against torchrun:
#  1. restart latency: a worker on node 1 fails; time until every worker on both nodes runs again.
#     trainvisor: two `trainvisor run` agents (node 0 serves the coordinator).
#     torchrun:   two agents, --rdzv_backend c10d --max_restarts 1 --monitor_interval 0.1
#                 (Debian's torch 1.13 torchrun through bench/torchrun_compat.py).
#  2. lost-node detection: node 1's agent is frozen (SIGSTOP: its socket stays open, it says
#     nothing); time until node 0 exits 75, against --peer-timeout. And SIGKILL (socket closes).
#  3. the coordinator's CPU and memory with 64 agents joined (bench/multinode_scale.sh).
# Usage: bench/multinode_restart.sh [BUILD_DIR] [REPEATS]     (BUILD_DIR default: build)
# Workers are tiny Python programs (no torch import), so the figure is the launchers' own latency.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
repeats="${2:-5}"
export TV_HERE="$here" TV_BIN="$build/trainvisor" TV_REPEATS="$repeats" TV_COMPAT="$here/torchrun_compat.py"
exec /usr/bin/python3 - <<'EOF'
import os, signal, socket, statistics, subprocess, sys, tempfile, time
from pathlib import Path

TV, COMPAT, N = os.environ["TV_BIN"], os.environ["TV_COMPAT"], int(os.environ["TV_REPEATS"])
PY = "/usr/bin/python3"
# Attempt 0 is "before rank 1 failed" (the fail_1 file), not TORCHELASTIC_RESTART_COUNT: torchrun
# counts restarts per agent, and an agent restarted because another node re-joined keeps its count.
# Each worker writes start_<attempt>_<rank> (its start time) and rc_<attempt>_<rank> (the count it
# was given); rank 1 (node 1) fails 1 s into attempt 0; the others wait to be stopped; attempt 1
# exits 0 at once.
WORKER = r'''
import os, sys, time
out = sys.argv[1]; rc = os.environ["TORCHELASTIC_RESTART_COUNT"]; rank = int(os.environ["RANK"])
attempt = 1 if os.path.exists(os.path.join(out, "fail_1")) else 0
open(os.path.join(out, "start_%d_%d" % (attempt, rank)), "w").write(repr(time.time()))
open(os.path.join(out, "rc_%d_%d" % (attempt, rank)), "w").write(rc)
if attempt > 0: sys.exit(0)
if rank == 1:
    time.sleep(1.0)
    open(os.path.join(out, "fail_1.tmp"), "w").write(repr(time.time()))
    os.rename(os.path.join(out, "fail_1.tmp"), os.path.join(out, "fail_1"))
    sys.exit(1)
time.sleep(600)
'''

sys.path.insert(0, os.environ["TV_HERE"])
from bench_util import ports

MARK = "TV_BENCH_MARK=%d" % os.getpid()

def env():
    return {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(), "LANG": "C.UTF-8",
            "GLOO_SOCKET_IFNAME": "lo", MARK.split("=")[0]: MARK.split("=")[1]}

def kill_marked():
    """Kills, by pid, the processes this script started (they carry MARK in their environment)."""
    for e in Path("/proc").iterdir():
        if e.name.isdigit() and int(e.name) != os.getpid():
            try:
                if MARK.encode() in (e / "environ").read_bytes().split(b"\0"):
                    os.kill(int(e.name), signal.SIGKILL)
            except OSError:
                pass

def tv_cmd(rank, mport, rport, out, peer=5, cmd=None):
    return [TV, "run", "--nnodes", "2", "--node-rank", str(rank), "--master-addr", "127.0.0.1",
            "--master-port", str(mport), "--rdzv-port", str(rport), "--nproc-per-node", "1",
            "--max-restarts", "1", "--peer-timeout", str(peer), "--rdzv-token", "bench",
            "--preflight", "none", "--failure-file", os.path.join(out, "f"), "--termination-log",
            os.path.join(out, "t"), "--no-python", "--", *(cmd or [PY, "-c", WORKER, out])]

def torchrun_cmd(rank, port, out):
    return [PY, COMPAT, "--nnodes", "2", "--nproc_per_node", "1", "--rdzv_backend", "c10d",
            "--rdzv_endpoint", "127.0.0.1:%d" % port, "--rdzv_id", "bench%d" % port,
            "--max_restarts", "1", "--monitor_interval", "0.1", "--no_python", PY, "-c", WORKER, out]

def one_restart(make):
    out = tempfile.mkdtemp(prefix="tvbench")
    procs = make(out)
    try:
        for p in procs: p.wait(timeout=400)
    finally:
        kill_marked()
    rcs = [p.returncode for p in procs]
    o = Path(out)
    try:
        fail = float((o / "fail_1").read_text())
        restarted = max(float((o / ("start_1_%d" % r)).read_text()) for r in (0, 1))
        counts = [(o / ("rc_1_%d" % r)).read_text() for r in (0, 1)]
    except (OSError, ValueError) as e:
        print("  run failed (exit codes %s): %s" % (rcs, e), file=sys.stderr)
        return None
    print("  %.3f s; exit codes %s; TORCHELASTIC_RESTART_COUNT after the restart: rank 0 %s, rank 1 %s"
          % (restarted - fail, rcs, counts[0], counts[1]))
    return restarted - fail

def trainvisor(out):
    m, r = ports(2)
    return [subprocess.Popen(tv_cmd(k, m, r, out), env=env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for k in (0, 1)]

def torchrun(out):
    (port,) = ports(1)
    return [subprocess.Popen(torchrun_cmd(k, port, out), env=env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for k in (0, 1)]

def summary(name, xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        print("%-28s no successful run" % name); return
    print("%-28s median %7.3f s  min %7.3f  max %7.3f  (n=%d)" % (name, statistics.median(xs), min(xs), max(xs), len(xs)))

print("== cross-node restart latency: failure on node 1 -> every worker on both nodes running again")
summary("trainvisor (2 agents)", [one_restart(trainvisor) for _ in range(N)])
if os.path.exists(COMPAT):
    summary("torchrun c10d (2 agents)", [one_restart(torchrun) for _ in range(N)])
else:
    print("torchrun: %s missing, skipped" % COMPAT)

def detection(peer, how):
    out = tempfile.mkdtemp(prefix="tvbench")
    m, r = ports(2)
    sleep = ["/bin/sleep", "600"]
    procs = [subprocess.Popen(tv_cmd(k, m, r, out, peer=peer, cmd=sleep), env=env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for k in (0, 1)]
    time.sleep(3)  # joined and started (sleep workers)
    t0 = time.monotonic()
    os.kill(procs[1].pid, how)
    rc = procs[0].wait(timeout=peer * 4 + 60)
    dt = time.monotonic() - t0
    for p in procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT); p.kill()
    kill_marked()
    return dt, rc

print("\n== lost-node detection: node 1's agent frozen (SIGSTOP) or killed (SIGKILL); node 0 exits")
for peer in (2, 5, 10):
    dt, rc = detection(peer, signal.SIGSTOP)
    print("--peer-timeout %2d s  SIGSTOP: node 0 exited %d after %6.2f s" % (peer, rc, dt))
dt, rc = detection(5, signal.SIGKILL)
print("--peer-timeout  5 s  SIGKILL: node 0 exited %d after %6.2f s" % (rc, dt))
EOF
