"""`trainvisor report` against a real ledger and a real browser (docs/observability.md, "Where the
hours went").

Two containers of one job on one checkpoint dir: the first one's worker fails at step 12 (its
error file's message holds markup), restarts from agent_10.pt, fails again at step 22 and the
container gives up (exit 1, the failure file written); the second resumes from agent_20.pt and
finishes. `trainvisor report --ledger` prints the figures and writes the page; headless chromium
loads it: no console message (the page's Content-Security-Policy makes any script or fetch one), no
element from the ledger's text, and every figure on the page equals the text form's and what this
test computes from the ledger itself. Also: a FIFO, /dev/zero, a truncated and a huge ledger are
each one line naming the file, at once.

Why a job died: a real 2-node job on loopback (2 workers a node) whose rank 1 raises in generation
0 (its traceback in attempt_0/rank_1/stderr.log) and whose node 1 is SIGKILLed in generation 1, so
that node 0 ends 75 (a lost node). Its report, from `--ledger DIR` (the checkpoint dir), says so in
both forms and on the page chromium loads: the lost node as a failure with its reason, the
exception's last line beside its log, the exit code, wall-clock times (UTC) on the axis."""
import html.parser
import json
import math
import os
import re
import shutil
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

import tvtest

LOST_JOB = "report-lost-node"
EXCEPTION = "ValueError: rank 1 fails on the first attempt"

# Every rank says it is up (a file per attempt and rank); in generation 0 rank 1 raises once every
# rank is up, in generation 1 every rank waits (its node 1 is killed under it).
LOST_WORKER = textwrap.dedent(r"""
    import os, sys, time
    out, rank = sys.argv[1], int(os.environ["RANK"])
    attempt, world = int(os.environ["TORCHELASTIC_RESTART_COUNT"]), int(os.environ["WORLD_SIZE"])
    open(os.path.join(out, f"up_a{attempt}_r{rank}"), "w").close()
    if attempt == 0 and rank == 1:
        while len([n for n in os.listdir(out) if n.startswith("up_a0_")]) < world:
            time.sleep(0.02)
        raise ValueError("rank 1 fails on the first attempt")
    time.sleep(600)
""")

JOB = "report-job-1"
MARKUP = "boom <script>alert(1)</script> & <b>bold</b>"

# Prints "step N" every 50 ms from where it resumed (skrl's agent_N.pt), saves every 5 steps, and
# fails once at each step of `fails` (a marker file per step), its error file in torch's format.
SCRIPT = textwrap.dedent(r"""
    import io, json, os, re, sys, time, zipfile
    ckpt, last, fails = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3].split(",") if s]
    resume = os.environ.get("TRAINVISOR_RESUME_CHECKPOINT")
    start = int(re.search(r"agent_(\d+)\.pt$", resume).group(1)) if resume else 0
    run = os.path.join(ckpt, "Task", "2025-01-01_00-00-00_ppo_torch", "checkpoints")
    os.makedirs(run, exist_ok=True)
    for it in range(start, last + 1):
        print(f"step {it}", flush=True)
        if it % 5 == 0 and it > start:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as z:
                z.writestr("archive/data.pkl", b"x" * 1024)
            tmp = os.path.join(run, f".agent_{it}.tmp")
            with open(tmp, "wb") as f:
                f.write(buf.getvalue())
            os.rename(tmp, os.path.join(run, f"agent_{it}.pt"))
        marker = os.path.join(ckpt, f"failed_at_{it}")
        if it in fails and not os.path.exists(marker):
            open(marker, "w").close()
            with open(os.environ["TORCHELASTIC_ERROR_FILE"], "w") as f:
                json.dump({"message": {"message": "RuntimeError: MARKUP",
                                       "extraInfo": {"py_callstack": "Traceback: here",
                                                     "timestamp": str(int(time.time()))}}}, f)
            sys.exit(1)
        time.sleep(0.05)
""").replace("MARKUP", MARKUP)


def run_container(tmp, name, last, fails):
    argv = [str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "1",
            "--checkpoint-dir", str(tmp / "ckpt"), "--checkpoint-format", "skrl",
            "--progress-regex", r"step (?<step>\d+)", "--run-id", JOB, "--max-restarts", "1",
            "--ledger-interval", "0.5", "--log-dir", str(tmp / name / "logs"),
            "--failure-file", str(tmp / name / "failure"),
            "--termination-log", str(tmp / name / "termlog"),
            "--no-python", tvtest.PYTHON, str(tmp / "train.py"), str(tmp / "ckpt"), str(last),
            ",".join(map(str, fails))]
    (tmp / name).mkdir()
    return subprocess.run(argv, env=tvtest.base_env(), cwd=tmp, capture_output=True, text=True,
                          timeout=120)


