#!/usr/bin/env bash
# Idle CPU, trainvisor vs torchrun: 8 quiet workers (/bin/sleep) for DURATION seconds; the CPU time
# the launcher process itself spends supervising them (docs/benchmarks.md, "Idle CPU").
#   trainvisor run --preflight none --nproc-per-node 8 --no-python -- /bin/sleep 100000
#   torchrun --standalone --nproc_per_node 8 --monitor_interval 0.1 --no_python /bin/sleep 100000
# (torchrun = Debian 12's torch 1.13 through bench/torchrun_compat.py on /usr/bin/python3; its
# default --monitor_interval is 5 s, the figure is given for 0.1 s, as in the other benchmarks, and
# for the default.)
# Measured pid: the process this script starts, i.e. trainvisor itself, and for torchrun the
# python3 process running bench/torchrun_compat.py, which is torchrun's elastic agent (with
# --standalone it also holds the rendezvous TCPStore, in a thread); the workers are its children.
# Once all 8 workers run (8 children) and 3 s have passed, utime+stime of that pid (all its
# threads, /proc/PID/stat fields 14+15, clock ticks / SC_CLK_TCK) and its context switches (sum of
# voluntary+nonvoluntary over /proc/PID/task/*/status) are read at the start and the end of the
# window; also the on-CPU time of its threads from /proc/PID/task/*/schedstat (nanoseconds, for
# figures below the 10 ms tick). Any other process in the launcher's tree that is not a worker is reported too.
#
# Usage: bench/idle_cpu.sh [DURATION_S] [N]   default 60 s, N=1 run of each, alternating
# Env: TRAINVISOR (default $BUILD_DIR/trainvisor, BUILD_DIR default build), PYTHON (default
#      /usr/bin/python3), TORCHRUN_INTERVALS (default "0.1"; e.g. "0.1 5").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
export TV_BIN="${TRAINVISOR:-$build/trainvisor}" TV_COMPAT="$root/bench/torchrun_compat.py"
export TV_D="${1:-60}" TV_N="${2:-1}" TV_PY="${PYTHON:-/usr/bin/python3}"
export TV_INTERVALS="${TORCHRUN_INTERVALS:-0.1}"
[[ -x "$TV_BIN" ]] || { echo "idle_cpu.sh: $TV_BIN is not an executable; build it first" >&2; exit 2; }
exec "$TV_PY" - <<'EOF'
import os, signal, statistics, subprocess, sys, tempfile, shutil, time
from pathlib import Path

TV, COMPAT, PY = os.environ["TV_BIN"], os.environ["TV_COMPAT"], os.environ["TV_PY"]
D, N, NPROC, SETTLE_S = float(os.environ["TV_D"]), int(os.environ["TV_N"]), 8, 3.0
INTERVALS = os.environ["TV_INTERVALS"].split()
TICK = os.sysconf("SC_CLK_TCK")
WORKER = ["/bin/sleep", "100000"]

def tv_cmd(d):
    return [TV, "run", "--preflight", "none", "--nproc-per-node", str(NPROC),
            "--failure-file", f"{d}/failure", "--termination-log", f"{d}/termination-log",
            "--no-python", "--", *WORKER]

def tr_cmd(interval):
    return lambda d: [PY, COMPAT, "--standalone", "--nproc_per_node", str(NPROC),
                      "--monitor_interval", interval, "--no_python", *WORKER]

def env():
    return {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(), "LANG": "C.UTF-8"}

def children(pid):
    kids = []
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/children") as f:
            kids += [int(c) for c in f.read().split()]
    return kids

def tree(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            todo += children(p)
        except OSError:
            pass
    return out

def comm(pid):
    return Path(f"/proc/{pid}/comm").read_text().strip()

def cpu_s(pid):
    stat = Path(f"/proc/{pid}/stat").read_text()
    f = stat[stat.rindex(")") + 2:].split()  # fields from 3 (state) on
    return (int(f[11]) + int(f[12])) / TICK  # utime, stime: fields 14, 15

def sched_s(pid):
    """On-CPU time of all threads, from /proc/PID/task/*/schedstat (ns; finer than clock ticks)."""
    return sum(int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0])
               for t in os.listdir(f"/proc/{pid}/task")) / 1e9

def ctxt(pid):
    n = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        for line in Path(f"/proc/{pid}/task/{t}/status").read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                n += int(line.split()[1])
    return n

def others(pid):
    """Processes of the launcher's tree that are neither the launcher nor a worker (sleep)."""
    return [p for p in tree(pid)[1:] if comm(p) != "sleep"]

def one(make):
    d = tempfile.mkdtemp(prefix="tv_idle_")
    p = subprocess.Popen(make(d), env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while sum(1 for c in children(p.pid) if comm(c) == "sleep") < NPROC:
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"workers did not all start (launcher exit {p.poll()})")
            time.sleep(0.05)
        time.sleep(SETTLE_S)
        extra = others(p.pid)
        c0, s0, x0, t0 = cpu_s(p.pid), sched_s(p.pid), ctxt(p.pid), time.monotonic()
        e0 = {q: cpu_s(q) for q in extra}
        time.sleep(D)
        c1, s1, x1, t1 = cpu_s(p.pid), sched_s(p.pid), ctxt(p.pid), time.monotonic()
        e1 = {q: cpu_s(q) for q in extra}
        threads = len(os.listdir(f"/proc/{p.pid}/task"))
        return {"pid": p.pid, "comm": comm(p.pid), "threads": threads, "cpu": c1 - c0, "sched_ms": 1000 * (s1 - s0),
                "pct": 100 * (c1 - c0) / (t1 - t0), "wakeups": (x1 - x0) / (t1 - t0),
                "others": {f"{comm(q)}[{q}]": e1[q] - e0[q] for q in extra}}
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(d, ignore_errors=True)

names = ["trainvisor"] + [f"torchrun {i}" for i in INTERVALS]
makers = dict(zip(names, [tv_cmd] + [tr_cmd(i) for i in INTERVALS]))
runs = {n: [] for n in names}
for i in range(N):
    for name in (names if i % 2 == 0 else names[::-1]):
        r = one(makers[name])
        runs[name].append(r)
        print(f"  run {i + 1} {name:14s} pid {r['pid']} ({r['comm']}, {r['threads']} threads): "
              f"{r['cpu']:.2f} s CPU in {D:.0f} s = {r['pct']:.3f} % of a core "
              f"(schedstat {r['sched_ms']:.1f} ms), "
              f"{r['wakeups']:.1f} context switches/s; other non-worker processes: {r['others'] or 'none'}",
              flush=True)

print(f"trainvisor: {' '.join(tv_cmd('DIR'))}")
for i in INTERVALS:
    print(f"torchrun:   torchrun {' '.join(tr_cmd(i)('DIR')[2:])}")
print(f"window {D:.0f} s, medians of {N} run(s) ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")
print(f"{'':26s}" + "".join(f"{n:>16s}" for n in names))
for key, label, fmt in (("cpu", "CPU time, utime+stime (s)", "{:16.2f}"),
                        ("pct", "% of one core", "{:16.3f}"),
                        ("sched_ms", "CPU time, schedstat (ms)", "{:16.1f}"),
                        ("wakeups", "context switches / s", "{:16.1f}")):
    print(f"{label:26s}" + "".join(fmt.format(statistics.median(r[key] for r in runs[n])) for n in names))
EOF
