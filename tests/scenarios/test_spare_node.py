"""The Cosmos seed on 4 nodes and a hot spare (docs/coordination.md, "Hot spare nodes"): five
pods of the PyTorchJob under Kubeflow's environment (NUM_NODES=5 in the seed's line, pod index 4
the spare by `TRAINVISOR_SPARE_NODES=1` in the pod template), 1 worker each, every other default
on (tests/scenarios/README.md). Mid-run, node 2's trainvisor and workers are SIGKILLed (its host
gone): generation 1 runs on nodes 0, 1, 3 and the spare in node 2's rank, with the same world,
resumes from the newest checkpoint, and the job finishes 0 on every node left.
"""
import os
import signal

from job import Job, alive, children
from platforms import Cosmos


class CosmosWithASpare(Cosmos):
    def env(self, job, node, container):
        return {**super().env(job, node, container), "TRAINVISOR_SPARE_NODES": 1}


def descendants(pid):
    out = []
    for c in children(pid):
        out += [c, *descendants(c)]
    return out


def test_cosmos_loses_a_node_mid_run_and_its_spare_takes_the_rank(tmp_path):
    platform = CosmosWithASpare()
    job = Job(tmp_path, platform, nodes=5, nproc=1)
    job.world = 4  # the fifth pod is the spare
    platform.setup(job)
    c = job.start_containers()
    gen0 = job.wait_generation(c, 0)
    spare_host = "isaaclab-job-worker-3"  # pod index 4 (operator_env's HOSTNAME)
    assert spare_host not in {r["env"]["HOSTNAME"] for r in gen0.values()}, gen0
    assert {r["env"]["WORLD_SIZE"] for r in gen0.values()} == {"4"}, gen0
    job.wait_checkpoint_after(0)

    lost = job.nodes[2]
    lost_host = gen0[2]["env"]["HOSTNAME"]
    for pid in [lost.pid, *descendants(lost.pid)]:  # the host is gone: everything on it
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    gen1 = job.wait_generation(c, 1)
    job.check_resumed_newest(gen1)
    assert gen1[2]["env"]["HOSTNAME"] == spare_host, gen1  # the spare holds node 2's rank
    assert {r["env"]["WORLD_SIZE"] for r in gen1.values()} == {"4"}, gen1
    for rank in (0, 1, 3):  # every other rank where it was
        assert gen1[rank]["env"]["HOSTNAME"] == gen0[rank]["env"]["HOSTNAME"], (rank, gen1)
    assert lost_host != spare_host

    job.wait_checkpoint_after(max(r["resume_step"] for r in gen1.values()))
    job.plan("finish")
    codes = {n.index: n.wait() for n in job.nodes if n is not lost}
    assert codes == {0: 0, 1: 0, 3: 0, 4: 0}, [n.why() for n in job.nodes]
    log = job.nodes[0].text()
    assert "a spare node takes its rank at the next generation (1 ready)" in log, log[-3000:]
    job.check_nothing_killed_that_workers_did_not_leave(sidecars=False)  # node 2's went with it
    assert all(alive(n.sidecar) for n in job.nodes if n is not lost), "a sidecar was killed"