def report(*args):
    return subprocess.run([str(tvtest.BIN), "report", *map(str, args)], capture_output=True,
                          text=True, timeout=30)


class Figures(html.parser.HTMLParser):
    """Every data-figure element's text, every evidence path, and every tag seen."""

    def __init__(self):
        super().__init__()
        self.figures, self.labels, self.evidence, self.tags = {}, {}, [], []
        self.rects = []  # the timeline's and the bars' shapes: their classes
        self._open = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if tag == "rect":
            self.rects.append(a.get("class", ""))
        if "data-figure" in a:
            self._open = ("figure", a["data-figure"])
            self.labels[a["data-figure"]] = a.get("data-label")
        elif tag == "code" and a.get("class") == "evidence":
            self._open = ("evidence", None)

    def handle_endtag(self, tag):
        self._open = None

    def handle_data(self, data):
        if self._open and self._open[0] == "figure":
            self.figures[self._open[1]] = self.figures.get(self._open[1], "") + data
        elif self._open:
            self.evidence.append(data)


def chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def browse(tmp, page, *extra):
    """The DOM chromium built from `page`, and chromium's log (console messages are in it)."""
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                        f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0",
                        *extra, page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr


def weighted(recs, key):
    """The mean of the records' checkpoint `key`, weighted by their counts (those that have it)."""
    pairs = [(r["checkpoints"]["count"], r["checkpoints"][key]) for r in recs
             if r.get("checkpoints") and r["checkpoints"][key] is not None]
    return sum(n * v for n, v in pairs) / sum(n for n, _ in pairs)


def expected_figures(led):
    """The job's figures computed here from the ledger's records (docs/observability.md)."""
    recs = led["records"]
    productive = sum(r["productive_seconds"] for r in recs)
    wall = productive + sum(sum(r["badput_seconds"].values()) for r in recs)
    for prev, cur in zip(recs, recs[1:]):
        wall += max(0.0, cur["started_unix"] - prev["heartbeat_unix"])  # outside
        # The steps done again across the boundary move from productive to lost progress.
        productive -= min(prev["productive_seconds"],
                          max(0, prev["last_step"] - cur["start_step"]) * prev["seconds_per_step"])
    failures = sum(g["outcome"] in ("failed", "hung") for r in recs for g in r["generations"])
    count = sum(r["checkpoints"]["count"] for r in recs if r.get("checkpoints"))
    cost, interval = weighted(recs, "cost_seconds"), weighted(recs, "interval_seconds")
    mtbf = wall / failures
    young = math.sqrt(2 * cost * mtbf)

    def waste(t):
        return wall * cost / t + failures * t / 2

    def s(v):
        return f"{v:.3f} s"

    return {"containers": str(len(recs)), "wall": s(wall), "goodput": f"{productive / wall:.3f}",
            "failures": str(failures), "checkpoints": str(count), "mtbf": s(mtbf),
            "young": s(young), "checkpoint_cost": s(cost), "checkpoint_interval": s(interval),
            "saved": s(max(0.0, waste(interval) - waste(young))),
            "restarts": str(sum(r["restarts"] for r in recs))}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    (tmp / "train.py").write_text(SCRIPT)
    (tmp / "ckpt").mkdir()
    first = run_container(tmp, "c0", 30, [12, 22])
    assert first.returncode == 1, first.stderr
    second = run_container(tmp, "c1", 30, [])
    assert second.returncode == 0, second.stderr
    ledgers = list((tmp / "ckpt").glob(".trainvisor-ledger-*.json"))
    assert len(ledgers) == 1, ledgers
    return tmp, ledgers[0]


def test_text_form_prints_the_ledgers_figures(job):
    tmp, ledger = job
    r = report("--ledger", ledger)
    assert r.returncode == 0, r.stderr
    led = json.loads(ledger.read_text())
    want = expected_figures(led)
    for label, key in (("containers", "containers"), ("wall time", "wall"),
                       ("goodput", "goodput"), ("failures", "failures"),
                       ("advised interval (Young)", "young")):
        assert re.search(rf"^  {re.escape(label)}\s+{re.escape(want[key])}$", r.stdout, re.M), \
            (label, want[key], r.stdout)
    # Each failure with its root cause and evidence, escaped for a terminal: no raw markup lost.
    assert r.stdout.count("RuntimeError: " + MARKUP) == 2, r.stdout
    assert "failure file " + str(tmp / "c0" / "failure") in r.stdout


