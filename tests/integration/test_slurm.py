"""`trainvisor run` under a real Slurm (slurm-wlm 22.05 + munge): three named nodes tvn1..tvn3 on
this host, started by scripts/slurm-cluster.sh (idempotent; stopped again at the end when this
file started it). Needs root (slurmd runs job steps); skipped otherwise, saying so.

Covered (docs/topology.md "Slurm", docs/coordination.md): a 2-node srun job runs with Slurm's own
view of the nodes and a master port derived from SLURM_JOB_ID; two 2-node gloo jobs on the same
nodes at once, both on the default port, never meet; --ntasks-per-node=2 is refused with 78 on
every task; a multi-node batch script calling trainvisor without srun is refused with 78 and a
hint; scancel ends every node with 143 and no node announces a 75; Slurm's step-wide SIGUSR1 and
SIGTERM reach each worker exactly once. The rendered sbatch script (docs/platforms/slurm.md), less
pyxis's --container-image: `--signal=B:USR1@N` reaches the workers and the job runs on to its time
limit, where workers that take 10 s to save do so and every node exits 143 (the time limit's
SIGTERM, SIGCONT, SIGTERM is one delivery); a node's trainvisor SIGKILLed ends the job with 75 in
`scontrol` and `sacct -c` (jobcomp/filetxt: no slurmdbd here), a SIGTERM after that decision
changing nothing. Two concurrent 2-node steps of one job do not meet; a step-wide SIGUSR1 leaves
the warm standby ready for the restart that follows; a partial Slurm environment is refused with
78 on every node.

The time-limit test waits for slurmctld's time-limit check (every 30 s), twice: it takes 40-70 s.

The fixture, the cluster's client and the rendered script are slurm_cluster.py's (shared with
test_slurm_edges.py). No timed assertions: timeouts only stop hangs. Environment (set by ctest): TRAINVISOR_BIN,
TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from slurm_cluster import (HELPERS, PYTHON, TIMEOUT_S, TRAINVISOR, job_field, render_script,  # noqa: F401
                           sacct, sbatch, slurm, tv_run, wait_file, wait_for, wait_job_done)


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


# ---- the rendered sbatch script on the real cluster (issue 24) ----

# A worker that takes 10 s to save after SIGTERM (and any repeat of it), recording the signals it
# got; SIGUSR1 (the warning) is only recorded.
SAVER = r'''
import json, os, signal, sys, time
out, rank = sys.argv[1], os.environ["RANK"]
seen = []
def on(sig, frame):
    seen.append(signal.Signals(sig).name)
    if sig == signal.SIGUSR1:
        open(os.path.join(out, "usr1-" + rank), "w").close()
for s in (signal.SIGTERM, signal.SIGUSR1):
    signal.signal(s, on)
open(os.path.join(out, "up-" + rank), "w").close()
while "SIGTERM" not in seen:
    time.sleep(0.05)
t0 = time.monotonic()
while time.monotonic() - t0 < 10:  # saving a checkpoint
    time.sleep(0.05)
with open(os.path.join(out, "saved-" + rank + ".json"), "w") as f:
    json.dump(seen, f)
sys.exit(143)
'''


def test_rendered_job_warned_with_usr1_runs_to_its_time_limit_and_saves_in_the_grace_period(slurm, tmp_path):
    """--signal=B:USR1@N: the batch shell lives on and passes it to the workers; at the time limit
    (slurmd: SIGTERM, SIGCONT, SIGTERM a few ms apart) every worker saves for 10 s, well inside the
    rendered --grace-period 25 and the cluster's KillWait=30, and every node exits 143."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "saver.py").write_text(SAVER)
    script = render_script(tmp_path, 2, [tmp_path / "saver.py", out], [], "tv-limit")
    # The warning goes out at slurmctld's first time-limit check (every 30 s) once it is due.
    job = sbatch(slurm, tmp_path, script, "--time=5", "--signal=B:USR1@290")
    for rank in "01":
        wait_file(out / f"usr1-{rank}", tmp_path / "batch.out")
    time.sleep(1)
    assert job_field(slurm, job, "JobState") == "RUNNING", (tmp_path / "batch.out").read_text()
    # The time limit, now: the next check (at most 30 s) times the job out through slurmd's
    # REQUEST_KILL_TIMELIMIT, as a --time that runs out does.
    r = slurm.run(tmp_path, ["scontrol", "update", f"JobId={job}", "EndTime=now"], timeout=60)
    assert r.returncode == 0, r.stderr
    state, code = wait_job_done(slurm, job, tmp_path)
    log = (tmp_path / "batch.out").read_text(errors="replace")
    assert state == "TIMEOUT", (state, code, log)
    saved = {p.name: json.loads(p.read_text()) for p in out.glob("saved-*.json")}
    assert sorted(saved) == ["saved-0.json", "saved-1.json"], log
    for seen in saved.values():
        assert seen[0] == "SIGUSR1" and seen.count("SIGUSR1") == 1 and "SIGTERM" in seen, (saved, log)
    assert log.count("exiting 143: the job was stopped by SIGTERM") == 2, log
    assert "killing the workers now" not in log and "grace period of" not in log, log  # no SIGKILL
    assert job_field(slurm, job, "ExitCode") == "143:0", log  # the batch shell waited for srun


