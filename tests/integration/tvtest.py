"""Helpers shared by the integration tests (imported as `tvtest`; pytest puts this folder on
sys.path)."""
import contextlib
import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest


def free_ports(n):
    """n distinct free ports on 127.0.0.1 (all bound at once, so no two are the same)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port():
    return free_ports(1)[0]


def processes_with_marker(marker, token):
    """Pids of processes whose environment holds marker=token (/proc/PID/environ)."""
    needle = f"{marker}={token}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
        except OSError:
            pass  # gone, or not ours to read
    return pids


def hermetic_env(marker, session, python, **extra):
    """The environment of a hostile-input test: a fixed PATH, the sanitizer and TMPDIR settings
    of the caller, and marker=session (kill_marked finds what carries it); a value None in
    `extra` removes that variable."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
           "PYTHON_EXEC": python, marker: session, "LANG": "C.UTF-8", "CUDA_VISIBLE_DEVICES": ""}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TMPDIR", "LD_LIBRARY_PATH"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def kill_marked(marker, session):
    """SIGKILL every process whose environment holds marker=session (a test's leftovers)."""
    for pid in processes_with_marker(marker, session):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@contextlib.contextmanager
def tmpfs(path, options):
    """A small tmpfs mounted at `path` for the test (root only; skipped where mount is refused)."""
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
