"""A confirmed save before a stop (--save-signal, docs/checkpoints.md "A save confirmed before a
stop"): a python worker with a SIGUSR1 handler that saves a checkpoint in skrl's layout atomically
(a temporary name, then a rename) is stopped (SIGTERM to trainvisor) at random moments, 100 runs:
each ends 143 with a complete checkpoint of the step the worker was at when the save signal came,
or a later one, and the summary says the save completed. And a save that does not finish within
the grace period: the summary and the ledger say so, the exit code is 143 as without
--save-signal (docs/exit-codes.md)."""
import concurrent.futures
import json
import random
import signal
import subprocess
import textwrap
import time
import zipfile
from pathlib import Path

import tvtest

# Saves every 25 steps and whenever SIGUSR1 asked, at the next step boundary (the handler only
# sets a flag, as a training loop's handler does); SIGTERM keeps its default action (death).
WORKER = textwrap.dedent("""
    import json, os, signal, sys, time, zipfile
    ckpt, save_seconds = sys.argv[1], float(sys.argv[2])
    out = os.path.join(ckpt, "checkpoints")
    os.makedirs(out, exist_ok=True)
    asked = []
    step = 0
    def on_save(signum, frame):
        asked.append(step)
        with open(os.path.join(ckpt, "asked_at"), "w") as f:
            f.write(str(step))
    signal.signal(signal.SIGUSR1, on_save)
    def save(s):
        tmp = os.path.join(out, ".saving")
        with zipfile.ZipFile(tmp, "w") as z:
            z.writestr("agent/state.json", json.dumps({"step": s}))
        time.sleep(save_seconds)                 # a save takes a while
        os.rename(tmp, os.path.join(out, f"agent_{s}.pt"))
    save(0)
    while True:
        step += 1
        print(f"step {step}", flush=True)
        time.sleep(0.004)
        if asked or step % 25 == 0:
            asked.clear()
            save(step)
""")


def newest_complete_step(ckpt):
    best = -1
    for p in (ckpt / "checkpoints").glob("agent_*.pt"):
        with zipfile.ZipFile(p) as z:
            assert z.testzip() is None
            best = max(best, json.loads(z.read("agent/state.json"))["step"])
    return best


def wait_for(path, text, proc, timeout=60):
    """Until `text` is in the file at `path` (trainvisor's stderr); the timeout only stops a hang."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        assert proc.poll() is None, path.read_text(errors="replace")
        time.sleep(0.01)
    raise AssertionError(f"no {text!r} in {path}")


def stopped_run(root, worker, delay, grace="3", save_seconds="0.02", run_id=None):
    root.mkdir(parents=True)
    ckpt = root / "ckpt"
    stderr = root / "stderr"
    summary = root / "summary.json"
    cmd = [str(tvtest.BIN), "run", "--preflight", "none", "--gpu-health", "off",
           "--nproc-per-node", "1", "--checkpoint-dir", str(ckpt), "--save-signal", "USR1",
           "--grace-period", grace, "--progress-regex", r"step (?<step>\d+)",
           "--summary-file", str(summary), "--failure-file", str(root / "failure"),
           "--termination-log", str(root / "termlog"), "--max-restarts", "0"]
    if run_id:
        cmd += ["--run-id", run_id]
    cmd += [str(worker), str(ckpt), save_seconds]
    with open(stderr, "w") as err:
        p = subprocess.Popen(cmd, env=tvtest.base_env(), stdout=subprocess.DEVNULL, stderr=err)
        try:
            # The watcher has reported the worker's first save: it watches, the handler is set.
            wait_for(stderr, "checkpoint complete: ", p)
            time.sleep(delay)  # the random moment of the stop (not a synchronisation)
            p.send_signal(signal.SIGTERM)
            code = p.wait(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
    return code, ckpt, stderr.read_text(errors="replace"), json.loads(summary.read_text())


def test_a_save_signal_before_the_stop_leaves_a_checkpoint_newer_than_the_stop(tmp_path):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    rng = random.Random(33)
    delays = [rng.uniform(0, 0.4) for _ in range(100)]

    def one(i):
        code, ckpt, err, summary = stopped_run(tmp_path / f"run{i}", worker, delays[i])
        asked_at = int((ckpt / "asked_at").read_text())
        return i, code, asked_at, newest_complete_step(ckpt), err, summary

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(one, range(100)))
    for i, code, asked_at, newest, err, summary in results:
        assert code == 143, (i, err)
        assert newest >= asked_at, (i, asked_at, newest, err)
        assert "--save-signal: the save completed" in err, (i, err)
        assert "save before the stop: completed in" in err, (i, err)
        assert summary["stop_save"]["completed"] is True, (i, summary)
        assert summary["stop_save"]["saved_step"] >= asked_at, (i, summary)
        assert summary["stop_save"]["lost_steps"] is not None, (i, summary)


def test_a_save_that_does_not_finish_in_the_grace_period_is_reported_and_the_exit_is_143(tmp_path):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER.replace("time.sleep(save_seconds)",
                                     "time.sleep(save_seconds if s == 0 else 30)"))
    code, ckpt, err, summary = stopped_run(tmp_path / "run", worker, 0.05, grace="2",
                                           run_id="job-save")
    assert code == 143, err
    assert "no complete checkpoint newer than the stop within 1.0" in err, err
    assert "save before the stop: NOT completed in time" in err, err
    assert summary["stop_save"]["completed"] is False, summary
    assert summary["stop_save"]["saved_step"] == 0, summary
    assert newest_complete_step(ckpt) == 0
    ledgers = list(ckpt.glob(".trainvisor-ledger-*.json"))
    assert len(ledgers) == 1
    record = json.loads(ledgers[0].read_text())["records"][-1]
    assert record["stop_save"]["completed"] is False, record
    assert record["exit_code"] == 143, record


def test_save_signal_needs_a_checkpoint_dir_and_a_signal_a_worker_can_handle(tmp_path):
    base = [str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "1",
            "--no-python"]
    r = subprocess.run(base + ["--save-signal", "USR1", "/bin/true"], env=tvtest.base_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 78 and "--save-signal needs --checkpoint-dir" in r.stderr, r.stderr
    r = subprocess.run(base + ["--checkpoint-dir", str(tmp_path), "--save-signal", "TERM",
                               "/bin/true"], env=tvtest.base_env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 78 and '--save-signal "TERM": a stop signal' in r.stderr, r.stderr
