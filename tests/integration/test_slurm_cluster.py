"""scripts/slurm-cluster.sh, the cluster every Slurm test runs on, started over what a CI
machine's /tmp keeps from an earlier run when its processes are gone: the saved state of a job
that was running, pid files whose pids are dead, and one whose pid another process has now.

The cluster must start empty (the old job forgotten: a node saved busy or idle whose slurmd is
gone would take jobs that never start), start every daemon the stale pid files name, kill no
stranger, and prove with a step on every node that jobs run. This is the failure a CI run met
once: every Slurm test waited 900 s for a task that never started.

Shares the `slurm` fixture (slurm_cluster.py): ctest runs no other Slurm file at the same time
(RESOURCE_LOCK tv_slurm_cluster). Needs root; skipped otherwise, saying so."""
import os
import signal
import subprocess
import time
from pathlib import Path

from slurm_cluster import CLUSTER, SLURM_DIR, TIMEOUT_S, job_field, slurm  # noqa: F401


def pids_of_job(job):
    """Every process Slurm started for `job`: its slurmstepd ("slurmstepd: [7.batch]") and the
    tasks, which carry SLURM_JOB_ID."""
    mark, step = f"SLURM_JOB_ID={job}\0".encode(), f"[{job}.".encode()
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if mark in (p / "environ").read_bytes() or step in (p / "cmdline").read_bytes():
                    out.append(int(p.name))
            except OSError:
                pass
    return out


def pid_of(name):
    return int((Path(SLURM_DIR) / name).read_text())


def kill_hard(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def gone(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def test_a_cluster_started_over_an_earlier_runs_leftovers_starts_empty_and_runs_jobs(slurm, tmp_path):
    r = slurm.run(tmp_path, ["sbatch", "--parsable", "-N3", "-J", "tv-leftover", "-o", "/dev/null",
                             "--wrap", "sleep 600"], timeout=60)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    deadline = time.monotonic() + TIMEOUT_S
    while job_field(slurm, job, "JobState") != "RUNNING":
        assert time.monotonic() < deadline, f"job {job} never ran"
        time.sleep(0.2)

    # The machine goes away: every daemon and the job's processes die at once, their files stay.
    daemons = ["munge/munged.pid", "run/slurmctld.pid"] + [f"run/slurmd-tvn{i}.pid" for i in (1, 2, 3)]
    pids = [pid_of(d) for d in daemons] + pids_of_job(job)
    for pid in pids:
        kill_hard(pid)
    deadline = time.monotonic() + 30
    while not all(gone(p) for p in pids):
        assert time.monotonic() < deadline, "the daemons did not die of SIGKILL"
        time.sleep(0.05)
    assert (Path(SLURM_DIR) / "state").is_dir() and any((Path(SLURM_DIR) / "state").iterdir())

    # After a reboot another process may have a daemon's pid.
    stranger = subprocess.Popen(["sleep", "600"])
    try:
        for name in ("run/slurmctld.pid", "run/slurmd-tvn2.pid"):
            (Path(SLURM_DIR) / name).write_text(f"{stranger.pid}\n")
        r = subprocess.run(["bash", str(CLUSTER), "start"], env={**os.environ, "TV_SLURM_DIR": SLURM_DIR},
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"the cluster did not start over the leftovers:\n{r.stdout}\n{r.stderr}"
        assert stranger.poll() is None, "the script killed a process that only had a stale pid"
    finally:
        stranger.kill()
        stranger.wait()

    # Empty: the old job is not known, and a new job on every node runs and ends 0.
    r = slurm.run(tmp_path, ["scontrol", "show", "job", job], timeout=60)
    assert r.returncode != 0 or f"JobId={job} JobName=tv-leftover" not in r.stdout, r.stdout
    r = slurm.run(tmp_path, ["srun", "-N3", "-n3", "-J", "tv-after", "bash", "-c", "echo $SLURMD_NODENAME"],
                  timeout=120)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == ["tvn1", "tvn2", "tvn3"], r.stdout
