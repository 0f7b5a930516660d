"""Every long-running command takes its signals from Init (common/init.h): SIGTERM, SIGINT and
SIGHUP at any moment (as soon as Init exists, during start-up, while the command does its work)
end it with 128+N, and nothing it started is left. The one exception: `checkpoint watch` ends on
TERM/INT by design (a sidecar stopped with its pod, Ctrl-C), so once it watches they end it with
0 (SIGHUP still 129); before, while it reads its options, they end it like any start-up (128+N).

The commands: `run` (a worker that sleeps), `preflight` (a fake libcuda whose query hangs in
dlopen), `checkpoint watch` (the watcher thread). The moments: "init" (the instant Init's signal
thread exists: before it the kernel's default action would apply to any program), "startup"
(50 ms later), "working" (once the command is doing its work: the worker said ready, the hung
query was loaded, the watcher thread has its inotify watch). Whatever the moment, the answer is the same; the
moments only decide which path of the program the signal meets.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import tvtest

BIN = str(tvtest.BIN)
MARKER = tvtest.MARKER  # conftest.py kills what carries it after each test
SESSION = tvtest.SESSION
DEADLINE_S = 60  # guards against a hang only


@pytest.fixture(scope="module")
def fake_libs(tmp_path_factory):
    return tvtest.fake_vendor_libs(tmp_path_factory.mktemp("fakelibs"))


def env(**extra):
    return tvtest.base_env(PYTHON_EXEC="/nonexistent/python3", **extra)


def wait_until(predicate, what):
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.002)


def start_run(tmp_path, libs):
    ready = tmp_path / "ready"
    p = subprocess.Popen([BIN, "run", "--preflight", "none", "--grace-period", "5", "--no-python",
                          "--", "/bin/sh", "-c", f"touch {ready}; exec sleep 60"],
                         env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, ready.exists


def start_preflight(tmp_path, libs):
    log = tmp_path / "loaded"
    p = subprocess.Popen([BIN, "preflight", "--level", "basic"],
                         env=env(LD_LIBRARY_PATH=libs, TV_FAKE_LOG=log, TV_FAKE_HANG=60,
                                 TRAINVISOR_CHECK_TIMEOUT=120),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, log.exists


def start_watch(tmp_path, libs):
    p = subprocess.Popen([BIN, "checkpoint", "watch", "--dir", str(tmp_path), "--poll-interval", "0.05"],
                         env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, lambda: has_inotify_fd(p.pid)  # the watcher's thread has made its watch


def has_inotify_fd(pid):
    try:
        return any(os.readlink(fd) == "anon_inode:inotify"
                   for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


COMMANDS = {"run": start_run, "preflight": start_preflight, "checkpoint-watch": start_watch}


@pytest.mark.parametrize("moment", ["init", "startup", "working"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_signal_at_any_moment_exits_128_plus_n_and_leaves_nothing(fake_libs, tmp_path, command,
                                                                    sig, moment):
    p, working = COMMANDS[command](tmp_path, fake_libs)
    try:
        wait_until(lambda: tvtest.init_exists(p.pid), "had an Init")
        if moment == "startup":
            time.sleep(0.05)
        elif moment == "working":
            wait_until(working, "started its work")
        p.send_signal(sig)
        _, stderr = p.communicate(timeout=DEADLINE_S)
    finally:
        p.kill()
        p.wait()
    assert p.returncode in expected_codes(command, sig, moment), stderr
    assert not tvtest.left_behind(MARKER, SESSION)


def expected_codes(command, sig, moment):
    if command != "checkpoint-watch" or sig == signal.SIGHUP:
        return {128 + sig}
    if moment == "working":  # the watcher's inotify watch exists only once its stop is routed
        return {0}
    return {0, 128 + sig}  # before or after it started watching: either is a clean answer


@pytest.mark.parametrize("gap_s", [0, 0.001, 0.01, 0.05])
def test_a_second_term_after_the_first_keeps_a_watchs_clean_stop(fake_libs, tmp_path, gap_s):
    """timeout(1) sends its signal to the process and then to the process group: a watch that
    already took the first TERM ends 0, whatever the second one's timing (it was 143 when the
    second came after the watch's route was gone: docs/checkpoints.md's own example)."""
    for _ in range(5):
        p, working = start_watch(tmp_path, fake_libs)
        try:
            wait_until(working, "started its work")
            p.send_signal(signal.SIGTERM)
            time.sleep(gap_s)
            try:
                p.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            _, stderr = p.communicate(timeout=DEADLINE_S)
        finally:
            p.kill()
            p.wait()
        assert p.returncode == 0, stderr
