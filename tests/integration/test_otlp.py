"""The OTLP metrics push against OpenTelemetry's own definitions: a receiver on loopback
(tests/otlp/receiver.js) decodes every request with the protobufjs root that npm's
@opentelemetry/otlp-transformer generates from opentelemetry-proto, in both protocols
(http/protobuf, http/json), strictly (no field the definitions do not know). The real binary runs
a real worker that restarts once and then holds still; its /metrics is scraped and every series
equals the pushes' at the same instant (the scrape lies between two pushes' reading times, and
each value lies between theirs: equal wherever the two pushes agree). Then the exit push, a
collector that is down or refuses, one that hangs while the job is stopped, and bad variables.
"""
import contextlib
import json
import queue
import shutil
import signal
import socket
import subprocess
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tvtest import SOURCE_DIR, base_env, free_port
import tvtest

BIN = str(tvtest.BIN)
PY = tvtest.PYTHON
RECEIVER = SOURCE_DIR / "tests" / "otlp" / "receiver.js"
ROOT_JS = (SOURCE_DIR / "tests" / "otlp" / "node_modules" / "@opentelemetry" / "otlp-transformer" /
           "build" / "src" / "generated" / "root.js")

pytestmark = pytest.mark.skipif(
    not ROOT_JS.exists() or shutil.which("node") is None,
    reason="skipped: tests/otlp/node_modules or node missing: run scripts/install-deps.sh")

# Attempt 0 prints step 1 and fails (exit 3); attempt 1 prints steps 1..7, then holds still until
# the test releases it.
WORKER = textwrap.dedent(r"""
    import os, sys, time
    release = sys.argv[1]
    if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
        print("step 1", flush=True)
        sys.exit(3)
    for step in range(1, 8):
        print(f"step {step}", flush=True)
    while not os.path.exists(release):
        time.sleep(0.05)
""")


class Receiver:
    """node receiver.js MODE; every request it decoded, in order, as it arrives."""

    def __init__(self, mode="ok"):
        self.proc = subprocess.Popen(["node", str(RECEIVER), mode], stdout=subprocess.PIPE,
                                     text=True, env=base_env())
        self.port = json.loads(self.proc.stdout.readline())["port"]
        self.lines = queue.Queue()
        self.got = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def wait(self, ready, what, timeout=120):
        """Requests until ready(list of all so far) holds; fails at the first one that OTLP's
        definitions refuse."""
        until = time.time() + timeout
        while not ready(self.got):
            try:
                self.got.append(self.lines.get(timeout=max(0.01, until - time.time())))
                if "error" in self.got[-1]:
                    pytest.fail(f"OTLP's definitions refused request {len(self.got)}: "
                                f"{self.got[-1]['error']}")
            except queue.Empty:
                pytest.fail(f"the receiver got no {what} within {timeout}s: {len(self.got)} requests")
        return self.got

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture
def receiver_factory():
    made = []

    def make(mode="ok"):
        made.append(Receiver(mode))
        return made[-1]
    yield make
    for r in made:
        r.close()


