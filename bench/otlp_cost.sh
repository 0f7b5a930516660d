#!/usr/bin/env bash
# What the OTLP push costs (docs/benchmarks.md, "OTLP push"), side by side, same binary: 8 quiet
# workers (/bin/sleep) for DURATION seconds; CPU time of the trainvisor process (schedstat of all
# its threads, the sender's included) with
#   off            no push, no scrape
#   pull 1 s       --metrics-port, /metrics scraped once a second (the pull path's peer)
#   push 1 s       OTEL_EXPORTER_OTLP_ENDPOINT to a sink on loopback, OTEL_METRIC_EXPORT_INTERVAL=1000
#   push 100 ms    the same every 100 ms
# each http/protobuf (and push 1 s as http/json), medians of N alternating runs with ranges, and
# the bytes of one push.
#   trainvisor run --preflight none --nproc-per-node 8 --no-python -- /bin/sleep 100000
#
# Usage: bench/otlp_cost.sh [DURATION_S] [N]   default 30 s, N=5
# Env: TRAINVISOR (default $BUILD_DIR/trainvisor, BUILD_DIR default build), PYTHON (default
#      /usr/bin/python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
export TV_BIN="${TRAINVISOR:-$build/trainvisor}"
export TV_D="${1:-30}" TV_N="${2:-5}" TV_PY="${PYTHON:-/usr/bin/python3}"
[[ -x "$TV_BIN" ]] || { echo "otlp_cost.sh: $TV_BIN is not an executable; build it first" >&2; exit 2; }
export TV_HERE="$root/bench"
exec "$TV_PY" - <<'EOF'
import http.server, os, shutil, sys, signal, socket, statistics, subprocess, tempfile, threading, time
import urllib.request
from pathlib import Path

sys.path.insert(0, os.environ["TV_HERE"])
from bench_util import wait_for_sleepers

TV, D, N = os.environ["TV_BIN"], float(os.environ["TV_D"]), int(os.environ["TV_N"])

class Sink(http.server.BaseHTTPRequestHandler):
    sizes = {}
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Sink.sizes.setdefault(self.headers["Content-Type"], []).append(len(body))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a):
        pass

sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
threading.Thread(target=sink.serve_forever, daemon=True).start()

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def cpu(pid):
    """Seconds on a CPU of every thread of the process (schedstat: nanoseconds, where utime+stime
    counts 10 ms ticks); a thread that ended is not counted, the sender lives to the end."""
    return sum(int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0])
               for t in os.listdir(f"/proc/{pid}/task")) / 1e9

def run(case):
    d = tempfile.mkdtemp(prefix="tv_otlp_")
    env = {"PATH": "/usr/bin:/bin", "HOME": d, "LANG": "C.UTF-8"}
    argv = [TV, "run", "--preflight", "none", "--nproc-per-node", "8", "--failure-file", f"{d}/f",
            "--termination-log", f"{d}/t"]
    port = None
    if case.startswith("push"):
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{sink.server_address[1]}"
        env["OTEL_METRIC_EXPORT_INTERVAL"] = "100" if "100 ms" in case else "1000"
        env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/json" if "json" in case else "http/protobuf"
    if case.startswith("pull"):
        port = free_port()
        argv += ["--metrics-port", str(port)]
    p = subprocess.Popen(argv + ["--no-python", "--", "/bin/sleep", "100000"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()
    def scrape():
        while not stop.wait(1.0):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
            except OSError:
                pass
    th = threading.Thread(target=scrape, daemon=True)
    try:
        wait_for_sleepers(p, 8)
        if port:
            th.start()
        time.sleep(2)
        c0 = cpu(p.pid)
        time.sleep(D)
        return cpu(p.pid) - c0
    finally:
        stop.set()
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
        shutil.rmtree(d, ignore_errors=True)

cases = ["off", "pull 1 s", "push 1 s", "push 1 s json", "push 100 ms"]
got = {c: [] for c in cases}
for _ in range(N):
    for c in cases:
        got[c].append(run(c))
print(f"trainvisor CPU over {D:g} s (schedstat, all threads), 8 idle workers, median of {N} [min-max]:")
for c in cases:
    v = [1000 * x for x in got[c]]
    print(f"  {c:14s} {statistics.median(v):8.2f} ms  [{min(v):.2f}-{max(v):.2f}]"
          f"  ({statistics.median(v) / D:.3f} ms per s)")
for kind, sizes in sorted(Sink.sizes.items()):
    print(f"one push, {kind}: {min(sizes)}-{max(sizes)} bytes ({len(sizes)} received)")
EOF
