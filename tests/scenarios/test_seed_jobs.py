"""One job's whole life per seed, on 2 nodes x 2 workers on loopback, under the environment its
platform injects (tests/scenarios/platforms.py), the seed's own launcher line with only the first
word changed, and every default on: warm standbys, the GPU health watch (on the fake NVML), the
metrics, the job's ledger, the checkpoint watch, the export where the seed copies to
/opt/ml/model. The phases:

  container 1: start -> checkpoints -> a worker crashes -> the whole group restarts from its
               warm standbys and resumes from the newest checkpoint -> a rank hangs before a
               collective (the hang verdict; the group restarts again) -> a GPU of node 1
               raises Xid 79 (node fault: 74 there, 75 on node 0)
  container 2: (the platform's retry rule) resume -> node 1 is lost (SIGKILL) -> 75
  container 3: resume -> SIGTERM on every node -> 143
  container 4: resume -> every rank finishes -> 0

and after each phase the checks that hold for every feature together (job.py)."""
import copy
import signal

import pytest

from job import Job, wait_for
from platforms import PLATFORMS


def next_containers(job, codes):
    """The platform's rule decides whether the job goes on; a platform that does not retry
    (SageMaker) goes on as its managed restart would: a new container of the same job."""
    rule = [job.platform.retries(c) for c in codes]
    assert all(rule) or not any(rule) or job.platform.name == "batch", (codes, rule)
    return job.start_containers()


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_a_seed_jobs_life(tmp_path, name):
    platform = copy.copy(PLATFORMS[name])
    job = Job(tmp_path, platform)
    platform.setup(job)

    # container 1: start, checkpoints
    c = job.start_containers()
    cold = job.wait_generation(c, 0)
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
    job.check_resumed_newest(after_hang)
    assert any("hang" in n.text() for n in job.nodes), "no hang verdict was logged"
    job.check_nothing_killed_that_workers_did_not_leave()

    # node fault on node 1: 74 there, 75 on node 0; both failure files name node 1's GPU
    job.wait_checkpoint_after(max(r["resume_step"] for r in after_hang.values()))
    (tmp_path / "xid_node1").write_text("1:79")
    codes = job.exits()
    assert codes == [75, 74], codes
    job.check_failure_files_name("node 1", "Xid 79")
    (tmp_path / "xid_node1").unlink()  # the replaced node's new GPU is healthy

    # container 2: resume, then node 1 is lost
    c = next_containers(job, codes)
    first = job.wait_generation(c, 0)
    job.check_resumed_newest(first)
    job.wait_checkpoint_after(max(r["resume_step"] for r in first.values()))
    job.nodes[1].signal(signal.SIGKILL)
    codes = job.exits()
    assert codes[0] == 75, codes
    job.check_failure_files_name("node 1")

    # container 3: resume, then SIGTERM everywhere
    c = next_containers(job, [75, 75])
    first = job.wait_generation(c, 0)
    job.check_resumed_newest(first)
    for n in job.nodes:
        n.signal(signal.SIGTERM)
    assert job.exits() == [143, 143]

    # container 4: resume, finish
    c = job.start_containers()
    first = job.wait_generation(c, 0)
    job.check_resumed_newest(first)
    job.wait_checkpoint_after(max(r["resume_step"] for r in first.values()))
    job.plan("finish")
    assert job.exits() == [0, 0], [n.why() for n in job.nodes]
    job.check_nothing_killed_that_workers_did_not_leave()
    totals = job.check_ledger_adds_up()
    assert totals["containers"] == 4, totals
    assert totals["badput_seconds"].get("hang", 0) > 0, totals  # the hang window is badput
    if name == "sagemaker":  # the export the seed's `cp -r logs/* /opt/ml/model` did by hand
        model = tmp_path / "opt_ml_model"
        assert list(model.rglob("agent_*.pt")), "nothing exported"
        assert not list(model.rglob(".trainvisor-*")), "trainvisor's ledger was exported"