@contextlib.contextmanager
def killed_at_the_end(proc):
    """The run, SIGKILLed and reaped if a failed assertion leaves it running."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def otlp_env(port, host="127.0.0.1", **extra):
    return base_env(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://{host}:{port}", **extra)


def run(tmp_path, env, *argv, **kw):
    return subprocess.Popen([BIN, "run", "--preflight", "none", *argv], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def scraped(text):
    """({series: value}, {family: (type, help)}) of a Prometheus text exposition."""
    values, families = {}, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, help_ = line[7:].split(" ", 1)
            families[name] = [None, help_]
        elif line.startswith("# TYPE "):
            name, kind = line[7:].split(" ", 1)
            families[name][0] = kind
        elif line:
            key, value = line.rsplit(" ", 1)
            values[key] = float(value)
    return values, {k: tuple(v) for k, v in families.items() if any(
        s == k or s.startswith(k + "{") for s in values)}


def metrics_of(request):
    (rm,) = request["resourceMetrics"]
    (sm,) = rm["scopeMetrics"]
    return rm, sm


def pushed(request):
    """({series: value}, {family: (type, help)}, [data points]) of one decoded request, the series
    spelled as /metrics spells them."""
    values, families, points = {}, {}, []
    for m in metrics_of(request)[1]["metrics"]:
        kind = "counter" if "sum" in m else "gauge"
        data = m["sum"] if "sum" in m else m["gauge"]
        if kind == "counter":
            assert data["isMonotonic"] is True and data["aggregationTemporality"] == 2, m["name"]
        families[m["name"]] = (kind, m.get("description", ""))
        for p in data["dataPoints"]:
            labels = ",".join(f'{a["key"]}="{a["value"]["stringValue"]}"' for a in p.get("attributes", []))
            values[m["name"] + (f"{{{labels}}}" if labels else "")] = float(p["asDouble"])
            points.append((kind, p))
    return values, families, points


def held_still(values):
    return values.get("trainvisor_progress_step") == 7 and values.get("trainvisor_workers_up") == 1


def read_time(request):
    (t,) = {p["timeUnixNano"] for _, p in pushed(request)[2]}
    return int(t)


# An address (no lookup) and a host name (getaddrinfo on Asio's resolver thread).
@pytest.mark.parametrize("protocol, host", [("http/protobuf", "127.0.0.1"), ("http/json", "localhost")])
def test_the_push_equals_metrics_at_the_same_instant(tmp_path, receiver_factory, protocol, host):
    rx = receiver_factory()
    script, release, mport = tmp_path / "w.py", tmp_path / "release", free_port()
    script.write_text(WORKER)
    env = otlp_env(rx.port, host, OTEL_EXPORTER_OTLP_PROTOCOL=protocol, OTEL_METRIC_EXPORT_INTERVAL="150",
                   OTEL_SERVICE_NAME="robot-job", OTEL_RESOURCE_ATTRIBUTES="team=robots,site=a%2Cb",
                   OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20s3cret")
    proc = run(tmp_path, env, "--metrics-port", str(mport), "--max-restarts", "1", "--run-id", "job-7",
               "--progress-regex", r"step (?<step>\d+)", "--no-python", PY, str(script), str(release))
    with killed_at_the_end(proc):
        # Held still: a push shows generation 1 at step 7 with its worker up.
        rx.wait(lambda g: any("request" in r and held_still(pushed(r["request"])[0]) for r in g),
                "push of the worker held still")
        t0 = time.time_ns()
        text = scrape(mport)
        t1 = time.time_ns()
        got = rx.wait(lambda g: any("request" in r and read_time(r["request"]) > t1 for r in g),
                      "push read after the scrape")
        release.touch()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    got = rx.wait(lambda g: any("request" in r and "trainvisor_exit_code" in pushed(r["request"])[0]
                                for r in g), "exit push", timeout=30)
    assert [r["error"] for r in got if "error" in r] == []
    for r in got:
        assert r["path"] == "/v1/metrics"
        assert r["contentType"] == ("application/x-protobuf" if protocol == "http/protobuf"
                                    else "application/json")
        assert r["headers"]["authorization"] == "Bearer s3cret"

    requests = [r["request"] for r in got]
    before = [q for q in requests if read_time(q) < t0][-1]
    after = next(q for q in requests if read_time(q) > t1)
    s_values, s_families = scraped(text)
    b_values, b_families, _ = pushed(before)
    a_values, a_families, _ = pushed(after)
    assert s_families == b_families == a_families       # the same names, types and help
    assert set(s_values) == set(b_values) == set(a_values)
    same = 0
    for key, v in s_values.items():
        lo, hi = sorted((b_values[key], a_values[key]))
        assert lo <= v <= hi, (key, b_values[key], v, a_values[key])
        same += lo == hi
    assert same >= 20, same                           # everything but the clocks stands still
    assert a_values["trainvisor_restarts_total"] == s_values["trainvisor_restarts_total"] == 1
    assert a_values['trainvisor_worker_exits_total{exit_code="3"}'] == 1
    assert a_values["trainvisor_progress_step"] == 7
    assert a_values['trainvisor_current_phase{phase="running"}'] == 1

    # Counters start at trainvisor's start, the same in every push; gauges have no start.
    starts = {p.get("startTimeUnixNano") for q in requests for kind, p in pushed(q)[2] if kind == "counter"}
    assert len(starts) == 1 and int(starts.pop()) < read_time(requests[0])
    assert all("startTimeUnixNano" not in p for q in requests for kind, p in pushed(q)[2] if kind == "gauge")
    rm, sm = metrics_of(requests[-1])
    resource = {a["key"]: a["value"]["stringValue"] for a in rm["resource"]["attributes"]}
    assert resource["service.name"] == "robot-job"
    assert resource["team"] == "robots" and resource["site"] == "a,b"
    assert resource["trainvisor.job.id"] == "job-7"
    assert resource["trainvisor.node_rank"] == "0" and resource["trainvisor.nnodes"] == "1"
    assert resource["host.name"] == socket.gethostname()
    assert sm["scope"]["name"] == "trainvisor"
    # The exit push: the figures of the end, exit code included.
    final, _, _ = pushed(requests[-1])
    assert final["trainvisor_exit_code"] == 0 and final["trainvisor_workers_up"] == 0
    assert otlp_warnings(err) == [], err


def otlp_warnings(err):
    return [line for line in err.splitlines() if "OTLP" in line and " W]" in line]


@pytest.mark.parametrize("collector", ["down", "status:503"])
@pytest.mark.parametrize("worker_exit", [0, 3])
def test_a_collector_that_is_down_or_refuses_costs_one_warning(tmp_path, receiver_factory,
                                                               collector, worker_exit):
    if collector == "down":
        port, rx = free_port(), None                  # nothing listens there
    else:
        rx = receiver_factory(collector)
        port = rx.port
    # The worker lives through many intervals (its sleep is its work, not a wait for an event).
    proc = run(tmp_path, otlp_env(port, OTEL_METRIC_EXPORT_INTERVAL="50"), "--max-restarts", "0",
               "--no-python", "/bin/sh", "-c", f"sleep 1; exit {worker_exit}")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == worker_exit, err
    warnings = otlp_warnings(err)
    assert len(warnings) == 1, err
    assert ("Connection refused" if collector == "down" else "HTTP 503") in warnings[0]
    assert f"127.0.0.1:{port}/v1/metrics" in warnings[0]
    if rx:
        rx.wait(lambda g: len(g) >= 2, "second push")  # it kept pushing, quietly


def test_a_collector_that_hangs_does_not_hold_the_stop(tmp_path, receiver_factory):
    """The collector takes every request and never answers, with a timeout of 10 minutes: a
    SIGTERM still ends the job within its grace period plus the exit push's 1 s deadline."""
    rx = receiver_factory("hang")
    proc = run(tmp_path, otlp_env(rx.port, OTEL_METRIC_EXPORT_INTERVAL="100",
                                  OTEL_EXPORTER_OTLP_TIMEOUT="600000"),
               "--grace-period", "2", "--no-python", "/bin/sh", "-c", "exec sleep 600")
    with killed_at_the_end(proc):
        rx.wait(lambda g: len(g) >= 1, "request")   # one request hangs in flight
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        stopped_in = time.monotonic() - sent
    assert proc.returncode == 143, err
    # sleep ends at its SIGTERM; the exit push waits 1 s at most: far below the 600 s timeout.
    assert stopped_in < 30, (stopped_in, err)
    assert len(otlp_warnings(err)) <= 1, err
    assert "abandoned" not in err


