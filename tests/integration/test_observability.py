"""Goodput and metrics against real runs: a job that prints rsl_rl's progress lines, saves an
skrl checkpoint at step 5, fails once after step 10 and resumes from the checkpoint. The /metrics
of the real run are scraped while it runs (and checked by promtool, the Prometheus project's own
linter), the --summary-file is read after it ends, and a 2-node job on loopback checks that node
0's figures are the job's (the restart counted once)."""
import json
import re
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

from tvtest import free_port, free_ports
import tvtest

BIN = str(tvtest.BIN)
PY = tvtest.PYTHON
SRC = tvtest.SOURCE_DIR
DASHBOARD = SRC / "docs" / "grafana" / "trainvisor-goodput.json"

# The training script: rank 0 prints rsl_rl's iteration banner; attempt 0 saves agent_5.pt (a
# zip, as torch.save writes) and the failing rank exits 1 once rank 0 printed step 10; the next
# attempt resumes from TRAINVISOR_RESUME_CHECKPOINT, saves twice more, then waits for the test to
# release it.
SCRIPT = textwrap.dedent(r"""
    import io, os, re, sys, time, zipfile
    ckpt, release = sys.argv[1], sys.argv[2]
    fail_rank = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    rank = int(os.environ["RANK"])
    attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    resume = os.environ.get("TRAINVISOR_RESUME_CHECKPOINT")
    start = int(re.search(r"agent_(\d+)\.pt$", resume).group(1)) if resume else 0
    run = os.path.join(ckpt, "Task", f"2025-01-01_00-00-{attempt:02d}_ppo_torch", "checkpoints")
    at10 = os.path.join(ckpt, "rank0_at_10")

    def save(step):                         # a zip as torch.save writes it, written over 0.6 s
        os.makedirs(run, exist_ok=True)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("archive/data.pkl", b"x" * 4096)
        data = buf.getvalue()
        with open(os.path.join(run, f"agent_{step}.pt"), "wb") as f:
            f.write(data[: len(data) // 2]); f.flush()
            time.sleep(0.6)
            f.write(data[len(data) // 2 :])

    for it in range(start, 30):
        if rank == 0:
            print("#" * 80 + "\n" + f" \033[1m Learning iteration {it}/30 \033[0m ".center(80) + "\n", flush=True)
        if rank == 0 and it in (5, 15, 20) and not (attempt > 0 and it == 5):
            save(it)
        if attempt == 0 and it == 10:       # step 10 is the last one seen before the failure
            if rank == fail_rank:
                while rank != 0 and not os.path.exists(at10):
                    time.sleep(0.05)
                sys.exit(1)
            if rank == 0:
                open(at10, "w").close()
                time.sleep(600)             # stopped by trainvisor when the other rank fails
        time.sleep(0.2)
    deadline = time.time() + 120
    while not os.path.exists(release) and time.time() < deadline:
        time.sleep(0.1)
""")


