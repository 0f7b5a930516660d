"""The job's ledger, honest goodput and MFU against the real binary (docs/observability.md).

Three containers of one job in a row on one checkpoint dir, with gaps between them: the first is
SIGKILLed (its last heartbeat stands), the second stopped by SIGTERM, the third finishes. The
third's summary holds one account of the whole job whose causes add up to the wall time from the
first start to the last exit. Also: a corrupt ledger and another job's are set aside, never merged;
a run with no progress signal reports its goodput as an upper bound; --flops-per-step with a fake
libcuda that names the GPU gives MFU by the formula, and only the `__query` child loads libcuda."""
import json
import os
import re
import signal
import subprocess
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

import tvtest

JOB = "ledger-job-1"
INTERVAL = 0.5  # --ledger-interval of the test runs
# Measured from before each Popen to after its exit, trainvisor's own clock starts a moment later
# and the process ends a moment after its last write; under a loaded CI machine that is well below.
TOLERANCE_S = 1.0

# Prints "step N" every 50 ms from where it resumed (skrl's agent_N.pt, a zip as torch.save
# writes), saves a checkpoint every 10 steps, and exits 0 at step `last` (or runs until stopped).
# At step `hold` (when given) it stops making progress and waits to be stopped: the step the
# ledger last saw and the newest checkpoint are then known, whatever the machine's load.
SCRIPT = textwrap.dedent(r"""
    import io, os, re, sys, time, zipfile
    ckpt, last = sys.argv[1], int(sys.argv[2])
    hold = int(sys.argv[3]) if len(sys.argv) > 3 else None
    resume = os.environ.get("TRAINVISOR_RESUME_CHECKPOINT")
    start = int(re.search(r"agent_(\d+)\.pt$", resume).group(1)) if resume else 0
    run = os.path.join(ckpt, "Task", "2025-01-01_00-00-00_ppo_torch", "checkpoints")
    os.makedirs(run, exist_ok=True)
    for it in range(start, last + 1):
        print(f"step {it}", flush=True)
        if it % 10 == 0 and it > start:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as z:
                z.writestr("archive/data.pkl", b"x" * 1024)
            tmp = os.path.join(run, f".agent_{it}.tmp")
            with open(tmp, "wb") as f:
                f.write(buf.getvalue())
            os.rename(tmp, os.path.join(run, f"agent_{it}.pt"))
        while it == hold:
            time.sleep(1)
        time.sleep(0.05)
""")


def argv(tmp, *extra, job=JOB, last=100000, summary=None, hold=None):
    return [str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "1",
            "--checkpoint-dir", str(tmp / "ckpt"), "--checkpoint-format", "skrl",
            "--progress-regex", r"step (?<step>\d+)", "--run-id", job,
            "--ledger-interval", str(INTERVAL), "--grace-period", "3",
            "--summary-file", str(summary or tmp / "summary.json"),
            "--failure-file", str(tmp / "failure"), "--termination-log", str(tmp / "termlog"),
            *extra, "--no-python", tvtest.PYTHON, str(tmp / "train.py"), str(tmp / "ckpt"),
            str(last), *([] if hold is None else [str(hold)])]


def ledger_path(ckpt):
    files = list(Path(ckpt).glob(".trainvisor-ledger-*.json"))
    assert len(files) <= 1, files
    return files[0] if files else None


def read_ledger(ckpt):
    p = ledger_path(ckpt)
    if p is None:
        return None
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None  # never half written: only a race with the rename on a slow machine


def wait_for_record(proc, ckpt, index, step, timeout=60):
    """Waits until the ledger's record `index` has reached `step`; returns it."""
    until = time.time() + timeout
    while time.time() < until:
        if proc.poll() is not None:
            pytest.fail(f"trainvisor exited {proc.returncode} before record {index} reached {step}")
        led = read_ledger(ckpt)
        recs = [r for r in (led or {}).get("records", []) if r["index"] == index]
        if recs and (recs[0]["last_step"] or -1) >= step:
            return recs[0]
        time.sleep(0.05)
    pytest.fail(f"record {index} never reached step {step}: {read_ledger(ckpt)}")


def start(tmp, *extra, stderr=subprocess.PIPE, **kw):
    return subprocess.Popen(argv(tmp, *extra, **kw), env=tvtest.base_env(), cwd=tmp,
                            stdout=subprocess.PIPE, stderr=stderr, text=True)


