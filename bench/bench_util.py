"""What the loopback multi-node benchmarks share: free ports, and killing what a run started.

Imported by the Python inside bench/multinode_scale.sh, bench/multinode_restart.sh and
bench/rendezvous_scale.sh (each puts bench/ on sys.path). Standard library only.
"""
import os
import signal
import socket
from pathlib import Path


def ports(n):
    """n distinct free TCP ports on 127.0.0.1 (bound to port 0, then released)."""
    ss = [socket.socket() for _ in range(n)]
    for s in ss:
        s.bind(("127.0.0.1", 0))
    p = [s.getsockname()[1] for s in ss]
    for s in ss:
        s.close()
    return p


def kill_marked(name, value):
    """SIGKILLs, by pid, every process whose environment holds name=value (what a run started)."""
    needle = ("%s=%s" % (name, value)).encode()
    for e in Path("/proc").iterdir():
        if e.name.isdigit() and int(e.name) != os.getpid():
            try:
                if needle in (e / "environ").read_bytes().split(b"\0"):
                    os.kill(int(e.name), signal.SIGKILL)
            except OSError:
                pass
