#!/usr/bin/env python3
"""The watcher's first scan (and the resume lookup) over N saves, without torch.

Builds the tree of a row of tests/integration/ckpt_layouts.py the way bench/watcher_catalog.py
leaves it (the row's saves, its newest complete save copied N times under higher steps, the
pointer file naming the newest copy), but from copies of the real files of tests/data/checkpoint/
(hard links of them: agent_1000.pt for every torch.save file, dcp_real/two_ranks for every DCP
directory), so it runs where torch is not installed. Then `checkpoint watch --dir D --polling
--poll-interval 3600` until its CPU (/proc/PID/task/*/schedstat) stops growing for 1.5 s: the
first scan's CPU and wall seconds; and the wall seconds of `checkpoint latest --dir D`.

Usage: bench/first_scan.py BIN ROW N [N...]   ROW: cosmos_rl_policy, megatron_legacy, cosmos_rl_dcp,
                                              hf_accelerate_fsdp
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from bench_util import cpu_ns  # bench/, the script's own folder, is on sys.path

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "checkpoint")
T0 = 1735725600  # 2025-01-01 10:00 UTC, as ckpt_layouts.py
LIMIT_S = 900
MOST_LINKS = 50000  # ext4 allows 65,000 names per inode: a fresh copy after this many


class Linker:
    """Hard links of a few source files (in `sources`, outside the tree); a fresh copy of a
    source every MOST_LINKS links."""

    def __init__(self, sources):
        self.dir, self.count = sources, {}
        self.pt = self.source("pt", open(os.path.join(DATA, "agent_1000.pt"), "rb").read())
        self.half = self.source("half", open(self.pt, "rb").read()[:600])  # a cut-off save
        self.empty = self.source("empty", b"")

    def source(self, name, data):
        path = os.path.join(self.dir, ".src-" + name)
        with open(path, "wb") as f:
            f.write(data)
        os.utime(path, (T0, T0))
        return path

    def __call__(self, src, dst):
        n = self.count.get(src, 0)
        self.count[src] = n + 1
        if n >= MOST_LINKS:
            copy = "%s.%d" % (src, n // MOST_LINKS)
            if not os.path.exists(copy):
                shutil.copy2(src, copy)
            src = copy
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.link(src, dst)


def cosmos_rl_policy(root, link, n):
    def step(run, s, broken=False):
        d = "%s/outputs/sft/%s/checkpoints/step_%d/policy" % (root, run, s)
        link(link.empty, d + "/cosmos_config")
        for r in range(2):
            for kind in ("model", "optimizer", "scheduler", "extra_info"):
                cut = broken and r == 1 and kind == "optimizer"
                link(link.half if cut else link.pt, "%s/%s_rank_%d.pth" % (d, kind, r))
            if not (broken and r == 1):
                link(link.empty, "%s/.rank_%d_complete" % (d, r))

    step("20250101100000", 100)
    step("20250101100000", 200)
    step("20250102090000", 250)
    step("20250102090000", 300, broken=True)
    for k in range(n):
        step("20250102090000", 12500 + k)


def megatron_legacy(root, link, n):
    def it(d, s, ranks=2):
        for r in range(ranks):
            link(link.pt, "%s/iter_%07d/mp_rank_%02d/model_optim_rng.pt" % (d, s, r))

    it(root + "/megatron/old", 5000)
    d = root + "/megatron/gpt"
    for s, ranks in ((100, 2), (200, 2), (300, 1)):  # 300: rank 1 never wrote its directory
        it(d, s, ranks)
    for k in range(n):
        it(d, 12000 + k)
    with open(d + "/latest_checkpointed_iteration.txt", "w") as f:
        f.write(str(12000 + n - 1))


def cosmos_rl_dcp(root, link, n):
    real = os.path.join(DATA, "dcp_real", "two_ranks")
    dcp = {name: link.source("dcp" + name, open(os.path.join(real, name), "rb").read())
           for name in sorted(os.listdir(real))}
    ck = root + "/cosmos/job/checkpoints"

    def it(s, parts=("model", "optim", "scheduler", "trainer"), no_metadata=()):
        for part in parts:
            for name, src in dcp.items():
                if not (part in no_metadata and name == ".metadata"):
                    link(src, "%s/iter_%09d/%s/%s" % (ck, s, part, name))

    it(1000)
    it(2000)
    it(3000, ("model", "optim"), ("optim",))  # died in optim/
    for k in range(n):
        it(120000 + k)
    with open(ck + "/latest_checkpoint.txt", "w") as f:
        f.write("iter_%09d\n" % (120000 + n - 1))


def hf_accelerate_fsdp(root, link, n):
    """HF Trainer with FSDP's sharded state: checkpoint-<N>/ holds DCP directories
    (pytorch_model_fsdp_0/, optimizer_0/), scheduler.pt, rng_state_0.pth and, written last,
    trainer_state.json (as ckpt_layouts.py's hf_fsdp)."""
    real = os.path.join(DATA, "dcp_real", "two_ranks")
    dcp = {name: link.source("dcp" + name, open(os.path.join(real, name), "rb").read())
           for name in sorted(os.listdir(real))}
    out = root + "/out"

    def ck(s, broken=False):
        d = "%s/checkpoint-%d" % (out, s)
        for unit in ("pytorch_model_fsdp_0", "optimizer_0"):
            for name, src in dcp.items():
                if not (broken and unit == "optimizer_0" and name == ".metadata"):
                    link(src, "%s/%s/%s" % (d, unit, name))
        link(link.pt, d + "/scheduler.pt")
        link(link.pt, d + "/rng_state_0.pth")
        if not broken:
            with open(d + "/trainer_state.json", "w") as f:
                f.write('{"global_step": %d}' % s)

    ck(500)
    ck(1000)
    ck(1500, broken=True)
    for k in range(n):
        ck(20000 + k)


ROWS = {f.__name__: f for f in (cosmos_rl_policy, megatron_legacy, cosmos_rl_dcp,
                                hf_accelerate_fsdp)}


def first_scan(binary, tree):
    argv = [binary, "checkpoint", "watch", "--dir", tree, "--polling", "--poll-interval", "3600"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0 = time.monotonic()
        used, changed = 0, t0
        while time.monotonic() - changed < 1.5:
            time.sleep(0.05)
            now = cpu_ns(p.pid)
            if now != used:
                used, changed = now, time.monotonic()
            if changed - t0 > LIMIT_S:
                raise RuntimeError("first scan not over after %d s" % LIMIT_S)
        return used / 1e9, changed - t0
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()


def latest(binary, tree):
    t0 = time.monotonic()
    out = subprocess.run([binary, "checkpoint", "latest", "--dir", tree], capture_output=True,
                         text=True).stdout.strip()
    return time.monotonic() - t0, os.path.relpath(out, tree) if out else "(none)"


def main():
    if len(sys.argv) < 4 or sys.argv[2] not in ROWS:
        sys.exit(__doc__)
    binary, row = sys.argv[1], sys.argv[2]
    print("| %s saves | first scan CPU s | first scan wall s | `checkpoint latest` s | answer |"
          % row)
    print("| ---: | ---: | ---: | ---: | --- |")
    for n in map(int, sys.argv[3:]):
        tree = tempfile.mkdtemp(prefix="tv-bench-first-scan-", dir=os.environ.get("BENCH_DIR"))
        sources = tree + ".sources"  # beside the tree: its names are no checkpoint's
        os.mkdir(sources)
        try:
            ROWS[row](tree, Linker(sources), n)
            cpu, wall = first_scan(binary, tree)
            seconds, answer = latest(binary, tree)
            print("| %d | %.2f | %.2f | %.2f | %s |" % (n, cpu, wall, seconds, answer), flush=True)
        finally:
            shutil.rmtree(tree, ignore_errors=True)
            shutil.rmtree(sources, ignore_errors=True)


if __name__ == "__main__":
    main()