# Each worker records its trainvisor's pid (its parent) and takes 3 s to stop after SIGTERM.
LOSER = r'''
import os, signal, sys, time
out, rank = sys.argv[1], os.environ["RANK"]
signal.signal(signal.SIGTERM, lambda s, f: (time.sleep(3), sys.exit(143)))
with open(os.path.join(out, "tv-" + rank), "w") as f:
    f.write(str(os.getppid()))
while True:
    time.sleep(0.1)
'''


def test_rendered_job_with_a_node_killed_ends_75_in_sacct(slurm, tmp_path):
    """A node's trainvisor SIGKILLed: the other node decides 75; a SIGTERM after that decision
    does not change it, srun does not kill the survivor, and the job's ExitCode is 75:0."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "loser.py").write_text(LOSER)
    script = render_script(tmp_path, 2, [tmp_path / "loser.py", out], ["--warm-standby", "off"], "tv-lost")
    job = sbatch(slurm, tmp_path, script)
    for rank in "01":
        wait_file(out / f"tv-{rank}", tmp_path / "batch.out")
    os.kill(int((out / "tv-1").read_text()), 9)
    deadline = time.monotonic() + TIMEOUT_S
    while "stopping this node's workers" not in (tmp_path / "batch.out").read_text(errors="replace"):
        assert time.monotonic() < deadline, (tmp_path / "batch.out").read_text(errors="replace")
        time.sleep(0.05)
    os.kill(int((out / "tv-0").read_text()), 15)  # while its worker takes 3 s to stop
    state, code = wait_job_done(slurm, job, tmp_path)
    log = (tmp_path / "batch.out").read_text(errors="replace")
    assert (state, code) == ("FAILED", "75:0"), (state, code, log)
    assert job_field(slurm, job, "ExitCode") == "75:0", log
    assert "exiting 75" in log and "exiting 143" not in log, log


def test_two_concurrent_steps_of_one_job_do_not_meet(slurm, tmp_path):
    """Two 2-node steps of one job on the same nodes at once, each its own gloo group: the step id
    is part of the job id, so their master ports and rendezvous keys differ."""
    if subprocess.run([PYTHON, "-c", "import torch.distributed"], capture_output=True).returncode:
        pytest.skip(f"{PYTHON} has no torch")
    out = tmp_path / "out"
    out.mkdir()
    step = " ".join(["srun", "--overlap", "-N2", "--ntasks-per-node=1", "-o", str(tmp_path / "step-ME-%n.log"),
                     *tv_run("--warm-standby", "off", "--", PYTHON, "-c", "\"$GLOO\"", str(out), "ME", "OTHER")])
    script = tmp_path / "steps.sh"
    script.write_text("#!/bin/bash\n" + step.replace("ME", "a").replace("OTHER", "b") + " & a=$!\n"
                      + step.replace("ME", "b").replace("OTHER", "a") + " & b=$!\n"
                      f"wait $a; echo $? > {tmp_path}/rc-a\nwait $b; echo $? > {tmp_path}/rc-b\n")
    r = subprocess.run(["sbatch", "--wait", "-N2", "--exclusive", "-J", "tv-steps", "-o", str(tmp_path / "batch.out"),
                        "--export=ALL,GLOO", str(script)], env={**slurm.env(tmp_path), "GLOO": GLOO}, cwd=tmp_path,
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    logs = "\n".join(p.read_text(errors="replace")[-3000:] for p in tmp_path.glob("step-*.log"))
    codes = {n: (tmp_path / f"rc-{n}").read_text().strip() for n in "ab"}
    assert codes == {"a": "0", "b": "0"}, (codes, r.stderr, logs)
    res = {p.stem: json.loads(p.read_text()) for p in out.glob("res-*.json")}
    assert sorted(res) == ["res-a-0", "res-a-1", "res-b-0", "res-b-1"], (res, logs)
    assert all(x["sum"] == 3.0 and x["size"] == 2 for x in res.values()), res
    assert res["res-a-0"]["port"] != res["res-b-0"]["port"], res


# Attempt 0: waits for SIGUSR1 (Slurm's step-wide "checkpoint now"), then fails. Attempt 1 (from
# the warm standby, which got the same SIGUSR1) records and exits 0.
USR1_THEN_FAIL = r'''
import os, signal, sys, time
out, attempt = sys.argv[1], os.environ["TORCHELASTIC_RESTART_COUNT"]
got = []
signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
open(os.path.join(out, "up-" + attempt), "w").close()
if attempt != "0":
    sys.exit(0)
while not got:
    time.sleep(0.05)
sys.exit(1)
'''


def test_step_wide_usr1_leaves_the_warm_standby_ready(slurm, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "usr1.py").write_text(USR1_THEN_FAIL)
    p = slurm.start(tmp_path, ["srun", "-N1", "--ntasks-per-node=1", "-J", "tv-standby-usr1",
                               *tv_run("--max-restarts", "1", "--warm-standby", "on",
                                       "--", tmp_path / "usr1.py", out)], "srun")
    wait_for("up-0", 1, out, [p])
    deadline = time.monotonic() + TIMEOUT_S
    while "warm standby ready" not in p.log_path.read_text(errors="replace"):
        assert time.monotonic() < deadline and p.poll() is None, p.log_path.read_text(errors="replace")
        time.sleep(0.1)
    slurm.cancel(slurm.job_id("tv-standby-usr1"), "USR1")
    rc = p.wait(timeout=TIMEOUT_S)
    log = p.log_path.read_text(errors="replace")
    assert rc == 0 and (out / "up-1").exists(), log
    assert "started from its warm standby" in log and "cold start" not in log, log


def test_a_partial_slurm_environment_is_refused_with_78(slurm, tmp_path):
    """SLURM_NNODES/NODEID/JOB_NODELIST without SLURM_JOB_ID (or with it empty) is not N one-node
    jobs: every task is refused, naming what is missing."""
    for unset in (["env", "-u", "SLURM_JOB_ID"], ["env", "SLURM_JOB_ID="]):
        for f in tmp_path.glob("rc-*"):
            f.unlink()
        r = slurm.run(tmp_path, ["srun", "-N2", "--ntasks-per-node=1", "-J", "tv-partial", "bash", "-c", WRAP,
                                 "wrap", *unset, *tv_run("--no-python", "--", "true")])
        codes = {p.name: p.read_text().strip() for p in tmp_path.glob("rc-*")}
        assert codes == {"rc-0-0": "78", "rc-1-0": "78"}, (unset, codes, r.stderr)
        assert "SLURM_JOB_ID is " + ("not set" if "-u" in unset else "empty") in r.stderr, r.stderr
        assert "SLURM_NNODES" in r.stderr and "SLURM_NODEID" in r.stderr, r.stderr


def test_a_step_on_part_of_the_allocation_uses_the_steps_nodes(slurm, tmp_path):
    """salloc -N3, then srun -N2 on tvn2,tvn3: srun leaves SLURM_JOB_NODELIST (and SLURM_NODELIST)
    at the allocation's three hosts; the step's own count and list make a 2-node job on tvn2."""
    out = tmp_path / "out"
    out.mkdir()
    r = slurm.run(tmp_path, ["salloc", "-N3", "-J", "tv-part", "srun", "-N2", "-w", "tvn2,tvn3",
                             "--ntasks-per-node=1", *tv_run("--", PYTHON, "-c", RECORD, out)])
    assert r.returncode == 0, r.stdout + r.stderr
    recs = {int(p.stem[1:]): json.loads(p.read_text()) for p in out.glob("r*.json")}
    assert sorted(recs) == [0, 1], (recs, r.stderr)
    assert {x["MASTER_ADDR"] for x in recs.values()} == {"tvn2"}, recs
    assert {x["WORLD_SIZE"] for x in recs.values()} == {"2"}, recs


@pytest.mark.parametrize("requeue,expected", [(True, "1"), (False, "0")])
def test_rendered_requeue_is_what_slurm_records(slurm, tmp_path, requeue, expected):
    """slurm.requeue (issue 40): the rendered #SBATCH --requeue / --no-requeue line is the job's
    Requeue flag in slurmctld (scontrol show job); the job is held, then cancelled."""
    script = render_script(tmp_path, 1, ["/bin/true"], [], f"tv-requeue-{expected}")
    doc = json.loads((tmp_path / "job.json").read_text())
    doc["slurm"] = {"requeue": requeue}
    (tmp_path / "job.json").write_text(json.dumps(doc))
    r = subprocess.run([str(TRAINVISOR), "render", "--config", str(tmp_path / "job.json"),
                        "--target", "slurm"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    script.write_text(re.sub(r" --container-image=\S+", "", r.stdout))
    job = sbatch(slurm, tmp_path, script, "--hold")
    try:
        assert job_field(slurm, job, "Requeue") == expected
    finally:
        slurm.cancel(job)
