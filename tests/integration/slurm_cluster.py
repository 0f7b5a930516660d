"""The project's Slurm cluster for the integration tests (tests/integration/test_slurm.py,
test_slurm_edges.py): the `slurm` fixture (scripts/slurm-cluster.sh start, idempotent; stopped
again at the end when this module started it; skipped, saying so, when not root), SlurmCluster
(the clients' environment, srun/sbatch runs, job ids, scancel), the rendered sbatch script less
pyxis's --container-image, and waits on files and job states. No timed assertions: timeouts only
stop hangs. A wait that gives up says what the cluster looked like (`report`: the nodes' states
and reasons, the queue with each job's reason, the daemons' last log lines), and a wait stops at
once when a node is down, drained or not responding, which no waiting mends.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON; TV_SLURM_DIR
(default /tmp/tv-slurm)."""
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

import tvtest

SOURCE_DIR = tvtest.SOURCE_DIR
TRAINVISOR = tvtest.BIN
PYTHON = tvtest.PYTHON
HELPERS = tvtest.HELPERS
CLUSTER = SOURCE_DIR / "scripts" / "slurm-cluster.sh"
SLURM_DIR = os.environ.get("TV_SLURM_DIR", "/tmp/tv-slurm")
TIMEOUT_S = 300


@pytest.fixture(scope="module")
def slurm():
    if os.geteuid() != 0:
        pytest.skip("a real Slurm cluster needs root (slurmd runs the job steps); not root here")
    env = {**os.environ, "TV_SLURM_DIR": SLURM_DIR}
    running = subprocess.run(["bash", str(CLUSTER), "status"], env=env, capture_output=True).returncode == 0
    r = subprocess.run(["bash", str(CLUSTER), "start"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, f"the Slurm cluster did not start:\n{r.stdout}\n{r.stderr}"
    yield SlurmCluster()
    if not running:
        subprocess.run(["bash", str(CLUSTER), "stop"], env=env, capture_output=True, timeout=120)


class SlurmCluster:
    def env(self, tmp, **extra):
        home = tmp / "home"
        home.mkdir(exist_ok=True)
        return {"PATH": "/usr/bin:/bin:/usr/sbin", "HOME": str(home), "LANG": "C.UTF-8",
                "TMPDIR": str(tmp), "PYTHONDONTWRITEBYTECODE": "1", "GLOO_SOCKET_IFNAME": "lo",
                "SLURM_CONF": f"{SLURM_DIR}/slurm.conf", **extra}

    def run(self, tmp, argv, timeout=TIMEOUT_S, **kw):
        return subprocess.run(argv, env=self.env(tmp), cwd=tmp, capture_output=True, text=True,
                              timeout=timeout, **kw)

    def start(self, tmp, argv, name):
        log = open(tmp / f"{name}.log", "wb")
        p = subprocess.Popen(argv, env=self.env(tmp), cwd=tmp, stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        p.log_path = tmp / f"{name}.log"
        return p

    def job_id(self, name):
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            out = subprocess.run(["squeue", "-h", "-n", name, "-o", "%i"], env=self.env(Path("/tmp")),
                                 capture_output=True, text=True).stdout.split()
            if out:
                return out[0]
            time.sleep(0.2)
        pytest.fail(f"job {name} never appeared in squeue:\n{report()}")

    def cancel(self, job_id, signal=None):
        argv = ["scancel", *(["--signal", signal] if signal else []), job_id]
        subprocess.run(argv, env=self.env(Path("/tmp")), check=True, timeout=60)


def client(argv):
    """A Slurm client's output (stdout and stderr), or why it gave none, within 30 s."""
    env = {"PATH": "/usr/bin:/bin:/usr/sbin", "SLURM_CONF": f"{SLURM_DIR}/slurm.conf"}
    try:
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
        return r.stdout, r.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return "", f"{argv[0]}: {e}"


def report():
    """What the cluster looks like, for a failure's message."""
    parts = ["".join(client(argv)) for argv in (["sinfo", "-N", "-o", "%N %T %E"],
                                                 ["squeue", "-o", "%i %j %T %r %N"])]
    for log in sorted(Path(SLURM_DIR, "log").glob("slurm*.log")):
        parts.append(f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:]))
    return "\n".join(parts)


BROKEN = re.compile(r"down|drain|drng|fail|\*$")


def broken_nodes():
    """The nodes slurmctld says cannot run a job now ("tvn2 down*", "tvn1 drain"), or []."""
    out, _ = client(["sinfo", "-h", "-N", "-o", "%N %t"])
    return [line for line in out.splitlines() if BROKEN.search(line.split()[-1] if line.split() else "")]


_last_check = [0.0]


def check_cluster(what, every=5.0):
    """Fails at once, with the report, where a node cannot run jobs (waiting would not mend it);
    asks slurmctld at most every `every` seconds."""
    if time.monotonic() - _last_check[0] < every:
        return
    _last_check[0] = time.monotonic()
    broken = broken_nodes()
    if broken:
        pytest.fail(f"{what}: the Slurm cluster has nodes that cannot run jobs ({', '.join(broken)}):\n"
                    + report())


def tv_run(*args, nproc=1, grace=10):
    return [str(TRAINVISOR), "run", "--nproc-per-node", str(nproc), "--preflight", "none",
            "--grace-period", str(grace), "--peer-timeout", "30", "--rdzv-timeout", "120",
            "--failure-file", "failure-%n", *args]


def wait_for(pattern, count, where, procs):
    deadline = time.monotonic() + TIMEOUT_S
    while len(list(where.glob(pattern))) < count:
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            logs = "\n".join(p.log_path.read_text(errors="replace")[-4000:] for p in procs)
            pytest.fail(f"never saw {count} x {pattern}:\n{logs}\n{report()}")
        check_cluster(f"waiting for {count} x {pattern}")
        time.sleep(0.1)


def render_script(tmp, nodes, command, run_args, name, **extra):
    """`trainvisor render --target slurm` as it is, less pyxis's --container-image (no pyxis here);
    `extra`: more fields of the job description (grace_period, max_restarts ...)."""
    (tmp / "ckpt").mkdir()
    cfg = {"name": name, "image": "unused", "nodes": nodes, "gpus_per_node": 0,
           "trainvisor": str(TRAINVISOR), "checkpoint_dir": str(tmp / "ckpt"),
           "run_args": ["--preflight", "none", "--nproc-per-node", "1", "--peer-timeout", "30",
                        "--rdzv-timeout", "120", "--failure-file", "failure-%n", *run_args],
           "command": [str(c) for c in command], **extra}
    (tmp / "job.json").write_text(json.dumps(cfg))
    r = subprocess.run([str(TRAINVISOR), "render", "--config", str(tmp / "job.json"), "--target", "slurm",
                        "--output", str(tmp / "job.sbatch")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    text = (tmp / "job.sbatch").read_text()
    assert "--open-mode=append" in text and "--kill-on-bad-exit" not in text, text
    (tmp / "job.sbatch").write_text(re.sub(r" --container-image=\S+", "", text))
    return tmp / "job.sbatch"


def sbatch(slurm, tmp, script, *args):
    r = slurm.run(tmp, ["sbatch", "--parsable", "-o", str(tmp / "batch.out"), *args, str(script)], timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().split(";")[0]


def job_field(slurm, job, field):
    out = slurm.run(Path("/tmp"), ["scontrol", "show", "job", job], timeout=60).stdout
    m = re.search(rf"\b{field}=(\S+)", out)
    return m.group(1) if m else None


def wait_job_done(slurm, job, tmp):
    """Until the job has left RUNNING and COMPLETING; then its sacct line (from jobcomp/filetxt)."""
    deadline = time.monotonic() + TIMEOUT_S
    while job_field(slurm, job, "JobState") in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING"):
        assert time.monotonic() < deadline, (tmp / "batch.out").read_text(errors="replace") + report()
        check_cluster(f"waiting for job {job} to end")
        time.sleep(0.5)
    return sacct(slurm, job)


def sacct(slurm, job):
    deadline = time.monotonic() + 60
    while True:
        r = slurm.run(Path("/tmp"), ["sacct", "-c", "-n", "-P", "-j", job, "-o", "JobID,State,ExitCode"], timeout=60)
        rows = [l.split("|") for l in r.stdout.splitlines() if l.split("|")[0] == job]
        if rows or time.monotonic() > deadline:
            assert rows, (r.stdout, r.stderr)
            return rows[-1][1], rows[-1][2]
        time.sleep(0.5)


def wait_file(path, job_out, timeout=TIMEOUT_S):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, (f"never saw {path}:\n" + job_out.read_text(errors="replace")[-6000:]
                                             + report())
        check_cluster(f"waiting for {path}")
        time.sleep(0.1)
