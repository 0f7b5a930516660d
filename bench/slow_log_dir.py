#!/usr/bin/env python3
"""What a slow log disk costs a worker and /healthz (issue 58, item 1).

One worker writes MB megabytes of 100-byte lines (one write(2) each, as print(flush=True) does)
through `trainvisor run --log-dir D --metrics-port P`; meanwhile /healthz is asked every 50 ms.
Once the worker runs (it waits for a file first), strace attaches to trainvisor's threads only
(-f -p: the threads it starts later too, never the worker, whose writes stay untraced); in the
slow run each write, open and stat naming D's files and directories is delayed DELAY_MS (a busy
EFS), in the other nothing matches. Prints the worker's own time (from its first to its last
line) and /healthz's median and worst latency while it writes, and trainvisor's count of dropped
bytes.
Usage: bench/slow_log_dir.py [TRAINVISOR_BIN=build/trainvisor] [MB=8] [DELAY_MS=20]
"""
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/trainvisor"
MB = float(sys.argv[2]) if len(sys.argv) > 2 else 8
DELAY_MS = int(sys.argv[3]) if len(sys.argv) > 3 else 20
CALLS = "write,openat,newfstatat,statx,mkdirat,unlinkat"

WORKER = """
import os, sys, time
line = b"x" * 99 + b"\\n"
n = int(float(sys.argv[2]) * 1e6 / len(line))
while not os.path.exists(sys.argv[1] + ".go"):
    time.sleep(0.01)
t0 = time.monotonic()
for _ in range(n):
    os.write(1, line)
open(sys.argv[1], "w").write(str(time.monotonic() - t0))
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def traced(pid):
    with open(f"/proc/{pid}/status") as f:
        return any(l.startswith("TracerPid:") and l.split()[1] != "0" for l in f)


def run(tmp, slow):
    logs = tmp / "logs"
    rank = logs / "attempt_0" / "rank_0"
    paths = [logs, logs / "attempt_0", rank, rank / "stdout.log", rank / "stderr.log",
             rank / "heartbeat"] if slow else [tmp / "never"]
    port = free_port()
    (tmp / "worker.py").write_text(WORKER)
    took = tmp / "took"
    cmd = [BIN, "run", "--preflight", "none", "--log-dir", str(logs), "--metrics-port", str(port),
           "--no-python", "--", sys.executable, str(tmp / "worker.py"), str(took), str(MB)]
    out = open(tmp / "out", "w")
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    while not (rank / "stdout.log").exists():  # the worker runs, waiting for .go
        assert p.poll() is None, (tmp / "out").read_text()
        time.sleep(0.01)
    strace = subprocess.Popen(["strace", "-f", "-qq", "-o", "/dev/null", "-p", str(p.pid),
                               *[a for q in paths for a in ("-P", str(q))], "-e", f"trace={CALLS}",
                               "-e", f"inject={CALLS}:delay_enter={DELAY_MS * 1000}"])
    while not traced(p.pid):
        time.sleep(0.01)
    lat, stop = [], threading.Event()

    def ask():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30).read()
                lat.append(time.monotonic() - t0)
            except OSError:
                pass  # over
            time.sleep(0.05)

    t = threading.Thread(target=ask)
    t.start()
    Path(str(took) + ".go").touch()
    rc = p.wait(timeout=600)
    stop.set()
    t.join()
    strace.kill()
    strace.wait()
    text = (tmp / "out").read_text(errors="replace")
    dropped = [l for l in text.splitlines() if "dropped" in l]
    return rc, float(took.read_text()), lat, dropped


def main():
    for slow in (False, True):
        with tempfile.TemporaryDirectory(prefix="tv-bench-slowlog-") as d:
            rc, took, lat, dropped = run(Path(d), slow)
            what = f"log calls +{DELAY_MS} ms" if slow else "log calls as they are"
            print(f"{what:24} exit {rc}  worker {took:6.2f} s  /healthz median "
                  f"{statistics.median(lat) * 1000:6.1f} ms  worst {max(lat) * 1000:7.1f} ms "
                  f"({len(lat)} asked)  {'; '.join(d[-120:] for d in dropped) or 'nothing dropped'}")


if __name__ == "__main__":
    main()
