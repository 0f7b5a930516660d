#!/usr/bin/env bash
# Restart latency, trainvisor vs torchrun: 4 workers on one node, local rank 3 exits 1; time from
# its death to its replacements running (docs/benchmarks.md, "Restart latency").
#   trainvisor run --preflight none --nproc-per-node 4 --max-restarts 1 --no-python -- W
#   torchrun --standalone --nproc_per_node 4 --max_restarts 1 --monitor_interval 0.1 --no_python W
# (torchrun = Debian 12's torch 1.13 through bench/torchrun_compat.py on /usr/bin/python3.)
# W = build/helpers/tv_stamp restart DIR SETTLE_MS, the same C++ worker for both launchers:
# each worker writes its start time (CLOCK_REALTIME, ns) to DIR/start_<restart count>_<local
# rank>; at restart count 0, local rank 3 waits until all four have started, then SETTLE_MS
# (300), writes DIR/death and exits 1; the replacements (count 1) exit 0 at once.
# Per run: last = max(start_1_*) - death (every replacement running), first = min(start_1_*) -
# death. Medians of N runs, alternating which launcher goes first.
#
# trainvisor's first restart starts at once (the job state machine pauses only for restarts that
# themselves failed in quick succession: launcher/job/job_state.h), so its figure is all
# supervision: reaping, stopping the others, the leftover walk, four fork/execs.
#
# Usage: bench/restart_latency.sh [N]      N runs of each (default 7)
# Env: TRAINVISOR (default $BUILD_DIR/trainvisor, BUILD_DIR default build), TV_STAMP (default
#      $BUILD_DIR/helpers/tv_stamp), PYTHON (default /usr/bin/python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
export TV_BIN="${TRAINVISOR:-$build/trainvisor}" TV_STAMP="${TV_STAMP:-$build/helpers/tv_stamp}"
export TV_COMPAT="$root/bench/torchrun_compat.py" TV_N="${1:-7}" TV_PY="${PYTHON:-/usr/bin/python3}"
for f in "$TV_BIN" "$TV_STAMP"; do
  [[ -x "$f" ]] || { echo "restart_latency.sh: $f is not an executable; build it first" >&2; exit 2; }
done
exec "$TV_PY" - <<'EOF'
import os, statistics, subprocess, sys, tempfile, shutil
from pathlib import Path

TV, STAMP, COMPAT, PY, N = (os.environ[k] for k in ("TV_BIN", "TV_STAMP", "TV_COMPAT", "TV_PY", "TV_N"))
N, NPROC, SETTLE_MS = int(N), 4, 300

def tv_cmd(d):
    return [TV, "run", "--preflight", "none", "--nproc-per-node", str(NPROC), "--max-restarts", "1",
            "--failure-file", f"{d}/failure", "--termination-log", f"{d}/termination-log",
            "--no-python", "--", STAMP, "restart", d, str(SETTLE_MS)]

def tr_cmd(d):
    return [PY, COMPAT, "--standalone", "--nproc_per_node", str(NPROC), "--max_restarts", "1",
            "--monitor_interval", "0.1", "--no_python", STAMP, "restart", d, str(SETTLE_MS)]

def env():
    return {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(), "LANG": "C.UTF-8"}

def one(make):
    d = tempfile.mkdtemp(prefix="tv_restart_")
    try:
        p = subprocess.run(make(d), env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        o = Path(d)
        death = int((o / "death").read_text())
        starts = [int((o / f"start_1_{r}").read_text()) for r in range(NPROC)]
        if p.returncode != 0:
            raise RuntimeError(f"exit code {p.returncode}: {p.stderr[-2000:]}")
        return (max(starts) - death) / 1e6, (min(starts) - death) / 1e6
    except (OSError, ValueError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"  run failed: {e}", file=sys.stderr)
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)

runs = {"trainvisor": [], "torchrun": []}
makers = {"trainvisor": tv_cmd, "torchrun": tr_cmd}
one(tv_cmd); one(tr_cmd)  # warm the page cache
for i in range(N):
    for name in (("trainvisor", "torchrun") if i % 2 == 0 else ("torchrun", "trainvisor")):
        r = one(makers[name])
        print(f"  run {i + 1} {name:10s} " + ("failed" if r is None else f"last {r[0]:7.1f} ms  first {r[1]:7.1f} ms"),
              flush=True)
        if r is not None:
            runs[name].append(r)

def med(name, k):
    xs = [r[k] for r in runs[name]]
    return statistics.median(xs) if xs else float("nan")

def rng(name, k):
    xs = [r[k] for r in runs[name]]
    return f"{min(xs):.1f}-{max(xs):.1f}" if xs else "-"

print(f"trainvisor: {' '.join(tv_cmd('DIR'))}")
print(f"torchrun:   torchrun {' '.join(tr_cmd('DIR')[2:])}")
print(f"medians of {N} alternating runs ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}); "
      f"n ok: trainvisor {len(runs['trainvisor'])}, torchrun {len(runs['torchrun'])}")
print(f"{'':44s} {'trainvisor':>12s} {'torchrun':>12s}")
print(f"{'death -> last replacement running (ms)':44s} {med('trainvisor', 0):12.1f} {med('torchrun', 0):12.1f}")
print(f"{'death -> first replacement running (ms)':44s} {med('trainvisor', 1):12.1f} {med('torchrun', 1):12.1f}")
print(f"{'  range, last (ms)':44s} {rng('trainvisor', 0):>12s} {rng('torchrun', 0):>12s}")
EOF