def wait_for_line(proc, path, text, timeout=60):
    """Waits until the log file `path` of `proc` has a line holding `text`; returns the log."""
    until = time.time() + timeout
    while time.time() < until:
        log = path.read_text()
        if text in log:
            return log
        if proc.poll() is not None:
            pytest.fail(f"trainvisor exited {proc.returncode} before logging {text!r}: {log}")
        time.sleep(0.05)
    pytest.fail(f"never logged {text!r}: {path.read_text()}")


@pytest.fixture
def job_dir(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "ckpt").mkdir()
    return tmp_path


def test_three_containers_give_one_account_that_adds_up(job_dir):
    tmp, ckpt = job_dir, job_dir / "ckpt"
    t_first = time.time()
    # Each container holds at step 25 (then 45) once it gets there: the ledger's last step is 25
    # and the newest checkpoint agent_20.pt when it is stopped, so exactly 5 steps are done again
    # at each boundary (a worker that ran on while the test waited for the ledger used to reach
    # agent_30.pt first on a busy machine: nothing lost).
    a = start(tmp, hold=25)
    wait_for_record(a, ckpt, 0, 25)
    a.send_signal(signal.SIGKILL)
    a.communicate(timeout=30)
    gap1 = 1.0
    time.sleep(gap1)

    log_b = tmp / "b.log"
    with open(log_b, "w") as f:
        b = start(tmp, hold=45, stderr=f)
    first_b = wait_for_record(b, ckpt, 1, 45)
    wait_for_line(b, log_b, "agent_40.pt (")  # the watcher has reported its newest checkpoint
    b.send_signal(signal.SIGTERM)
    b.communicate(timeout=30)
    err_b = log_b.read_text()
    assert b.returncode == 143, err_b
    assert "container 2 of job 'ledger-job-1'" in err_b
    # The first checkpoint it saw says so (issue 39: it said "-1.0 s after the previous").
    seen = [l for l in err_b.splitlines() if "checkpoint complete:" in l]
    assert seen and seen[0].endswith("s, the first since trainvisor started)"), err_b
    assert all(re.search(r"s, [\d.]+ s after the previous\)$", l) for l in seen[1:]), err_b
    gap2 = 1.0
    time.sleep(gap2)

    c = start(tmp, last=60)
    _, err_c = c.communicate(timeout=60)
    t_last = time.time()
    assert c.returncode == 0, err_c

    job = json.loads((tmp / "summary.json").read_text())["job"]
    assert job["containers"] == 3
    causes = sum(job["badput_seconds"].values())
    assert abs(causes + job["productive_seconds"] - job["wall_seconds"]) < 1e-6, job
    # One account from the first start to the last exit.
    assert abs(job["wall_seconds"] - (t_last - t_first)) < TOLERANCE_S, (job, t_last - t_first)
    # Outside: both gaps, plus what the killed container did after its last heartbeat (at most
    # one interval) and each process's start and exit around trainvisor's own clock.
    outside = job["badput_seconds"]["outside"]
    assert gap1 + gap2 - 0.05 <= outside <= gap1 + gap2 + INTERVAL + TOLERANCE_S, job
    # Across the first boundary: resumed from agent_20.pt after reaching step 25.
    assert first_b["start_step"] == 20, first_b
    assert job["lost_steps"] == 10, job  # 25 - 20 at the first boundary, 45 - 40 at the second
    assert job["badput_seconds"]["lost_progress"] > 0, job
    assert job["goodput_upper_bound"] is False
    assert "job summary (its ledger: 3 containers so far)" in err_c

    led = read_ledger(ckpt)
    assert led["job_id"] == JOB
    assert [(r["index"], r["ended"], r["exit_code"]) for r in led["records"]] == \
        [(0, False, None), (1, True, 143), (2, True, 0)]
    assert not list(ckpt.glob(".trainvisor-ledger-*.tmp*"))


def test_job_series_on_metrics_beside_the_containers(job_dir):
    tmp, ckpt = job_dir, job_dir / "ckpt"
    first = start(tmp, last=5)
    first.communicate(timeout=60)
    port = tvtest.free_port()
    p = start(tmp, "--metrics-port", str(port), "--metrics-address", "127.0.0.1")
    try:
        wait_for_record(p, ckpt, 1, 3)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
    finally:
        p.kill()
        p.communicate()
    assert "trainvisor_job_containers 2\n" in text
    assert re.search(r'^trainvisor_job_badput_seconds\{cause="outside"\} [0-9.e+-]+$', text, re.M)
    assert "trainvisor_goodput_ratio " in text and "trainvisor_job_goodput_ratio " in text


