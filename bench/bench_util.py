"""What the benchmarks share: free ports, killing what a run started, waiting for idle workers.

Imported by the Python inside bench/multinode_scale.sh, bench/multinode_restart.sh,
bench/rendezvous_scale.sh, bench/metrics_cost.sh and bench/otlp_cost.sh (each puts bench/ on
sys.path), and by bench/watcher_catalog.py and bench/first_scan.py. Standard library only.
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


def cpu_ns(pid):
    """CPU nanoseconds of every thread of `pid` (/proc/PID/task/*/schedstat: no clock ticks)."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            total += int(open("/proc/%d/task/%s/schedstat" % (pid, tid)).read().split()[0])
        except OSError:
            pass
    return total


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


def wait_for_sleepers(proc, n, timeout=60):
    """Until n of trainvisor's children are /bin/sleep workers (bench/metrics_cost.sh,
    bench/otlp_cost.sh); RuntimeError when it exits first or `timeout` passes."""
    import time
    until = time.monotonic() + timeout
    while True:
        kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        if sum(1 for k in kids if Path(f"/proc/{k}/comm").read_text().strip() == "sleep") >= n:
            return
        if proc.poll() is not None or time.monotonic() > until:
            raise RuntimeError("workers did not start")
        time.sleep(0.05)