def test_page_loads_in_chromium_with_the_same_figures(job):
    if chromium() is None:  # an optional test dependency: one 'skipped:' line
        pytest.skip("skipped: chromium is not installed (scripts/install-deps.sh installs it)")
    tmp, ledger = job
    page = tmp / "report.html"
    r = report("--ledger", ledger, "--html", page)
    assert r.returncode == 0, r.stderr
    dom, log = browse(tmp, page, "--dump-dom")
    consoles = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not consoles, consoles  # no error, and nothing blocked (a script, a fetch)
    parsed = Figures()
    parsed.feed(dom)
    assert "script" not in parsed.tags and "b" not in parsed.tags, parsed.tags
    assert MARKUP in dom.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    # Every figure on the page is the text form's line, label and value.
    assert len(parsed.figures) >= 20, parsed.figures
    for key, value in parsed.figures.items():
        label = parsed.labels[key]
        assert re.search(rf"^  {re.escape(label)}\s+{re.escape(value)}$", r.stdout, re.M), \
            (key, label, value, r.stdout)
    # The timeline: a box per container, its generations by outcome, the gap between the two.
    assert parsed.rects.count("box") == 2 and parsed.rects.count("gap") == 1, parsed.rects
    assert parsed.rects.count("failed") == 2 and parsed.rects.count("succeeded") == 1
    # ... and what this test computes from the ledger.
    led = json.loads(ledger.read_text())
    for key, value in expected_figures(led).items():
        assert parsed.figures[key] == value, (key, parsed.figures[key], value)
    # The evidence: each failed generation's files as the ledger names them, real files.
    paths = [p for r_ in led["records"] for g in r_["generations"] for p in g["evidence"]]
    assert paths and all(Path(p).is_file() for p in paths), paths
    assert any(p.endswith("/error.json") for p in paths), paths
    assert set(paths) <= set(parsed.evidence), (paths, parsed.evidence)
    assert str(tmp / "c0" / "failure") in parsed.evidence
    shot = tmp / "report.png"
    browse(tmp, page, f"--screenshot={shot}", "--window-size=1200,900")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unreadable_ledgers_are_one_line_naming_the_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    trunc = tmp_path / "trunc.json"
    trunc.write_text('{"format": "trainvisor-ledger",\n "version": 1,\n "records": [')
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (2 << 20))
    for path, why in ((fifo, "not a regular file (a FIFO)"),
                      (Path("/dev/zero"), "not a regular file (a character device)"),
                      (trunc, "not JSON"), (huge, "larger than")):
        r = report("--ledger", path, "--html", tmp_path / "out.html")
        assert r.returncode == 78, (path, r.stderr)
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"trainvisor report: {path}: "), lines
        assert why in lines[0], lines
    assert "line 3" in report("--ledger", trunc).stderr
    assert not (tmp_path / "out.html").exists()
    r = report("--html", tmp_path / "out.html")
    assert r.returncode == 64 and "--ledger" in r.stderr, r.stderr


def lost_node_argv(tmp, node, ports):
    master, rdzv = ports
    return [str(tvtest.BIN), "run", "--nnodes", "2", "--node-rank", str(node),
            "--master-addr", "127.0.0.1", "--master-port", str(master), "--rdzv-port", str(rdzv),
            "--nproc-per-node", "2", "--peer-timeout", "2", "--rdzv-timeout", "120",
            "--max-restarts", "2", "--grace-period", "3", "--preflight", "none",
            "--run-id", LOST_JOB, "--checkpoint-dir", str(tmp / "ckpt"), "--ledger-interval", "0.5",
            "--log-dir", str(tmp / f"logs{node}"), "--failure-file", str(tmp / f"failure{node}"),
            "--termination-log", str(tmp / f"termlog{node}"),
            "--no-python", tvtest.PYTHON, str(tmp / "worker.py"), str(tmp / "out")]


def wait_for_files(out, prefix, count, procs):
    """Waits until `count` files named prefix* are in `out` (the workers said they are up); fails
    when a node ended first (its output in the message)."""
    with procs[0][1].cond:
        while len([p for p in out.iterdir() if p.name.startswith(prefix)]) < count:
            for proc, output in procs:
                assert proc.poll() is None, "a node ended early:\n" + output.text()
            procs[0][1].cond.wait(0.05)


