"""The Slurm scenario: one job's whole life on the project's real Slurm cluster (slurm-wlm 22.05
+ munge, nodes tvn1..tvn3 on this host, scripts/slurm-cluster.sh), 2 nodes x 2 workers, as the
rendered sbatch script of docs/platforms/slurm.md runs it (`srun ENTRYPOINT run ...
--nproc-per-node 2 run_train.py ...`, Slurm's own environment deciding the nodes, the ranks and
the master), every default on: warm standbys, the GPU health watch (on the fake NVML), the
checkpoint watch, the job's ledger. The platform: tests/scenarios/slurm_platform.py. The phases:

  allocation 1: start -> checkpoints -> a worker crashes -> the whole group restarts from its
                warm standbys and resumes from the newest checkpoint -> a rank hangs before a
                collective (the hang verdict, TRAINVISOR_HANG_TIMEOUT=20; the group restarts
                again) -> node 1's trainvisor is SIGKILLed (a lost node): node 0 exits 75,
                the job's ExitCode is 75:0 (the script's rule for srun's 137)
  allocation 2: (75: the job requeued, `scontrol requeue`) resume -> `scancel --signal=TERM`
                (SIGTERM to every process of the job's steps) -> 143 on every node, 143:0
  allocation 3: (requeued again, as a preemption with PreemptMode=REQUEUE does) resume -> every
                rank finishes -> 0, COMPLETED; the job's ledger counts 3 containers (one Slurm
                job id throughout, its key)

and after each phase the checks of job.py. Each requeue waits out Slurm's hold on a requeued
job (AuthInfo cred_expire, 120 s): the test takes about 5 minutes. Skipped, saying why, when
not root or when Slurm is not installed. Jobs wait for free nodes when the cluster is busy (the
limit is a guard)."""
import signal

import pytest

from job import Job, wait_for
from slurm_platform import Slurm, cluster, cluster_up


@pytest.fixture
def platform():
    why, started = cluster_up()
    if why:
        pytest.skip(why)
    p = Slurm()
    yield p
    p.cancel_all()  # whatever the test asserted, none of its jobs is left on the cluster
    if started:  # a cluster that was running before is left running
        cluster("stop")


def test_a_slurm_jobs_life(tmp_path, platform):
    job = Job(tmp_path, platform)
    platform.setup(job)

    # allocation 1: start, checkpoints
    c = job.start_containers()
    cold = job.wait_generation(c, 0)
    assert {r["env"]["SLURM_JOB_ID"] for r in cold.values()} == {platform.jobs[0]}, cold
    assert {r["env"]["MASTER_ADDR"] for r in cold.values()} == {"tvn1"}, cold
    assert sorted(int(r["env"]["RANK"]) for r in cold.values()) == [0, 1, 2, 3], cold
    watch = {n.index: wait_for(f"node {n.index}'s GPU watch", n.gpu_watch) for n in job.nodes}
    step = job.wait_checkpoint_after(0)

    # a worker crashes: the whole group restarts from its standbys, from the newest checkpoint
    job.plan("crash_r3")
    warm = job.wait_generation(c, 1)
    job.check_restart_equals_cold_start(c, cold, warm)
    job.check_resumed_newest(warm)
    assert all(r["resume_step"] >= step for r in warm.values()), warm
    job.check_nothing_killed_that_workers_did_not_leave()
    assert {n.index: n.gpu_watch() for n in job.nodes} == watch, "the GPU watch was restarted"

    # rank 2 hangs before the collective every other rank waits in: a hang, the group restarts
    job.wait_checkpoint_after(max(r["resume_step"] for r in warm.values()))
    job.plan("hang_r2")
    after_hang = job.wait_generation(c, 2)
    job.check_restart_equals_cold_start(c, cold, after_hang)
    job.check_resumed_newest(after_hang)
    assert "hang" in job.nodes[0].text(), "no hang verdict was logged"
    job.check_nothing_killed_that_workers_did_not_leave()
    assert {n.index: n.gpu_watch() for n in job.nodes} == watch, "the GPU watch was restarted"

    # node 1 is lost: node 0 exits 75; srun's 137 is the script's 75
    job.wait_checkpoint_after(max(r["resume_step"] for r in after_hang.values()))
    job.nodes[1].signal(signal.SIGKILL)
    codes = job.exits()
    assert codes == [75, -signal.SIGKILL], (codes, job.nodes[0].text()[-3000:])
    assert platform.ended == ("FAILED", "75:0"), platform.ended
    job.check_failure_files_name("node 1")

    # allocation 2 (the rule: 75 is requeued): resume, then SIGTERM to the job's steps
    assert platform.retries(75)
    c = job.start_containers()
    first = job.wait_generation(c, 0)
    assert {r["env"]["SLURM_JOB_ID"] for r in first.values()} == {platform.jobs[0]}, first
    job.check_resumed_newest(first)
    job.wait_checkpoint_after(max(r["resume_step"] for r in first.values()))
    platform.cancel("TERM")
    codes = job.exits()
    assert codes == [143, 143], (codes, job.nodes[0].text()[-3000:])
    assert platform.ended == ("FAILED", "143:0"), platform.ended
    assert "exiting 75" not in job.nodes[0].text()[platform.log_from:], job.nodes[0].text()[-3000:]

    # allocation 3 (stopped, then requeued as a preemption is): resume, finish
    c = job.start_containers()
    first = job.wait_generation(c, 0)
    job.check_resumed_newest(first)
    job.wait_checkpoint_after(max(r["resume_step"] for r in first.values()))
    job.plan("finish")
    codes = job.exits()
    assert codes == [0, 0], (codes, job.nodes[0].text()[-3000:])
    assert platform.ended == ("COMPLETED", "0:0"), platform.ended
    job.check_nothing_killed_that_workers_did_not_leave(sidecars=False)
    # Slurm's step-wide SIGTERM reached the GPU watch too: it watched on, nothing restarted it
    assert "GPU health watch ended" not in job.nodes[0].text(), job.nodes[0].text()[-3000:]
    totals = job.check_ledger_adds_up()
    assert totals["containers"] == 3, totals
    # The hang window is badput "hang" in node 0's ledger, whichever node's watch gave the verdict
    # (another node's hang is a hang here too: Supervisor::cluster_events).
    assert totals["badput_seconds"].get("hang", 0) > 0, totals
