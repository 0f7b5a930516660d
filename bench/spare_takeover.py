#!/usr/bin/env python3
"""A lost node's rank taken by a hot spare (docs/coordination.md, "Hot spare nodes"), on loopback:
N nodes of one worker each plus one spare (`--nnodes N --spare-nodes 1`), every node its own
`trainvisor run`. Once generation 0 runs everywhere, the last member node's trainvisor and worker
are SIGKILLed together (a host gone: its sockets close); measured from the kill to the spare's
worker started in generation 1 (its own time stamp) and to every worker of generation 1 started.
Beside it, the same loss with elastic membership (`--nnodes N-1:N`, no spare: the survivors run
on with one node less). Medians of R runs, with min and max. Workers are /bin/sh (no Python), so
the figure is the launcher's. Usage: bench/spare_takeover.py [TRAINVISOR_BIN] [N=8] [R=5]
"""
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/trainvisor"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 8
R = int(sys.argv[3]) if len(sys.argv) > 3 else 5
WORKER = ('echo "$$ $(date +%s.%N) $GROUP_RANK" > "$OUT/.t$$"; '
          'mv "$OUT/.t$$" "$OUT/g${TORCHELASTIC_RESTART_COUNT}_r$RANK"; '
          '[ "$TORCHELASTIC_RESTART_COUNT" -gt 0 ] && exit 0; exec sleep 600')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_files(out, prefix, count, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(out.glob(prefix + "*"))
        if len(found) >= count:
            return found
        time.sleep(0.002)
    raise SystemExit(f"never saw {count} {prefix}* files")


def one_run(tmp, spare):
    out = tmp / "out"
    out.mkdir()
    port = free_port()
    nodes = N + 1 if spare else N
    env = dict(os.environ, OUT=str(out), TRAINVISOR_PREFLIGHT="none", TRAINVISOR_GPU_HEALTH="off",
               TRAINVISOR_WARM_STANDBY="off")
    size = ["--nnodes", str(N), "--spare-nodes", "1"] if spare else ["--nnodes", f"{N - 1}:{N}",
                                                                      "--rdzv-last-call", "5"]
    procs = []
    for rank in range(nodes):
        argv = [BIN, "run", *size, "--node-rank", str(rank), "--master-addr", "127.0.0.1",
                "--master-port", str(port), "--rdzv-port", str(port + 1),
                "--nproc-per-node", "1", "--max-restarts", "0", "--rdzv-token", "bench",
                "--peer-timeout", "30", "--no-python", "--", "/bin/sh", "-c", WORKER]
        procs.append(subprocess.Popen(argv, env=env, stdout=open(tmp / f"node{rank}.log", "w"),
                                      stderr=subprocess.STDOUT, start_new_session=True))
    try:
        wait_files(out, "g0_", N)
        if spare:  # the spare is there too before the loss is measured
            deadline = time.monotonic() + 60
            while "node %d joined" % N not in (tmp / "node0.log").read_text():
                assert time.monotonic() < deadline, "the spare never joined"
                time.sleep(0.005)
        lost = N - 1
        worker_pid = int((out / f"g0_r{lost}").read_text().split()[0])
        t_kill = time.time()
        os.killpg(procs[lost].pid, signal.SIGKILL)
        os.kill(worker_pid, signal.SIGKILL)
        g1 = wait_files(out, "g1_", N if spare else N - 1)
        starts = [float(p.read_text().split()[1]) for p in g1]
        taken = float((out / f"g1_r{lost}").read_text().split()[1]) if spare else min(starts)
        for i, p in enumerate(procs):
            if i != lost:
                p.wait(timeout=120)
        return taken - t_kill, max(starts) - t_kill
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)


def figures(spare):
    first, every = [], []
    for _ in range(R):
        with tempfile.TemporaryDirectory(prefix="tv-bench-spare-") as d:
            a, b = one_run(Path(d), spare)
            first.append(a * 1000)
            every.append(b * 1000)
    return first, every


def show(what, xs):
    print(f"  {what:46} median {statistics.median(xs):7.1f} ms  (min {min(xs):.1f}, max {max(xs):.1f})")


def main():
    print(f"{N} nodes x 1 worker on loopback, {R} runs each, SIGKILL of node {N - 1} (trainvisor + worker)")
    first, every = figures(spare=True)
    print(f"--nnodes {N} --spare-nodes 1:")
    show("kill -> the spare's worker running (its rank)", first)
    show("kill -> every worker of generation 1 running", every)
    first, every = figures(spare=False)
    print(f"--nnodes {N - 1}:{N} (elastic, no spare):")
    show("kill -> the first worker of generation 1", first)
    show("kill -> every worker of generation 1 running", every)


if __name__ == "__main__":
    main()
