#!/usr/bin/env python3
"""A lost node under elastic membership, trainvisor beside torchrun (issue 55's peer), on one
host: N agents of one worker each, `--nnodes N-1:N`, every worker in a gloo all_reduce loop (the
collective is how torchrun's survivors learn that a peer died). Once round 0 runs everywhere,
node N-1's agent and worker are SIGKILLed together; measured from the kill to the first and to
the last survivor's worker of the next round started (its first line, before `import torch`).
trainvisor: `run --nnodes N-1:N --rdzv-last-call 1`; torchrun: `--rdzv-backend c10d --nnodes
N-1:N --max-restarts 3 --rdzv-conf last_call_timeout=1`. Medians of R runs, min and max.
Needs torch. Usage: bench/elastic_peer.py TRAINVISOR_BIN [N=8] [R=3]
"""
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 8
R = int(sys.argv[3]) if len(sys.argv) > 3 else 3
PY = sys.executable

WORKER = r'''
import os, sys, time
t0 = time.time()
out = sys.argv[1]
rc = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
rnd = len([f for f in os.listdir(out) if f.startswith("kill")])  # rounds after a kill
rank = int(os.environ["RANK"])
name = "round%d_%d_%d" % (rnd, rank, os.getpid())
open(os.path.join(out, "." + name), "w").write(repr(t0))
os.rename(os.path.join(out, "." + name), os.path.join(out, name))
import torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(seconds=60))
x = torch.ones(1)
while True:
    dist.all_reduce(x)
    time.sleep(0.05)
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agents(kind, tmp, out, port):
    script = tmp / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ, TRAINVISOR_PREFLIGHT="none", TRAINVISOR_GPU_HEALTH="off",
               TRAINVISOR_WARM_STANDBY="off", CUDA_VISIBLE_DEVICES="")
    procs = []
    for rank in range(N):
        if kind == "trainvisor":
            argv = [BIN, "run", "--nnodes", f"{N - 1}:{N}", "--rdzv-last-call", "1",
                    "--node-rank", str(rank), "--master-addr", "127.0.0.1", "--master-port",
                    str(port), "--rdzv-port", str(port + 1), "--nproc-per-node", "1",
                    "--max-restarts", "3", "--rdzv-token", "bench", "--peer-timeout", "30",
                    "--no-python", "--", PY, str(script), str(out)]
        else:
            argv = [PY, "-m", "torch.distributed.run", "--nnodes", f"{N - 1}:{N}",
                    "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
                    f"127.0.0.1:{port}", "--rdzv-id", "bench", "--max-restarts", "3",
                    "--rdzv-conf", "last_call_timeout=1", "--monitor-interval", "0.1",
                    str(script), str(out)]
        procs.append(subprocess.Popen(argv, env=env, stdout=open(tmp / f"{kind}{rank}.log", "w"),
                                      stderr=subprocess.STDOUT, start_new_session=True))
    return procs


def starts(out, rnd):
    got = {}
    for f in out.glob(f"round{rnd}_*"):
        _, rank, pid = f.name.split("_")
        got[int(rank)] = (float(f.read_text()), int(pid))
    return got


def wait(pred, what, logs, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.005)
    tails = "\n".join(f"--- {p.name}\n" + p.read_text(errors="replace")[-1500:] for p in logs[:2])
    raise SystemExit(f"never saw {what}\n{tails}")


def one(kind):
    with tempfile.TemporaryDirectory(prefix=f"tv-bench-elastic-{kind}-") as d:
        tmp = Path(d)
        out = tmp / "out"
        out.mkdir()
        procs = agents(kind, tmp, out, free_port())
        try:
            logs = sorted(tmp.glob(f"{kind}*.log"))
            r0 = wait(lambda: len(starts(out, 0)) >= N and starts(out, 0), "round 0", logs)
            time.sleep(2)  # the collectives run
            lost = N - 1
            (out / "kill").write_text("")
            t = time.time()
            os.killpg(procs[lost].pid, signal.SIGKILL)
            os.kill(r0[lost][1], signal.SIGKILL)
            r1 = wait(lambda: len(starts(out, 1)) >= N - 1 and starts(out, 1), "the next round", logs)
            ts = [v[0] for v in r1.values()]
            return (min(ts) - t) * 1000, (max(ts) - t) * 1000
        finally:
            for p in procs:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["pkill", "-9", "-f", str(tmp / "worker.py")])


def main():
    print(f"{N} agents x 1 gloo worker, --nnodes {N - 1}:{N}, SIGKILL of the last node, {R} runs")
    for kind in ("trainvisor", "torchrun"):
        firsts, lasts = zip(*(one(kind) for _ in range(R)))
        print(f"  {kind:10} kill -> first survivor restarted: median {statistics.median(firsts):8.1f} ms "
              f"(min {min(firsts):.1f}, max {max(firsts):.1f}); last: median "
              f"{statistics.median(lasts):8.1f} ms (min {min(lasts):.1f}, max {max(lasts):.1f})")


if __name__ == "__main__":
    main()
