"""`trainvisor checkpoint watch --polling` over real directories once nothing changes (#22): a
scan stats the directories that can change instead of walking the tree, and still finds what
another host writes (polling only: inotify never sees those writes) within a poll interval or
two: a new checkpoint among many old ones, a checkpoint completing in a directory that was there
before, and a directory whose mtime does not move (the same timestamp tick, or set back by a
sync tool: its ctime does)."""
import json
import os
import signal
import subprocess
import threading
import time

import pytest

import tvtest

BIN = str(tvtest.BIN)
SOURCE_DIR = str(tvtest.SOURCE_DIR)
DCP = os.path.join(SOURCE_DIR, "tests/data/checkpoint/dcp_real/one_rank")
OLD = 1_600_000_000  # another host's clock: long before now


def dcp_dir(d, metadata=True):
    """A real torch 2.11 DCP save (hard links), with old mtimes as a sync from elsewhere has."""
    os.makedirs(d)
    for f in os.listdir(DCP):
        if f == ".metadata" and not metadata:
            continue
        os.link(os.path.join(DCP, f), os.path.join(d, f))


def watch(root):
    p = subprocess.Popen([BIN, "checkpoint", "watch", "--dir", str(root), "--polling",
                          "--poll-interval", "0.2", "--format", "dcp"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The baseline, then past the 2 s in which a directory just listed is listed again: from
    # here on the scans only stat (not an assertion: the tests below pass either way).
    time.sleep(3)
    return p


def next_event(p, deadline_s=30):
    """The next JSON line; the deadline only guards against a hang (the watch is killed then).
    A blocking read: select() on the pipe would miss a line already in Python's buffer."""
    guard = threading.Timer(deadline_s, p.kill)
    guard.start()
    try:
        line = p.stdout.readline()
    finally:
        guard.cancel()
    assert line, "no checkpoint reported"
    return json.loads(line)


def stop(p):
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err  # SIGTERM is a watch's clean stop
    return out


@pytest.fixture
def tree(tmp_path):
    base = tmp_path / "outputs/checkpoint"
    for s in range(1, 301):
        dcp_dir(base / f"step-{s * 10}")
    return tmp_path, base


def test_a_new_checkpoint_among_300_old_ones_is_found(tree):
    root, base = tree
    p = watch(root)
    try:
        dcp_dir(base / "step-5000")
        first = next_event(p)
    finally:
        out = stop(p)
    assert first["path"] == str(base / "step-5000")
    assert "step-10\"" not in out  # what was there at start is not news


def test_a_checkpoint_completing_in_a_directory_that_was_there_is_found(tree):
    root, base = tree
    pending = base / "step-4000"
    dcp_dir(pending, metadata=False)  # the shards, before the save's last rename
    p = watch(root)
    try:
        os.link(os.path.join(DCP, ".metadata"), pending / ".metadata.tmp")
        os.rename(pending / ".metadata.tmp", pending / ".metadata")  # FileSystemWriter's commit
        first = next_event(p)
    finally:
        stop(p)
    assert first["path"] == str(pending)


def test_a_directory_whose_mtime_is_set_back_is_still_listed_again(tree):
    root, base = tree
    p = watch(root)
    try:
        before = os.stat(base)
        dcp_dir(base / "step-6000")
        # A copy tool restores the old mtime of the directory it added to; the ctime moved.
        os.utime(base, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert os.stat(base).st_mtime_ns == before.st_mtime_ns
        first = next_event(p)
    finally:
        stop(p)
    assert first["path"] == str(base / "step-6000")


def test_a_steady_tree_is_not_listed_again(tree):
    """strace on the watcher once it is steady: stats, no getdents64, until something changes."""
    root, base = tree
    p = watch(root)
    try:
        trace = subprocess.run(["timeout", "-s", "INT", "1.5", "strace", "-f", "-qq", "-e",
                                "trace=getdents64,statx", "-p", str(p.pid)],
                               capture_output=True, text=True, timeout=60)
        dcp_dir(base / "step-7000")
        first = next_event(p)
    finally:
        stop(p)
    lines = trace.stderr.splitlines()
    assert any("statx" in line for line in lines), trace.stderr[-2000:]
    assert not any("getdents64" in line for line in lines), trace.stderr[-2000:]
    # Fewer stats than directories per scan (301 of them): the step dirs are stat'ed in slices.
    scans = max(1, sum("outputs/checkpoint\"" in line for line in lines))
    assert sum("statx" in line for line in lines) / scans < 100
    assert first["path"] == str(base / "step-7000")