def test_an_overlapping_container_of_the_job_is_not_overwritten(job_dir):
    # A replacement that starts while the old container is still in its grace period: each keeps
    # the other's record when it writes its own.
    tmp, ckpt = job_dir, job_dir / "ckpt"
    old = start(tmp, summary=tmp / "old.json")
    new = None
    try:
        wait_for_record(old, ckpt, 0, 3)
        new = start(tmp, summary=tmp / "new.json")
        wait_for_record(new, ckpt, 1, 3)
        # The old one writes again (10 steps later) and keeps the new one's record ...
        wait_for_record(old, ckpt, 0, read_ledger(ckpt)["records"][0]["last_step"] + 10)
        led = read_ledger(ckpt)
        assert [r["index"] for r in led["records"]] == [0, 1], led
        # ... and the new one keeps the old one's.
        wait_for_record(new, ckpt, 1, led["records"][1]["last_step"] + 10)
        assert [r["index"] for r in read_ledger(ckpt)["records"]] == [0, 1]
    finally:
        for p in (old, new):
            if p is not None:
                p.kill()
                p.communicate()


# Each worker says it started, then waits until all of the job's containers have (a barrier over
# files), so every trainvisor has read the ledger before any writes it.
BARRIER = textwrap.dedent(r"""
    import os, sys, time
    here, n = sys.argv[1], int(sys.argv[2])
    open(os.path.join(here, str(os.getpid())), "w").close()
    while len(os.listdir(here)) < n:
        time.sleep(0.02)
""")


def test_containers_of_the_job_started_together_keep_a_record_each(tmp_path):
    # Issue 58: four containers started together left 3 records ("container 2" twice). The ledger's
    # read-modify-write holds its directory's flock, and an index another container wrote first
    # is given up for the next free one.
    n, ckpt, started = 8, tmp_path / "ckpt", tmp_path / "started"
    ckpt.mkdir()
    started.mkdir()
    (tmp_path / "barrier.py").write_text(BARRIER)
    procs = [subprocess.Popen(
        [str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "1",
         "--checkpoint-dir", str(ckpt), "--run-id", "together", "--ledger-interval", "3600",
         "--summary-file", str(tmp_path / f"summary{i}.json"), "--no-python", tvtest.PYTHON,
         str(tmp_path / "barrier.py"), str(started), str(n)],
        env=tvtest.base_env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True) for i in range(n)]
    logs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * n, logs
    led = read_ledger(ckpt)
    assert sorted(r["index"] for r in led["records"]) == list(range(n)), led
    assert all(r["ended"] for r in led["records"]), led


