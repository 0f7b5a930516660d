"""Hangs v2 (docs/supervision.md, "Hangs"): real Python workers on CPU, the real binary.

--hang-timeout auto judges progress, not silence: a worker that keeps printing warnings but makes
no new step is a stall (124, named in the failure file); a worker's first step may take its
start-up deadline (--startup-timeout) and one that never makes it is a start-up hang; a tqdm bar
redrawn with '\\r' and no newline is output for --hang-timeout S and steps for auto.
"""
import re

import pytest

import tvtest

TIMEOUT = 90  # every case ends well before this; a hang fails the test
H = tvtest.Hermetic("TV_HANGS_TEST", TIMEOUT)
STEP = r"step (?<step>\d+)"


@pytest.fixture(autouse=True)
def _kill_leftovers():
    yield
    H.kill_leftovers()


def script(tmp_path, text, name="worker.py"):
    p = tmp_path / name
    p.write_text(text)
    return p


STALLED = '''
import time
for i in range(8):
    print(f"step {i}", flush=True)
    time.sleep(0.05)
while True:  # a collective that never completes, and NCCL saying so
    print("NCCL WARN still waiting", flush=True)
    time.sleep(0.2)
'''


def test_a_stalled_worker_that_keeps_printing_is_a_hang_and_the_failure_says_stall(tmp_path):
    failure = tmp_path / "failure"
    r = H.run("--nproc-per-node", 1, "--max-restarts", 0, "--hang-timeout", "auto",
              "--progress-regex", STEP, "--stall-floor", 2, "--startup-timeout", 30,
              "--failure-file", failure, script(tmp_path, STALLED))
    assert r.returncode == 124, r.stderr
    report = failure.read_text()
    assert "hang (stall: no new step for" in report, report
    assert "stacks on hang" in report, report


TQDM = '''
import sys, time
for i in range(1, 41):  # 4 s of redraws, no newline: longer than --hang-timeout 2
    sys.stdout.write(f"\\rTraining: {i * 100 // 40:3d}%| {i}/40 [00:0{i // 10}<00:01, 10.00it/s]")
    sys.stdout.flush()
    time.sleep(0.1)
sys.stdout.write("\\n")
'''


@pytest.mark.parametrize("rules", [["--hang-timeout", 2],
                                   ["--hang-timeout", "auto", "--progress-regex", "auto",
                                    "--stall-floor", 2, "--startup-timeout", 30]],
                         ids=["silence", "auto"])
def test_a_tqdm_bar_redrawn_without_newlines_is_never_a_hang(tmp_path, rules):
    r = H.run("--nproc-per-node", 1, "--max-restarts", 0, *rules, script(tmp_path, TQDM))
    assert r.returncode == 0, r.stderr
    assert "hung" not in r.stderr, r.stderr


SLOW_START = '''
import time
time.sleep(6)  # imports, CUDA and NCCL init, a checkpoint load
for i in range(10):
    print(f"step {i}", flush=True)
    time.sleep(0.1)
'''


def test_a_slow_start_up_within_the_startup_deadline_is_no_hang(tmp_path):
    r = H.run("--nproc-per-node", 1, "--max-restarts", 0, "--hang-timeout", "auto",
              "--progress-regex", STEP, "--stall-floor", 2, "--startup-timeout", 20,
              script(tmp_path, SLOW_START))
    assert r.returncode == 0, r.stderr


NEVER_STARTS = '''
import time
while True:
    print("loading the checkpoint...", flush=True)
    time.sleep(0.5)
'''


def test_no_first_step_by_the_startup_deadline_is_a_start_up_hang(tmp_path):
    failure = tmp_path / "failure"
    r = H.run("--nproc-per-node", 1, "--max-restarts", 0, "--hang-timeout", "auto",
              "--progress-regex", STEP, "--startup-timeout", 3, "--failure-file", failure,
              script(tmp_path, NEVER_STARTS))
    assert r.returncode == 124, r.stderr
    report = failure.read_text()
    assert "hang (start-up: no first step for" in report, report


