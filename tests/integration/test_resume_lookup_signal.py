"""SIGTERM while `trainvisor run` looks for its resume checkpoint: the first lookup runs before the
supervisor (phase "resume lookup"), where Init ends the run at once with 143, so a lookup of
seconds (100,000 skrl agent_<step>.pt files, none complete: every one is judged) does not keep a
stop waiting and no worker is ever started. The latency is measured by bench/resume_stop.sh, not
here."""
import os
import shutil
import signal
import subprocess
import time

import pytest

import tvtest

BIN = str(tvtest.BIN)
SRC = str(tvtest.SOURCE_DIR)
MARKER = "31.4159"  # the worker's sleep argument: a worker process would carry it


def make_tree(root, n=100_000):
    d = root / "logs/skrl/Isaac-Ant-v0/2025-01-20_10-00-00_ppo_torch/checkpoints"
    d.mkdir(parents=True)
    # A torch.save zip cut short: recognized as agent_<step>.pt, never complete.
    data = open(os.path.join(SRC, "tests/data/checkpoint/agent_1000.pt"), "rb").read()[:600]
    first = None
    for s in range(n):
        path = d / f"agent_{(s + 1) * 100}.pt"
        if s % 60000 == 0:  # ext4 allows 65,000 links per inode
            first = path
            first.write_bytes(data)
        else:
            os.link(first, path)


def wait_for_lookup(proc, tree, timeout=120):
    """Returns once trainvisor has a file or directory of `tree` open: its resume lookup is under
    way (the event, not a time; the lookup takes seconds, the wait only guards against a hang)."""
    tree = os.path.realpath(tree) + "/"
    fds = f"/proc/{proc.pid}/fd"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"trainvisor exited {proc.returncode} before its resume lookup")
        for fd in os.listdir(fds):
            try:
                if os.readlink(f"{fds}/{fd}").startswith(tree):
                    return
            except OSError:
                pass  # closed meanwhile
        time.sleep(0.002)
    pytest.fail("trainvisor never opened the checkpoint tree")


def workers_left():
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if MARKER.encode() in f.read():
                    left.append(pid)
        except OSError:
            pass
    return left


def test_sigterm_during_first_resume_lookup_exits_143_without_workers(tmp_path):
    make_tree(tmp_path)
    log = open(tmp_path / "run.log", "w+")
    p = subprocess.Popen([BIN, "run", "--preflight", "none", "--checkpoint-dir", str(tmp_path),
                          "--no-python", "--",
                          "/bin/sleep", MARKER], stdout=log, stderr=subprocess.STDOUT)
    wait_for_lookup(p, tmp_path / "logs")
    p.send_signal(signal.SIGTERM)
    # Only guards against a hang (the lookup alone takes seconds; the answer takes milliseconds).
    assert p.wait(timeout=60) == 143
    log.seek(0)
    out = log.read()
    assert "received SIGTERM during resume lookup" in out, out[-2000:]
    assert "starting" not in out  # no attempt began
    assert workers_left() == []


def traced(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(l.startswith("TracerPid:") and l.split()[1] != "0" for l in f)
    except OSError:
        return False


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_sigterm_during_a_later_generations_resume_lookup_exits_143_without_workers(tmp_path):
    """Generation 1's lookup runs beside the Supervisor's loop (ResumeWait), where the signal is
    posted: the stop drops the lookup, and generation 1 starts nothing. The lookup is held there
    for certain: once generation 0 runs, every file call naming the checkpoint directory is
    delayed 10 s (strace's injection, as tests/integration/test_slow_checkpoint_dir.py), so the
    signal, sent as its line appears, always comes inside it (a lookup of 100,000 files alone
    took less than a loaded CI's line-to-signal time)."""
    make_tree(tmp_path)
    starts, go = tmp_path / "starts", tmp_path / "go"
    # Generation 0's worker waits for `go`, then fails (so a restart and its lookup follow); any
    # later one would sleep and carry the marker.
    script = (f'echo start >> {starts}; [ "$(wc -l < {starts})" -gt 1 ] && exec sleep {MARKER}; '
              f'while [ ! -e {go} ]; do sleep 0.05; done; exit 3')
    p = subprocess.Popen([BIN, "run", "--preflight", "none", "--checkpoint-dir", str(tmp_path),
                          "--max-restarts", "1", "--no-python", "--", "/bin/sh", "-c", script],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = tvtest.Output(p, timeout=120)  # the timeout only guards against a hang
    strace = None
    try:
        output.wait_for("generation 0: starting")
        calls = "openat,newfstatat,statx,getdents64"
        strace = subprocess.Popen(["strace", "-f", "-qq", "-o", "/dev/null", "-p", str(p.pid),
                                   "-P", str(tmp_path), "-e", f"trace={calls}",
                                   "-e", f"inject={calls}:delay_enter=10000000"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not traced(p.pid):
            assert time.monotonic() < deadline, "strace never attached"
            time.sleep(0.01)
        go.touch()
        output.wait_for("generation 0 failed")
        output.wait_for("checkpoint: looking under")  # generation 1's lookup (the only such line)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == 143
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if strace:
            strace.kill()
            strace.wait()
    output.wait_end()
    out = output.text()
    assert out.index("checkpoint: looking under") < out.index("received SIGTERM"), out[-2000:]
    assert "generation 1: starting" not in out, out[-2000:]
    assert starts.read_text().count("start") == 1  # generation 1 started no worker
    assert workers_left() == []
