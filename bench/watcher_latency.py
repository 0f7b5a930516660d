#!/usr/bin/env python3
"""How long after a checkpoint is complete does the watcher report it? inotify vs polling.

Starts `trainvisor checkpoint watch` on a fresh directory, writes K checkpoints (a real torch.save
file's bytes, written to the final path in 1 MiB pieces like torch.save does, then closed), and
takes latency = the watcher's "reported" time - the moment the writer closed the file (same
clock, same machine). Prints median and max per mode.
Usage: bench/watcher_latency.py [TRAINVISOR_BIN] [K] [POLL_INTERVAL_S] [SIZE_MIB]
"""
import json
import random
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/trainvisor"
K = int(sys.argv[2]) if len(sys.argv) > 2 else 10
POLL = sys.argv[3] if len(sys.argv) > 3 else "2"
SIZE_MIB = int(sys.argv[4]) if len(sys.argv) > 4 else 64
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SEED = open(os.path.join(SRC, "tests/data/checkpoint/agent_1000.pt"), "rb").read()


def payload():
    # A valid zip with a large stored member in front: same end record as the seed file, shifted.
    import io, zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("agent/data/0", os.urandom(SIZE_MIB << 20))
        z.writestr("agent/data.pkl", SEED[:200])
    return buf.getvalue()


def measure(polling):
    d = tempfile.mkdtemp(prefix="tv-watch-")
    ck = os.path.join(d, "2025-01-01_00-00-00_ppo_torch", "checkpoints")
    os.makedirs(ck)
    args = [BIN, "checkpoint", "watch", "--dir", d, "--poll-interval", POLL]
    if polling:
        args.append("--polling")
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    reported = {}
    reader = threading.Thread(
        target=lambda: [reported.setdefault(json.loads(l)["path"], json.loads(l)["reported"])
                        for l in p.stdout])
    reader.start()
    time.sleep(1)
    data, done = payload(), {}
    for i in range(K):
        path = os.path.join(ck, f"agent_{(i + 1) * 100}.pt")
        time.sleep(random.uniform(0, float(POLL)))  # no phase lock with the poll timer
        with open(path, "wb") as f:
            for at in range(0, len(data), 1 << 20):
                f.write(data[at:at + (1 << 20)])
            f.flush()
            done[path] = time.time()  # last byte written; close() follows
        deadline = time.time() + 30
        while path not in reported and time.time() < deadline:
            time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    reader.join()
    lat = [reported[k] - t for k, t in done.items() if k in reported]
    subprocess.run(["rm", "-rf", d])
    return lat


for name, polling in (("inotify", False), (f"polling every {POLL} s", True)):
    lat = measure(polling)
    if not lat:
        print(f"{name:24s} nothing reported")
        continue
    print(f"{name:24s} n={len(lat):3d}  median {statistics.median(lat) * 1000:8.1f} ms"
          f"  max {max(lat) * 1000:8.1f} ms  ({SIZE_MIB} MiB files)")
