#!/usr/bin/env bash
# SIGTERM fan-out, trainvisor vs torchrun: 8 workers on one node; SIGTERM to the launcher; time
# until every worker has received it (docs/benchmarks.md, "SIGTERM fan-out").
#   trainvisor run --preflight none --nproc-per-node 8 --no-python -- W
#   torchrun --standalone --nproc_per_node 8 --monitor_interval 0.1 --no_python W
# (torchrun = Debian 12's torch 1.13 through bench/torchrun_compat.py on /usr/bin/python3.)
# W = build/helpers/tv_stamp term DIR, the same C++ worker for both launchers: it blocks SIGTERM,
# writes DIR/start_<local rank>, waits in sigwaitinfo and writes the CLOCK_REALTIME (ns) at which
# SIGTERM arrived to DIR/term_<local rank>, then exits 0.
# Per run: once all 8 have started and SETTLE seconds (1) have passed, this script takes the time
# and sends SIGTERM to the launcher's pid; last = max(term_*) - send, first = min(term_*) - send;
# also send -> launcher exited (its exit status is waited for by this script, so this includes
# the wake-up of this script). Medians of N runs, alternating which launcher goes first.
#
# Usage: bench/sigterm_latency.sh [N]      N runs of each (default 7)
# Env: TRAINVISOR (default $BUILD_DIR/trainvisor, BUILD_DIR default build), TV_STAMP (default
#      $BUILD_DIR/helpers/tv_stamp), PYTHON (default /usr/bin/python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
export TV_BIN="${TRAINVISOR:-$build/trainvisor}" TV_STAMP="${TV_STAMP:-$build/helpers/tv_stamp}"
export TV_COMPAT="$root/bench/torchrun_compat.py" TV_N="${1:-7}" TV_PY="${PYTHON:-/usr/bin/python3}"
for f in "$TV_BIN" "$TV_STAMP"; do
  [[ -x "$f" ]] || { echo "sigterm_latency.sh: $f is not an executable; build it first" >&2; exit 2; }
done
exec "$TV_PY" - <<'EOF'
import os, signal, statistics, subprocess, sys, tempfile, shutil, time
from pathlib import Path

TV, STAMP, COMPAT, PY, N = (os.environ[k] for k in ("TV_BIN", "TV_STAMP", "TV_COMPAT", "TV_PY", "TV_N"))
N, NPROC, SETTLE_S = int(N), 8, 1.0

def tv_cmd(d):
    return [TV, "run", "--preflight", "none", "--nproc-per-node", str(NPROC),
            "--failure-file", f"{d}/failure", "--termination-log", f"{d}/termination-log",
            "--no-python", "--", STAMP, "term", d]

def tr_cmd(d):
    return [PY, COMPAT, "--standalone", "--nproc_per_node", str(NPROC), "--monitor_interval", "0.1",
            "--no_python", STAMP, "term", d]

def env():
    return {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(), "LANG": "C.UTF-8"}

def one(make):
    d = tempfile.mkdtemp(prefix="tv_sigterm_")
    o = Path(d)
    p = subprocess.Popen(make(d), env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not all((o / f"start_{r}").exists() for r in range(NPROC)):
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"workers did not all start (launcher exit {p.poll()})")
            time.sleep(0.005)
        time.sleep(SETTLE_S)
        sent = time.time_ns()
        os.kill(p.pid, signal.SIGTERM)
        rc = p.wait(timeout=60)
        exited = time.time_ns()
        terms = [int((o / f"term_{r}").read_text()) for r in range(NPROC)]
        return (max(terms) - sent) / 1e6, (min(terms) - sent) / 1e6, (exited - sent) / 1e6, rc
    except (OSError, ValueError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"  run failed: {e}", file=sys.stderr)
        if p.poll() is None:
            p.kill()
            p.wait()
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)

runs = {"trainvisor": [], "torchrun": []}
makers = {"trainvisor": tv_cmd, "torchrun": tr_cmd}
one(tv_cmd); one(tr_cmd)  # warm the page cache
for i in range(N):
    for name in (("trainvisor", "torchrun") if i % 2 == 0 else ("torchrun", "trainvisor")):
        r = one(makers[name])
        print(f"  run {i + 1} {name:10s} " + ("failed" if r is None else
              f"last {r[0]:7.2f} ms  first {r[1]:7.2f} ms  launcher exited {r[2]:7.1f} ms (status {r[3]})"),
              flush=True)
        if r is not None:
            runs[name].append(r)

def med(name, k):
    xs = [r[k] for r in runs[name]]
    return statistics.median(xs) if xs else float("nan")

def rng(name, k):
    xs = [r[k] for r in runs[name]]
    return f"{min(xs):.2f}-{max(xs):.2f}" if xs else "-"

print(f"trainvisor: {' '.join(tv_cmd('DIR'))}")
print(f"torchrun:   torchrun {' '.join(tr_cmd('DIR')[2:])}")
print(f"medians of {N} alternating runs ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}); "
      f"n ok: trainvisor {len(runs['trainvisor'])}, torchrun {len(runs['torchrun'])}")
print(f"{'':44s} {'trainvisor':>12s} {'torchrun':>12s}")
print(f"{'SIGTERM sent -> all 8 workers received (ms)':44s} {med('trainvisor', 0):12.2f} {med('torchrun', 0):12.2f}")
print(f"{'SIGTERM sent -> first worker received (ms)':44s} {med('trainvisor', 1):12.2f} {med('torchrun', 1):12.2f}")
print(f"{'  range, all 8 (ms)':44s} {rng('trainvisor', 0):>12s} {rng('torchrun', 0):>12s}")
print(f"{'SIGTERM sent -> launcher exited (ms)':44s} {med('trainvisor', 2):12.1f} {med('torchrun', 2):12.1f}")
EOF