HEARTBEAT = '''
import os, pathlib, time
beat = pathlib.Path(os.environ["TRAINVISOR_HEARTBEAT_FILE"])
for i in range(40):  # 4 s of steps, silent but for the heartbeat
    beat.write_text(str(i))
    time.sleep(0.1)
'''


def test_heartbeat_touches_are_steps_without_a_progress_regex(tmp_path):
    r = H.run("--nproc-per-node", 2, "--max-restarts", 0, "--hang-timeout", "auto",
              "--stall-floor", 2, "--startup-timeout", 30, script(tmp_path, HEARTBEAT))
    assert r.returncode == 0, r.stderr
    assert "only the heartbeat file" in r.stderr, r.stderr


def test_startup_timeout_without_auto_is_refused(tmp_path):
    r = H.run("--nproc-per-node", 1, "--hang-timeout", 5, "--startup-timeout", 20,
              script(tmp_path, SLOW_START))
    assert r.returncode == 64, r.stderr
    assert "--startup-timeout" in r.stderr and "--hang-timeout auto" in r.stderr, r.stderr


LEDGER_JOB = '''
import time
time.sleep(2)  # a start-up the next container learns from
for i in range(8):
    print(f"step {i}", flush=True)
    time.sleep(0.05)
'''


def test_the_startup_deadline_is_learned_from_the_jobs_earlier_containers(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    worker = script(tmp_path, LEDGER_JOB)
    args = ["--nproc-per-node", 1, "--max-restarts", 0, "--hang-timeout", "auto",
            "--progress-regex", STEP, "--stall-floor", 2, "--checkpoint-dir", ckpt,
            "--run-id", "hangs-ledger-job", worker]
    first = H.run(*args)
    assert first.returncode == 0, first.stderr
    assert "none seen yet: at least 600 s" in first.stderr, first.stderr
    second = H.run(*args)
    assert second.returncode == 0, second.stderr
    learned = re.search(r"learned: 3 x the longest start-up seen, (\d+\.\d) s", second.stderr)
    assert learned, second.stderr
    assert 2.0 <= float(learned.group(1)) < 60, second.stderr  # the first container's 2 s sleep


SLOW_SECOND_SAVE = '''
import io, os, pathlib, sys, time, zipfile
ckpt = pathlib.Path(sys.argv[1]) / "checkpoints"
ckpt.mkdir(parents=True, exist_ok=True)

def checkpoint(name, seconds):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", os.urandom(4096))
    data, pieces = buf.getvalue(), 12
    with open(ckpt / name, "wb") as f:  # written slowly, piece by piece: a save under way
        for i in range(pieces):
            f.write(data[i * len(data) // pieces:(i + 1) * len(data) // pieces])
            f.flush()
            time.sleep(seconds / pieces)

step = 0
def steps(n):
    global step
    for _ in range(n):
        step += 1
        print(f"step {step}", flush=True)
        time.sleep(0.05)

steps(10)
checkpoint("agent_10.pt", 0.5)  # measured: the longest save is 0.5 s
steps(10)
checkpoint("agent_20.pt", 6)    # 12 x the first: past floor 2 s + 1.5 x 0.5 s, unless excused
steps(10)
'''


def test_a_save_the_watcher_sees_under_way_is_no_stall(tmp_path):
    """The checkpoint watcher tells a save under way (a file being written, not complete): the
    stall clock waits for it, so a save longer than the stall deadline is no hang."""
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    r = H.run("--nproc-per-node", 1, "--max-restarts", 0, "--hang-timeout", "auto",
              "--progress-regex", STEP, "--stall-floor", 2, "--startup-timeout", 30,
              "--checkpoint-dir", ckpt, script(tmp_path, SLOW_SECOND_SAVE), ckpt)
    assert r.returncode == 0, r.stderr
    assert "checkpoint complete: " in r.stderr and "agent_20.pt" in r.stderr, r.stderr