@pytest.fixture(scope="module")
def lost_job(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lost")
    (tmp / "worker.py").write_text(LOST_WORKER)
    for d in ("ckpt", "out"):
        (tmp / d).mkdir()
    ports = tvtest.free_ports(2)
    procs = []
    try:
        for node in (0, 1):
            proc = subprocess.Popen(lost_node_argv(tmp, node, ports), env=tvtest.base_env(),
                                    cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
            procs.append((proc, tvtest.Output(proc, 120)))
        wait_for_files(tmp / "out", "up_a1_", 4, procs)  # generation 1 runs on both nodes
        procs[1][0].kill()  # node 1 is lost
        assert procs[0][0].wait(timeout=120) == 75, procs[0][1].text()
        procs[0][1].wait_end()
        return tmp, procs[0][1].text()
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def test_run_logs_where_it_keeps_the_ledger(lost_job):
    tmp, log = lost_job
    (ledger,) = (tmp / "ckpt").glob(".trainvisor-ledger-*.json")
    assert f"job ledger {ledger}: container 1 of job '{LOST_JOB}'" in log, log


def test_report_says_why_the_job_died(lost_job):
    tmp, _ = lost_job
    (ledger,) = (tmp / "ckpt").glob(".trainvisor-ledger-*.json")
    r = report("--ledger", tmp / "ckpt")  # the checkpoint dir: its one ledger
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"trainvisor report: the ledger in {tmp / 'ckpt'}: {ledger}\n", r.stderr
    log = tmp / "logs0" / "attempt_0" / "rank_1" / "stderr.log"
    assert f"evidence {log}: {EXCEPTION}\n" in r.stdout, r.stdout
    assert re.search(r"^  container 0 .*: ended, exit 75: lost node \(a peer node was lost or the "
                     r"rendezvous timed out\), 1 restart\(s\)$", r.stdout, re.M), r.stdout
    assert re.search(r"^    generation 1 .*: failed \(exit 75: lost node", r.stdout, re.M), r.stdout
    assert re.search(r"^  failures\s+2$", r.stdout, re.M), r.stdout


def test_page_says_why_the_job_died(lost_job):
    if chromium() is None:
        pytest.skip("skipped: chromium is not installed (scripts/install-deps.sh installs it)")
    tmp, _ = lost_job
    page = tmp / "report.html"
    r = report("--ledger", tmp / "ckpt", "--html", page)
    assert r.returncode == 0, r.stderr
    dom, browser_log = browse(tmp, page, "--dump-dom")
    assert not [line for line in browser_log.splitlines() if ":CONSOLE" in line]
    parsed = Figures()
    parsed.feed(dom)
    # The lost node: a failed generation (red), none stopped (grey), in the failures with its reason.
    assert "stopped" not in parsed.rects and parsed.rects.count("failed") == 2, parsed.rects
    failures = dom[dom.index('id="failures"'):dom.index('id="figures"')]
    assert "generation 1: <strong>failed</strong> — exit 75: lost node (a peer node was lost" \
        in failures, failures
    # The exception's last line beside its log; the exit code under the container and in the list.
    log = tmp / "logs0" / "attempt_0" / "rank_1" / "stderr.log"
    assert str(log) in parsed.evidence, parsed.evidence
    assert f'<span class="exception">{EXCEPTION}</span>' in failures, failures
    assert re.search(r'<text class="exit" data-exit="0"[^>]*>exit 75</text>', dom), dom
    assert "(container exit 75)" in failures
    # Wall-clock times on the axis: the day the job ran, in UTC.
    led = json.loads((tmp / "ckpt").glob(".trainvisor-ledger-*.json").__next__().read_text())
    day = time.strftime("%Y-%m-%d", time.gmtime(led["records"][0]["started_unix"]))
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)<title>', dom)
    assert len(ticks) == 6 and all(re.fullmatch(rf"{day}T\d\d:\d\d:\d\d(\.\d+)?Z", t)
                                   for t in ticks), ticks


def test_ledger_dir_without_exactly_one_ledger_is_one_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = report("--ledger", empty)
    assert r.returncode == 78, r.stderr
    assert r.stderr == (f"trainvisor report: {empty}: a directory with no job ledger; expected "
                        "exactly one job ledger (.trainvisor-ledger-<16 hex digits>.json, which "
                        "`trainvisor run` writes in the checkpoint dir of a job with an id)\n")
    two = tmp_path / "two"
    two.mkdir()
    for name in (".trainvisor-ledger-0000000000000001.json", ".trainvisor-ledger-0000000000000002.json"):
        (two / name).write_text("{}")
    r = report("--ledger", two)
    assert r.returncode == 78 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "a directory with 2 job ledgers (.trainvisor-ledger-0000000000000001.json, " \
        ".trainvisor-ledger-0000000000000002.json)" in r.stderr, r.stderr
