#!/usr/bin/env python3
"""The checkpoint watcher's steady state for every layout of the catalog (issue 41, item 2).

For each row of tests/integration/ckpt_layouts.py (the frameworks' own saving code's layouts,
the ones the tests build): the row's tree is built once, then its newest complete checkpoint is
copied N times (hard links; every sibling entry that carries the same step token is copied with
it, so a save of several files or directories stays whole) under new, higher step numbers of the
same width. `trainvisor checkpoint watch --polling --poll-interval P` watches the tree; once its
first scan is over (an interval of P seconds that costs it under 10 ms), its CPU over S seconds
is read from /proc/PID/task/*/schedstat (nanoseconds: no clock-tick rounding) and printed as % of
one core, beside the peer where the layout has a marker file to look for (`find -newer`).

Usage: bench/watcher_catalog.py [TRAINVISOR_BIN] [N=10000] [SECONDS=20] [POLL=2] [ROW...]
Needs python3 with torch (the rows write real torch.save files).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import ckpt_layouts  # noqa: E402
from bench_util import cpu_ns  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "trainvisor")
N = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
SECS = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
POLL = sys.argv[4] if len(sys.argv) > 4 else "2"
ROWS = sys.argv[5:] or list(ckpt_layouts.ROWS)
FIRST_SCAN_LIMIT_S = 600


def link_tree(src, dst):
    if os.path.isdir(src) and not os.path.islink(src):
        shutil.copytree(src, dst, copy_function=os.link, symlinks=True)
    else:
        os.link(src, dst, follow_symlinks=False)


def replicate(root, rel, step, n):
    """n copies of the checkpoint at root/rel (step `step`) with steps above every existing one."""
    parts = rel.split("/")
    token = re.compile(r"(?<![0-9])0*%d(?![0-9])" % step)
    named = [i for i, p in enumerate(parts) if token.search(p)]
    if not named:
        return 0  # the name carries no step (Lightning's last.ckpt): nothing to number copies by
    depth = max(named)  # the innermost named part
    parent = os.path.join(root, *parts[:depth])
    match = token.search(parts[depth]).group(0)
    siblings = [e for e in os.listdir(parent) if match in re.findall(r"[0-9]+", e)]
    # A save split over sibling directories under one name (cosmos-predict2's
    # {model,optim,scheduler,trainer}/iter_N.pt) is copied in each of them.
    up = os.path.dirname(parent)
    dirs = [parent] + ([os.path.join(up, d) for d in sorted(os.listdir(up))
                        if os.path.join(up, d) != parent
                        and os.path.exists(os.path.join(up, d, parts[depth]))] if depth else [])
    width = len(match) if match.startswith("0") else 0
    base = step * 10 + 10 ** (len(str(step)) + 1)  # above anything the row wrote
    for k in range(n):
        new = str(base + k).zfill(width)
        for d in dirs:
            for e in siblings:
                if os.path.lexists(os.path.join(d, e)):
                    link_tree(os.path.join(d, e), os.path.join(d, e.replace(match, new, 1)))
    newest = parts[depth].replace(match, str(base + n - 1).zfill(width), 1)
    repoint(root, parent, parts[depth], newest, match, str(base + n - 1).zfill(width))
    return len(siblings) * len(dirs)


def repoint(root, parent, old_name, new_name, old_step, new_step):
    """A pointer file the framework writes after each save (cosmos-rl latest_checkpoint.txt,
    DeepSpeed `latest`, Megatron latest_checkpointed_iteration.txt) names the newest save, as in
    the job that wrote them all: the small files beside the checkpoints and above them that name
    the original one are rewritten to name the newest copy."""
    named = re.compile(re.escape(old_name).replace(re.escape(old_step), "[0-9]" * len(old_step)
                                                   if old_step.startswith("0") else "[0-9]+"))
    d = parent
    while True:
        for e in os.listdir(d):
            f = os.path.join(d, e)
            if not os.path.isfile(f) or os.path.islink(f) or os.path.getsize(f) > 256:
                continue
            text = open(f, errors="replace").read()
            if named.search(text):
                open(f, "w").write(named.sub(new_name, text))
            elif text.strip() == old_step.lstrip("0") or text.strip() == old_step:
                open(f, "w").write(text.replace(text.strip(), new_step.lstrip("0") or "0"))
        if os.path.samefile(d, root):
            return
        d = os.path.dirname(d)


def steady(argv):
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0, last = time.monotonic(), cpu_ns(p.pid)
        while True:  # the first scan: until one poll interval costs under 10 ms
            time.sleep(float(POLL) + 0.1)
            now = cpu_ns(p.pid)
            if now - last < 10e6:
                break
            last = now
            if time.monotonic() - t0 > FIRST_SCAN_LIMIT_S:
                raise RuntimeError("first scan not over after %d s" % FIRST_SCAN_LIMIT_S)
        first = time.monotonic() - t0
        start = cpu_ns(p.pid)
        time.sleep(SECS)
        used = (cpu_ns(p.pid) - start) / 1e9
        return used / SECS * 100, first
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()


def main():
    print("checkpoint watch --polling --poll-interval %s, %d checkpoints per layout, %.0f s steady"
          % (POLL, N, SECS))
    print("| layout (tests/integration/ckpt_layouts.py) | entries per checkpoint | first scan s |"
          " steady CPU, % of a core |")
    print("| --- | ---: | ---: | ---: |")
    worst = 0.0
    for row in ROWS:
        tree = tempfile.mkdtemp(prefix="tv-bench-catalog-", dir=os.environ.get("BENCH_DIR"))
        try:
            rel, step, fmt = ckpt_layouts.build(row, tree)
            per = replicate(tree, rel, step, N)
            if not per:
                print("| %s | - | - | not measured: its checkpoint's name carries no step |" % row,
                      flush=True)
                continue
            argv = [BIN, "checkpoint", "watch", "--dir", tree, "--polling", "--poll-interval",
                    POLL] + (["--format", fmt] if fmt else [])
            pct, first = steady(argv)
            worst = max(worst, pct)
            print("| %s | %d | %.1f | %.3f %% |" % (row, per, first, pct), flush=True)
        finally:
            shutil.rmtree(tree, ignore_errors=True)
    print("worst layout: %.3f %% of a core (target: at most 0.1 %%)" % worst)


if __name__ == "__main__":
    main()
