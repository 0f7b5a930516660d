#!/usr/bin/env bash
# What --metrics-port costs (docs/benchmarks.md, "Metrics"), side by side, same binary:
#  1. idle: 8 quiet workers (/bin/sleep) for DURATION seconds, nothing scraping; CPU time of the
#     trainvisor process (utime+stime and /proc/PID/task/*/schedstat), metrics off vs on.
#       trainvisor run --preflight none --nproc-per-node 8 [--metrics-port P] --no-python -- /bin/sleep 100000
#  2. restart latency: 4 workers, local rank 3 exits 1 (build/helpers/tv_stamp restart, as in
#     bench/restart_latency.sh); death -> last replacement running. Metrics off vs metrics on with
#     a scraper fetching /metrics 10 times a second (keep-alive off: a new connection each time, the
#     worst case) for the whole run. Medians of N alternating runs, with ranges.
#       trainvisor run --preflight none --nproc-per-node 4 --max-restarts 1 [--metrics-port P
#         --progress-regex auto] --no-python -- tv_stamp restart DIR 300
#
# Usage: bench/metrics_cost.sh [DURATION_S] [N]   default 30 s, N=9
# Env: TRAINVISOR (default $BUILD_DIR/trainvisor, BUILD_DIR default build), TV_STAMP (default
#      $BUILD_DIR/helpers/tv_stamp), PYTHON (default /usr/bin/python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
export TV_BIN="${TRAINVISOR:-$build/trainvisor}" TV_STAMP="${TV_STAMP:-$build/helpers/tv_stamp}"
export TV_D="${1:-30}" TV_N="${2:-9}" TV_PY="${PYTHON:-/usr/bin/python3}"
for f in "$TV_BIN" "$TV_STAMP"; do
  [[ -x "$f" ]] || { echo "metrics_cost.sh: $f is not an executable; build it first" >&2; exit 2; }
done
export TV_HERE="$root/bench"
exec "$TV_PY" - <<'EOF'
import os, shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time, urllib.request
from pathlib import Path

sys.path.insert(0, os.environ["TV_HERE"])
from bench_util import wait_for_sleepers

TV, STAMP, PY = os.environ["TV_BIN"], os.environ["TV_STAMP"], os.environ["TV_PY"]
D, N = float(os.environ["TV_D"]), int(os.environ["TV_N"])
TICK = os.sysconf("SC_CLK_TCK")

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def env():
    return {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(), "LANG": "C.UTF-8"}

def base(d):
    return [TV, "run", "--preflight", "none", "--failure-file", f"{d}/failure",
            "--termination-log", f"{d}/termination-log"]

def metrics(port):
    return ["--metrics-port", str(port), "--metrics-address", "127.0.0.1", "--progress-regex", "auto"] if port else []

def cpu(pid):
    stat = Path(f"/proc/{pid}/stat").read_text()
    f = stat[stat.rindex(")") + 2:].split()
    sched = sum(int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0])
                for t in os.listdir(f"/proc/{pid}/task")) / 1e9
    return (int(f[11]) + int(f[12])) / TICK, sched

def idle(port):
    d = tempfile.mkdtemp(prefix="tv_mcost_")
    p = subprocess.Popen(base(d) + ["--nproc-per-node", "8"] + metrics(port) + ["--no-python", "--", "/bin/sleep", "100000"],
                         env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_sleepers(p, 8)
        if port:  # one scrape first, so the server has surely been set up and used once
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        time.sleep(3)
        (c0, s0), t0 = cpu(p.pid), time.monotonic()
        time.sleep(D)
        (c1, s1), t1 = cpu(p.pid), time.monotonic()
        return c1 - c0, 1000 * (s1 - s0)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
        shutil.rmtree(d, ignore_errors=True)

def scraper(port, stop, count):
    while not stop.is_set():
        t = time.monotonic()
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
            count[0] += 1
        except OSError:
            pass
        stop.wait(max(0.0, 0.1 - (time.monotonic() - t)))

def restart(port):
    d = tempfile.mkdtemp(prefix="tv_mcost_")
    stop, count = threading.Event(), [0]
    th = threading.Thread(target=scraper, args=(port, stop, count)) if port else None
    try:
        p = subprocess.Popen(base(d) + ["--nproc-per-node", "4", "--max-restarts", "1"] + metrics(port) +
                             ["--no-python", "--", STAMP, "restart", d, "300"], env=env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if th: th.start()
        rc = p.wait(timeout=120)
        stop.set()
        if th: th.join()
        death = int((Path(d) / "death").read_text())
        starts = [int((Path(d) / f"start_1_{r}").read_text()) for r in range(4)]
        if rc != 0:
            raise RuntimeError(f"exit {rc}")
        return (max(starts) - death) / 1e6, count[0]
    finally:
        stop.set()
        shutil.rmtree(d, ignore_errors=True)

print(f"idle, {D:.0f} s window, 8 sleeping workers, nothing scraping:")
off, on = idle(0), idle(free_port())
print(f"{'':34s}{'metrics off':>14s}{'metrics on':>14s}")
print(f"{'CPU time, utime+stime (s)':34s}{off[0]:14.2f}{on[0]:14.2f}")
print(f"{'CPU time, schedstat (ms)':34s}{off[1]:14.2f}{on[1]:14.2f}")

restart(0)  # warm the page cache
lat = {"off": [], "on, scraped 10/s": []}
scrapes = []
for i in range(N):
    for name in (("off", "on, scraped 10/s") if i % 2 == 0 else ("on, scraped 10/s", "off")):
        ms, n = restart(free_port() if name != "off" else 0)
        lat[name].append(ms)
        if name != "off": scrapes.append(n)
        print(f"  run {i + 1} metrics {name:17s} death -> last replacement {ms:7.1f} ms" +
              (f" ({n} scrapes during the run)" if name != "off" else ""), flush=True)
print(f"restart latency, medians of {N} alternating runs ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}):")
for name, xs in lat.items():
    print(f"  metrics {name:17s} {statistics.median(xs):7.1f} ms (range {min(xs):.1f}-{max(xs):.1f})")
print(f"  scrapes per run: median {statistics.median(scrapes):.0f}")
EOF
