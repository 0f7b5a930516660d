"""`trainvisor run` under a real Slurm (slurm-wlm 22.05 + munge): three named nodes tvn1..tvn3 on
this host, started by scripts/slurm-cluster.sh (idempotent; stopped again at the end when this
file started it). Needs root (slurmd runs job steps); skipped otherwise, saying so.

Covered (docs/topology.md "Slurm", docs/coordination.md): a 2-node srun job runs with Slurm's own
view of the nodes and a master port derived from SLURM_JOB_ID; two 2-node gloo jobs on the same
nodes at once, both on the default port, never meet; --ntasks-per-node=2 is refused with 78 on
every task; a multi-node batch script calling trainvisor without srun is refused with 78 and a
hint; scancel ends every node with 143 and no node announces a 75; Slurm's step-wide SIGUSR1 and
SIGTERM reach each worker exactly once.

No timed assertions: timeouts only stop hangs. Environment (set by ctest): TRAINVISOR_BIN,
TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("TV_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TRAINVISOR = Path(os.environ.get("TRAINVISOR_BIN", SOURCE_DIR / "build" / "trainvisor"))
PYTHON = os.environ.get("TV_PYTHON", "/usr/bin/python3")
HELPERS = Path(os.environ.get("TV_HELPERS", SOURCE_DIR / "build" / "helpers"))
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
        pytest.fail(f"job {name} never appeared in squeue")

    def cancel(self, job_id, signal=None):
        argv = ["scancel", *(["--signal", signal] if signal else []), job_id]
        subprocess.run(argv, env=self.env(Path("/tmp")), check=True, timeout=60)


def tv_run(*args, nproc=1, grace=10):
    return [str(TRAINVISOR), "run", "--nproc-per-node", str(nproc), "--preflight", "none",
            "--grace-period", str(grace), "--peer-timeout", "30", "--rdzv-timeout", "120",
            "--failure-file", "failure-%n", *args]


def wait_for(pattern, count, where, procs):
    deadline = time.monotonic() + TIMEOUT_S
    while len(list(where.glob(pattern))) < count:
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            logs = "\n".join(p.log_path.read_text(errors="replace")[-4000:] for p in procs)
            pytest.fail(f"never saw {count} x {pattern}:\n{logs}")
        time.sleep(0.1)


RECORD = r'''
import json, os, sys
keys = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK", "SLURM_JOB_ID")
with open(os.path.join(sys.argv[1], "r%s.json" % os.environ["RANK"]), "w") as f:
    json.dump({k: os.environ.get(k) for k in keys}, f)
'''


def test_two_node_srun_job_uses_slurms_view_and_a_port_from_the_job_id(slurm, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    r = slurm.run(tmp_path, ["srun", "-N2", "--ntasks-per-node=1", "-J", "tv-view",
                             *tv_run("--", PYTHON, "-c", RECORD, out)])
    assert r.returncode == 0, r.stdout + r.stderr
    recs = {int(p.stem[1:]): json.loads(p.read_text()) for p in out.glob("r*.json")}
    assert sorted(recs) == [0, 1], recs
    assert {x["MASTER_ADDR"] for x in recs.values()} == {"tvn1"}
    assert {x["WORLD_SIZE"] for x in recs.values()} == {"2"}
    job = int(recs[0]["SLURM_JOB_ID"])
    port = int(recs[0]["MASTER_PORT"])
    assert port == 20000 + 2 * (job % 5000), (job, port)  # docs/topology.md, "Master port"


# Two jobs on the same nodes at once, each a gloo group of 2 ranks on the default port. Each
# worker waits until the other job's workers are up too, so that both groups form at the same
# time; a worker that met the other job would see a world, a rank or a sum not its own.
GLOO = r'''
import json, os, sys, time
import torch, torch.distributed as dist
out, me, other = sys.argv[1], sys.argv[2], sys.argv[3]
rank = int(os.environ["RANK"])
open(os.path.join(out, "up-%s-%d" % (me, rank)), "w").close()
deadline = time.time() + 120
while len([p for p in os.listdir(out) if p.startswith("up-" + other)]) < 2 and time.time() < deadline:
    time.sleep(0.1)
dist.init_process_group("gloo", init_method="env://")
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
dist.barrier()
with open(os.path.join(out, "res-%s-%d.json" % (me, rank)), "w") as f:
    json.dump({"sum": t.item(), "size": dist.get_world_size(), "port": os.environ["MASTER_PORT"]}, f)
dist.destroy_process_group()
'''


def test_two_jobs_on_the_same_nodes_do_not_join_each_other(slurm, tmp_path):
    if subprocess.run([PYTHON, "-c", "import torch.distributed"], capture_output=True).returncode:
        pytest.skip(f"{PYTHON} has no torch")
    out = tmp_path / "out"
    out.mkdir()
    procs = [slurm.start(tmp_path, ["srun", "-N2", "-w", "tvn1,tvn2", "--ntasks-per-node=1",
                                    "-J", f"tv-pair-{me}", *tv_run("--", PYTHON, "-c", GLOO, out, me, other)],
                         f"job{me}")
             for me, other in (("a", "b"), ("b", "a"))]
    for p in procs:
        rc = p.wait(timeout=TIMEOUT_S)
        assert rc == 0, p.log_path.read_text(errors="replace")[-6000:]
    res = {p.stem: json.loads(p.read_text()) for p in out.glob("res-*.json")}
    assert sorted(res) == ["res-a-0", "res-a-1", "res-b-0", "res-b-1"], res
    assert all(r["sum"] == 3.0 and r["size"] == 2 for r in res.values()), res
    assert res["res-a-0"]["port"] != res["res-b-0"]["port"], res


WRAP = 'trap : TERM; "$@"; echo "$?" > rc-$SLURM_NODEID-$SLURM_LOCALID'


def test_two_tasks_per_node_are_refused_with_78(slurm, tmp_path):
    r = slurm.run(tmp_path, ["srun", "-N1", "--ntasks-per-node=2", "-J", "tv-twotasks",
                             "bash", "-c", WRAP, "wrap", *tv_run("--no-python", "--", "true")])
    codes = {p.name: p.read_text().strip() for p in tmp_path.glob("rc-*")}
    assert codes == {"rc-0-0": "78", "rc-0-1": "78"}, (codes, r.stdout, r.stderr)
    assert "SLURM_LOCALID" in r.stderr and "--ntasks-per-node=1" in r.stderr, r.stderr


def test_multi_node_batch_script_without_srun_is_refused_with_78(slurm, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n" + " ".join(tv_run("--no-python", "--", "true")) + "\n")
    r = slurm.run(tmp_path, ["sbatch", "--wait", "-N2", "-J", "tv-batch", "-o", str(tmp_path / "batch.out"),
                             str(script)])
    log = (tmp_path / "batch.out").read_text(errors="replace")
    assert "exit code 78" in r.stderr or r.returncode == 78, (r.returncode, r.stderr, log)
    assert "batch script" in log and "srun" in log, log
    assert "rendezvous" not in log, log  # refused before any waiting


SLEEP = r'''
import os, sys, time
open(os.path.join(sys.argv[1], "up-%s" % os.environ["RANK"]), "w").close()
time.sleep(600)
'''


def test_scancel_ends_every_node_with_143(slurm, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    p = slurm.start(tmp_path, ["srun", "-N2", "--ntasks-per-node=1", "-J", "tv-scancel",
                               "-o", str(tmp_path / "node-%n.log"),
                               "bash", "-c", WRAP, "wrap", *tv_run("--", PYTHON, "-c", SLEEP, out)],
                    "srun")
    wait_for("up-*", 2, out, [p])
    slurm.cancel(slurm.job_id("tv-scancel"))
    p.wait(timeout=TIMEOUT_S)
    codes = {f.name: f.read_text().strip() for f in tmp_path.glob("rc-*")}
    logs = {f.name: f.read_text(errors="replace") for f in tmp_path.glob("node-*.log")}
    assert codes == {"rc-0-0": "143", "rc-1-0": "143"}, (codes, logs)
    for name, log in logs.items():
        assert "exiting 75" not in log and "retries" not in log, (name, log)
        assert re.search(r"exiting 143", log), (name, log)


def test_step_wide_signals_reach_each_worker_once(slurm, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    p = slurm.start(tmp_path, ["srun", "-N2", "--ntasks-per-node=1", "-J", "tv-signals",
                               *tv_run("--no-python", "--", HELPERS / "tv_sigcount", out, nproc=2)],
                    "srun")
    wait_for("up-*", 4, out, [p])
    job = slurm.job_id("tv-signals")
    slurm.cancel(job, "USR1")
    deadline = time.monotonic() + TIMEOUT_S
    while not all(json.loads(f.read_text())["USR1"] for f in out.glob("sig-*.json")):
        assert time.monotonic() < deadline, "the workers never saw SIGUSR1"
        time.sleep(0.1)
    time.sleep(2)  # a forwarded duplicate would land in this window (not an assertion)
    slurm.cancel(job)
    p.wait(timeout=TIMEOUT_S)
    seen = {f.stem: json.loads(f.read_text()) for f in out.glob("sig-*.json")}
    log = p.log_path.read_text(errors="replace")
    assert len(seen) == 4, (seen, log)
    assert all(s == {"USR1": 1, "TERM": 1} for s in seen.values()), (seen, log)