def scrape(port, path="/metrics"):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def samples(text):
    """{name or name{labels}: value} of a Prometheus text exposition."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def wait_for(port, proc, ready, what, timeout=180):
    until = time.time() + timeout
    last = ""
    while time.time() < until:
        if proc.poll() is not None:
            pytest.fail(f"trainvisor exited {proc.returncode} before {what}")
        try:
            last = scrape(port)[2]
            if ready(samples(last)):
                return last
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"no {what} within {timeout}s; last scrape:\n{last}")


def run_argv(tmp, port, summary, *extra):
    return [BIN, "run", "--preflight", "none", "--max-restarts", "2", "--grace-period", "3",
            "--metrics-port", str(port), "--metrics-address", "127.0.0.1", "--progress-regex", "auto",
            "--checkpoint-dir", str(tmp / "ckpt"), "--checkpoint-format", "skrl",
            "--summary-file", str(summary), "--failure-file", str(tmp / "failure"),
            "--termination-log", str(tmp / "termlog"), *extra]


@pytest.fixture(scope="module")
def fail_once(tmp_path_factory):
    """Runs the fail-once job; yields (scrape while running, summary JSON, stderr)."""
    tmp = tmp_path_factory.mktemp("goodput")
    script = tmp / "train.py"
    script.write_text(SCRIPT)
    port, summary, release = free_port(), tmp / "summary.json", tmp / "release"
    proc = subprocess.Popen(run_argv(tmp, port, summary, "--nproc-per-node", "1",
                                     "--run-id", "fail-once-job", "--no-python", PY,
                                     str(script), str(tmp / "ckpt"), str(release)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp)
    try:
        text = wait_for(port, proc, lambda s: s.get("trainvisor_progress_step", 0) >= 29
                        and s.get("trainvisor_checkpoints_total", 0) >= 3, "step 29 and 3 checkpoints")
        health = scrape(port, "/healthz")
        release.touch()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    yield {"text": text, "health": health, "summary": json.loads(summary.read_text()), "stderr": err,
           "tmp": tmp}


def test_scraped_figures_of_a_fail_once_job(fail_once):
    s = samples(fail_once["text"])
    assert s["trainvisor_restarts_total"] == 1
    assert s["trainvisor_failures_total"] == 1
    assert s["trainvisor_generation"] == 1
    assert s["trainvisor_lost_steps_total"] == 5          # failed after step 10, resumed from 5
    assert 0 < s["trainvisor_goodput_ratio"] < 1
    assert s["trainvisor_workers_up"] == 1
    assert s['trainvisor_worker_exits_total{exit_code="1"}'] == 1
    assert s['trainvisor_current_phase{phase="running"}'] == 1
    phases = sum(v for k, v in s.items() if k.startswith("trainvisor_phase_seconds_total"))
    assert phases == pytest.approx(s["trainvisor_wall_seconds"], abs=0.01)
    badput = sum(v for k, v in s.items() if k.startswith("trainvisor_badput_seconds"))
    assert badput + s["trainvisor_productive_seconds"] == pytest.approx(s["trainvisor_wall_seconds"], abs=0.01)
    assert s['trainvisor_badput_seconds{cause="lost_progress"}'] > 0
    assert s['trainvisor_badput_seconds{cause="restart"}'] > 0
    assert s["trainvisor_progress_total_steps"] == 30
    assert s["trainvisor_checkpoint_size_bytes"] > 0
    assert s["trainvisor_checkpoint_cost_seconds"] > 0
    assert s["trainvisor_checkpoint_interval_advised_seconds"] > 0
    assert fail_once["health"][0] == 200 and fail_once["health"][2] == "ok\n"
    assert s["trainvisor_goodput_upper_bound"] == 0      # progress lines and checkpoints seen
    # The job's series beside the container's (its first container: the same account).
    assert s["trainvisor_job_containers"] == 1
    job_badput = sum(v for k, v in s.items() if k.startswith("trainvisor_job_badput_seconds"))
    assert job_badput + s["trainvisor_job_productive_seconds"] == pytest.approx(
        s["trainvisor_job_wall_seconds"], abs=0.01)


def test_scrape_passes_promtool(fail_once, tmp_path):
    r = subprocess.run(["promtool", "check", "metrics"], input=fail_once["text"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_summary_on_stderr_and_in_the_file(fail_once):
    j = fail_once["summary"]
    assert j["restarts"] == 1 and j["lost_steps"] == 5 and j["exit_code"] == 0
    assert 0 < j["goodput"] < 1
    assert sum(j["phase_seconds"].values()) == pytest.approx(j["wall_seconds"], rel=1e-6)
    assert j["advised_interval_seconds"] > 0 and j["mtbf_source"] == "observed"
    assert "goodput summary (one node)" in fail_once["stderr"]
    assert "badput: lost_progress" in fail_once["stderr"]
    assert not list(fail_once["tmp"].glob("summary.json.tmp"))


def test_dashboard_uses_only_exported_metrics(fail_once):
    exported = {re.match(r"[a-z_:]+", k).group(0) for k in samples(fail_once["text"])}
    dash = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 8
    for e in exprs:
        names = set(re.findall(r"\btrainvisor_[a-z_]+", e))
        assert names, e
        assert names <= exported, (e, names - exported)


def test_bad_options_are_refused_before_anything_starts(tmp_path):
    for args, needle in ((["--progress-regex", "step (\\d+)"], "--progress-regex"),
                         (["--progress-regex", "step (?<step>\\d+"], "--progress-regex"),
                         (["--metrics-port", "70000"], "--metrics-port"),
                         (["--mtbf-hours", "-1"], "--mtbf-hours")):
        r = subprocess.run([BIN, "run", "--preflight", "none", *args, "--no-python", "/bin/true"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert r.returncode == 78, (args, r.stderr)
        assert needle in r.stderr


def test_metrics_port_in_use_is_refused(tmp_path):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        r = subprocess.run([BIN, "run", "--preflight", "none", "--metrics-address", "127.0.0.1",
                            "--metrics-port", str(s.getsockname()[1]), "--no-python", "/bin/true"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    finally:
        s.close()
    assert r.returncode == 78 and "--metrics-port" in r.stderr, r.stderr


def test_two_nodes_count_the_restart_once(tmp_path):
    """Node 1's worker fails once; node 0 (the job-level figures) and node 1 both see one restart."""
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    release = tmp_path / "release"
    master, rdzv = free_ports(2)
    ports = free_ports(2)
    procs = []
    for node in range(2):
        argv = run_argv(tmp_path, ports[node], tmp_path / f"summary{node}.json",
                        "--nnodes", "2", "--node-rank", str(node), "--master-addr", "127.0.0.1",
                        "--master-port", str(master), "--rdzv-port", str(rdzv), "--rdzv-token", "goodput",
                        "--nproc-per-node", "1", "--failure-file", str(tmp_path / f"failure{node}"),
                        "--no-python", PY, str(script), str(tmp_path / "ckpt"), str(release), "1")
        procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"node{node}.log", "w"),
                                      cwd=tmp_path, start_new_session=True))
    try:
        s0 = samples(wait_for(ports[0], procs[0], lambda s: s.get("trainvisor_progress_step", 0) >= 29,
                              "node 0 at step 29"))
        s1 = samples(scrape(ports[1])[2])
        release.touch()
        codes = [p.wait(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    logs = "\n".join((tmp_path / f"node{n}.log").read_text() for n in range(2))
    assert codes == [0, 0], logs
    assert s0["trainvisor_restarts_total"] == 1 and s0["trainvisor_failures_total"] == 1, logs
    assert s1["trainvisor_restarts_total"] == 1
    assert s0["trainvisor_lost_steps_total"] == 5
    assert 0 < s0["trainvisor_goodput_ratio"] < 1
    assert s0['trainvisor_info{version="%s",node_rank="0",nnodes="2"}' % _version()] == 1
    j0 = json.loads((tmp_path / "summary0.json").read_text())
    assert j0["job_level"] and j0["restarts"] == 1 and j0["lost_steps"] == 5
    assert "node 0 of 2: job-level figures" in logs


def test_a_hang_is_badput_hang_not_productive(tmp_path):
    """Steps 0..5, then silence: the time from the last step to the hang verdict is badput
    "hang". Checked against the summary's own figures: productive is the measured steps' time
    (steps x seconds per step), and hang at least the --hang-timeout the verdict waited for."""
    worker = tmp_path / "w.sh"
    worker.write_text('for i in 0 1 2 3 4 5; do echo "step $i"; sleep 0.2; done\nexec sleep 600\n')
    summary = tmp_path / "summary.json"
    p = subprocess.run([BIN, "run", "--preflight", "none", "--gpu-health", "off",
                        "--warm-standby", "off", "--nproc-per-node", "1", "--max-restarts", "0",
                        "--hang-timeout", "2", "--grace-period", "1",
                        "--progress-regex", r"step (?<step>\d+)", "--summary-file", str(summary),
                        "--no-python", "/bin/sh", str(worker)],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 124, p.stderr
    j = json.loads(summary.read_text())
    hang = j["badput"]["hang"]["seconds"]
    running = j["phase_seconds"]["running"]
    assert j["step"] == 5 and not j["goodput_upper_bound"], j
    # to the millisecond: the JSON's figures are each rounded, and the hang is seconds
    assert abs(j["productive_seconds"] - 5 * j["seconds_per_step"]) < 1e-3, j
    assert hang >= 2, j
    others = sum(j["badput"][c]["seconds"] for c in ("startup", "checkpoint_stall", "lost_progress"))
    assert abs(running - others - hang - j["productive_seconds"]) < 1e-3, j
    assert abs(j["goodput"] - j["productive_seconds"] / j["wall_seconds"]) < 1e-6, j
    assert "badput: hang" in p.stderr


def _version():
    r = subprocess.run([BIN, "version", "--json"], capture_output=True, text=True, timeout=60)
    try:
        return json.loads(r.stdout)["trainvisor"]
    except (ValueError, KeyError):
        return "0.1.0"