def bad_ledger_run(tmp, content=None, link_to=None):
    """A first container writes the job's ledger; it is replaced by `content` (a function of the
    good text) or a link, and a second container runs."""
    ckpt = tmp / "ckpt"
    first = start(tmp, last=2)
    first.communicate(timeout=60)
    path = ledger_path(ckpt)
    if content is not None:
        content = content(path.read_text())
    if link_to is not None:
        path.unlink()
        path.symlink_to(link_to)
    else:
        path.write_text(content)
    r = subprocess.run(argv(tmp, last=2), env=tvtest.base_env(), cwd=tmp, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return path, r.stderr, content


def wrong_type(good):
    j = json.loads(good)
    j["records"][0]["productive_seconds"] = "x"
    return json.dumps(j)


@pytest.mark.parametrize("content,why", [
    (lambda good: good[: len(good) // 2], "not JSON"),
    (lambda good: wrong_type(good), "field 'records[0].productive_seconds' is not a number below 1e15"),
    (lambda good: good.replace(f'"job_id": "{JOB}"', '"job_id": "someone-else"'),
     "the ledger of job 'someone-else', not of 'ledger-job-1'; not merged"),
], ids=["truncated", "wrong-type", "another-job"])
def test_a_corrupt_or_foreign_ledger_is_set_aside_with_one_warning(job_dir, content, why):
    path, err, content = bad_ledger_run(job_dir, content)
    warnings = [l for l in err.splitlines() if "job ledger" in l and "set aside" in l]
    assert len(warnings) == 1 and why in warnings[0], err
    assert Path(str(path) + ".corrupt").read_text() == content
    fresh = json.loads(path.read_text())
    assert fresh["job_id"] == JOB and [r["index"] for r in fresh["records"]] == [0]
    assert json.loads((job_dir / "summary.json").read_text())["job"]["containers"] == 1


def test_a_link_at_the_ledger_is_not_followed(job_dir, tmp_path_factory):
    target = tmp_path_factory.mktemp("elsewhere") / "precious"
    target.write_text("keep me")
    path, err, _ = bad_ledger_run(job_dir, link_to=target)
    assert "a symbolic link; not followed" in err
    assert target.read_text() == "keep me"
    assert Path(str(path) + ".corrupt").is_symlink()
    assert not path.is_symlink() and json.loads(path.read_text())["job_id"] == JOB


def test_goodput_without_progress_is_an_upper_bound(tmp_path):
    port = tvtest.free_port()
    summary = tmp_path / "summary.json"
    # The worker prints nothing and runs until the test has scraped the running phase (a worker
    # of 2 s ended before the first scrape on a busy machine).
    go = tmp_path / "go"
    worker = f"import os, time\nwhile not os.path.exists({str(go)!r}):\n    time.sleep(0.05)\n"
    p = subprocess.Popen([str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "1",
                          "--metrics-port", str(port), "--summary-file", str(summary),
                          "--no-python", tvtest.PYTHON, "-c", worker],
                         env=tvtest.base_env(), cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    text, until = "", time.time() + 120  # only guards against a hang
    try:
        while "trainvisor_current_phase{phase=\"running\"} 1" not in text:
            assert time.time() < until and p.poll() is None, text
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode()
            except OSError:
                time.sleep(0.05)
    finally:
        go.touch()
    _, err = p.communicate(timeout=60)
    assert "trainvisor_goodput_upper_bound 1\n" in text
    j = json.loads(summary.read_text())
    assert j["goodput_upper_bound"] is True
    assert j["goodput_note"] == "no progress signal: set --progress-regex"
    assert re.search(r"goodput +<= [01]\.\d{3} \(upper bound: no progress signal: set "
                     r"--progress-regex\)", err), err


# A libcuda.so.1 that answers the calls of trainvisor's GPU query with one GPU named by
# TV_FAKE_GPU_NAME, and logs each process that loads it (TV_FAKE_LOG).
FAKE_CUDA = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void fake_init(void) {
  const char* log = getenv("TV_FAKE_LOG");
  FILE* f = log ? fopen(log, "a") : NULL;
  if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
}
int cuInit(unsigned flags) { (void)flags; return 0; }
int cuDriverGetVersion(int* v) { *v = 12040; return 0; }
int cuDeviceGetCount(int* n) { *n = 1; return 0; }
int cuDeviceGet(int* d, int i) { *d = i; return 0; }
int cuDeviceGetName(char* name, int len, int d) {
  (void)d; snprintf(name, (size_t)len, "%s", getenv("TV_FAKE_GPU_NAME")); return 0; }
int cuDeviceGetAttribute(int* v, int attr, int d) { (void)d; *v = attr == 75 ? 9 : 0; return 0; }
int cuDeviceTotalMem_v2(size_t* b, int d) { (void)d; *b = (size_t)80 << 30; return 0; }
int cuGetErrorString(int r, const char** s) { (void)r; *s = "fake"; return 0; }
'''


def test_mfu_from_flops_per_step_and_the_gpus_peak(tmp_path):
    cc = tvtest.shutil.which("cc") or tvtest.shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the fake libcuda")
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "cuda.c").write_text(FAKE_CUDA)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(libs / "libcuda.so.1"), str(libs / "cuda.c")],
                   check=True)
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "ckpt").mkdir()
    env = tvtest.base_env(LD_LIBRARY_PATH=str(libs), TV_FAKE_GPU_NAME="NVIDIA H100 80GB HBM3",
                          TV_FAKE_LOG=str(tmp_path / "loads"))
    flops = 2.5e13
    p = subprocess.Popen(argv(tmp_path, "--flops-per-step", str(flops), last=40), env=env,
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    j = json.loads((tmp_path / "summary.json").read_text())
    assert j["gpu_name"] == "NVIDIA H100 80GB HBM3"
    assert j["gpu_peak_flops"] == 989.4e12
    gpus = 1
    assert j["mfu"] == pytest.approx(flops / j["seconds_per_step"] / (gpus * 989.4e12), rel=1e-9)
    assert 0 < j["mfu"] < 1
    assert "MFU against NVIDIA H100 80GB HBM3 (H100 SXM): 989.4 TFLOP/s" in err
    # Only the query child loaded libcuda: trainvisor itself (PID 1 in a container) never does.
    loaders = (tmp_path / "loads").read_text().split()
    assert len(loaders) == 1 and loaders[0] != str(p.pid), loaders