@pytest.mark.parametrize("variables, needle, pushes", [
    ({"OTEL_METRIC_EXPORT_INTERVAL": "abc"},
     'OTEL_METRIC_EXPORT_INTERVAL="abc": expected milliseconds', True),
    ({"OTEL_EXPORTER_OTLP_HEADERS": "authorization"},
     "OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs", True),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"},
     'OTEL_EXPORTER_OTLP_ENDPOINT="127.0.0.1:4318": expected a URL http://', False),
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
     'OTEL_EXPORTER_OTLP_PROTOCOL="grpc": grpc is not supported', False),
])
def test_bad_variables_are_one_message_naming_the_variable(tmp_path, receiver_factory, variables,
                                                           needle, pushes):
    rx = receiver_factory()
    env = otlp_env(rx.port)
    env.update(variables)
    proc = run(tmp_path, env, "--no-python", "/bin/true")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    warnings = otlp_warnings(err)
    assert len(warnings) == 1 and needle in warnings[0], err
    if pushes:                                          # the default stands in: the exit push came
        got = rx.wait(lambda g: len(g) >= 1, "exit push", timeout=30)
        assert "error" not in got[0]
    else:
        assert "OTLP push to" not in err


def test_otlp_endpoint_is_trainvisors_own_beside_the_workers_grpc(tmp_path, receiver_factory):
    """The Cosmos seed's script pushes OTLP/gRPC to port 4317 (OTEL_EXPORTER_OTLP_*, which its
    workers read too); --otlp-endpoint sends trainvisor's figures to the collector's OTLP/HTTP port,
    and the workers still see their own variables unchanged."""
    rx = receiver_factory()
    env = base_env(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4317", OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
    seen = tmp_path / "worker_env"
    proc = run(tmp_path, env, "--otlp-endpoint", f"http://127.0.0.1:{rx.port}", "--no-python",
               "/bin/sh", "-c", f'echo "$OTEL_EXPORTER_OTLP_PROTOCOL $OTEL_EXPORTER_OTLP_ENDPOINT" > {seen}')
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert otlp_warnings(err) == [], err
    got = rx.wait(lambda g: any("trainvisor_exit_code" in pushed(r["request"])[0] for r in g), "exit push")
    assert got[-1]["contentType"] == "application/x-protobuf"
    assert seen.read_text().split() == ["grpc", "http://127.0.0.1:4317"]


def test_a_bad_otlp_endpoint_option_is_refused(tmp_path):
    proc = run(tmp_path, base_env(TRAINVISOR_OTLP_ENDPOINT="collector:4318"), "--no-python", "/bin/true")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 78, err
    assert 'TRAINVISOR_OTLP_ENDPOINT="collector:4318": expected a URL http://' in err
