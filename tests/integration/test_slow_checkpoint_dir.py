"""A slow or hung checkpoint directory never silences a node (issue 58, item 1): every file call
on it (the resume lookups, the watcher's scans, the job ledger's writes) runs off the thread of
the event loop, which keeps answering heartbeats, the coordinator and signals.

The file system is slowed with strace's syscall delay injection, on node 0 only and only for
calls that name the checkpoint directory or the job's ledger file (`-P`):
- a restart of a 2-node job whose node 0 looks up its resume checkpoint for seconds per file
  call (--peer-timeout 2 s): no node is lost, the job restarts and both nodes end 0 (before: both
  exited 75, "node 0 silent");
- a SIGTERM while the directory (and the failure file's path) is hung (each call held far longer
  than the test's wait): the run ends 143 without waiting for the hung calls (before: the
  watcher's join, the ledger's last write and the failure file held the exit until the calls
  returned).
No timed assertion: the waits only stop a hang. Environment: as tests/integration/test_multinode.py.
"""
import os
import shutil
import signal
import subprocess
import time

import pytest

import test_multinode as mn
import tvtest

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")

RUN_ID = "slow-ckpt-job"
FILE_CALLS = "openat,newfstatat,statx,getdents64,rename,renameat,renameat2,inotify_add_watch"


def ledger_name(job_id):
    """launcher/observability/ledger_file.cc ledger_file_name: FNV-1a of the job id."""
    h = 14695981039346656037
    for c in job_id.encode():
        h = ((h ^ c) * 1099511628211) % (1 << 64)
    return f".trainvisor-ledger-{h:016x}.json"


def slowed(ckpt, delay_us, log, also=()):
    """strace's options that delay each file call naming `ckpt`, the job's ledger or `also`."""
    paths = [ckpt, ckpt / ledger_name(RUN_ID), *also]
    return ["strace", "-f", "-qq", "-o", str(log), *[a for p in paths for a in ("-P", str(p))],
            "-e", f"trace={FILE_CALLS}",
            "-e", f"inject={FILE_CALLS}:delay_enter={delay_us}"]


class CkptJob(mn.Job):
    """A test_multinode Job whose nodes share a checkpoint directory and keep the job's ledger."""

    def __init__(self, tmp, *args, **kw):
        tmp.mkdir()
        super().__init__(tmp, *args, **kw)
        self.ckpt = tmp / "ckpt"
        self.ckpt.mkdir()
        self.fail = tmp / "fail"  # the failure file's own directory (strace -P matches it)
        self.fail.mkdir()

    def argv(self, rank, command, **kw):
        a = super().argv(rank, command, **kw)
        a[a.index("--failure-file") + 1] = str(self.fail / f"failure{rank}")
        at = a.index("--no-python")
        return a[:at] + ["--checkpoint-dir", str(self.ckpt), "--run-id", RUN_ID,
                         "--ledger-interval", "1"] + a[at:]


@pytest.fixture
def ckpt_jobs(tmp_path):
    made = []
    yield lambda *a, **kw: made.append(CkptJob(tmp_path / f"job{len(made)}", *a, **kw)) or made[-1]
    for job in made:
        job.kill_all()


def test_a_slow_resume_lookup_on_node_0_loses_no_node_at_a_restart(ckpt_jobs):
    job = ckpt_jobs(2, nproc=1, peer_timeout=2)
    slow = slowed(job.ckpt, 5_000_000, job.tmp / "strace.log")  # 5 s a call: a 20 s lookup
    node0 = job.start(0, mn.worker(job, "fail-last"), prefix=slow)
    node1 = job.start(1, mn.worker(job, "fail-last"))
    mn.expect_rc(job, node1, 0)
    mn.expect_rc(job, node0, 0)
    assert sorted(job.records(1)) == [0, 1]  # generation 1 ran on both nodes
    log0 = mn.output(node0)
    assert "looking under" in log0 and "silent" not in log0 + mn.output(node1), log0


def wait_for_line(path, text, proc, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"trainvisor exited {proc.returncode} early")
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.05)
    pytest.fail(f"never saw {text!r} in {path}")


def main_thread_exited(pid, timeout=120):
    """Waits until trainvisor's main thread has exited (a zombie, or gone): its run is over. Its
    other threads may still be held by strace inside a delayed call (strace keeps a tracee stopped
    for the whole delay, even through exit_group: an artefact of the injection; a real hung NFS
    call is killable), so the process's exit status comes only once strace lets them go."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/task/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except OSError:
            return True
        time.sleep(0.01)
    return False


def test_a_sigterm_with_a_hung_checkpoint_directory_ends_the_run(ckpt_jobs):
    job = ckpt_jobs(1, nproc=1)
    proc = job.start(0, mn.worker(job, "sleep"))
    wait_for_line(proc.log_path, "generation 0: starting", proc)
    # From now on every call naming the directory, the ledger or the failure file hangs for 10
    # minutes.
    trace = job.tmp / "strace.log"
    hang = slowed(job.ckpt, 600_000_000, trace, also=[job.fail])
    strace = subprocess.Popen(hang[:1] + ["-p", str(proc.pid)] + hang[1:],
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        # The watcher's next scan (every 2 s) or the ledger's next write (every 1 s) is inside a
        # hung call.
        wait_for_line(trace, str(job.ckpt), proc)
        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        over = main_thread_exited(proc.pid)  # a hang: 600 s
        took = time.monotonic() - began
        assert over, mn.output(proc)
        print(f"\nSIGTERM to the end of the run with a hung checkpoint directory: {took:.2f} s")
    finally:
        strace.kill()
        strace.wait()
    assert job.wait(proc) == 143, mn.output(proc)
    out = mn.output(proc)
    assert "left behind" in out or "exiting without it" in out, out


def test_a_hung_failure_file_path_does_not_hold_the_exit(ckpt_jobs):
    """The failure file is written beside the main thread and waited for at most 10 s: a path on
    a hung file system is reported and the run ends."""
    job = ckpt_jobs(1, nproc=1, max_restarts=0)
    failure = job.fail / "failure0"
    hang = ["strace", "-f", "-qq", "-o", str(job.tmp / "strace.log"), "-P", str(job.fail), "-e",
            f"trace={FILE_CALLS}", "-e", f"inject={FILE_CALLS}:delay_enter=600000000"]
    strace = job.start(0, mn.worker(job, "fail-last"), prefix=hang)
    try:
        wait_for_line(strace.log_path, "giving up", strace, timeout=180)
        with open(f"/proc/{strace.pid}/task/{strace.pid}/children") as f:
            trainvisor = int(f.read().split()[0])
        over = main_thread_exited(trainvisor)  # a hang: 600 s
    finally:
        strace.kill()  # it holds the hung thread until it goes (see main_thread_exited)
        strace.wait()
    out = mn.output(strace)
    assert over, out
    assert f"failure file {failure}: not written 10000 ms after the run's end" in out, out
