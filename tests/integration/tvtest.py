"""Helpers shared by the integration tests (imported as `tvtest`; pytest puts this folder on
sys.path)."""
import os
import socket
from pathlib import Path


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
