"""Hot spare nodes (`--nnodes N --spare-nodes K`, docs/coordination.md "Hot spare nodes") on one
machine: node agents on 127.0.0.1, each its own `trainvisor run`, against the real binary.
Node 2 of `--nnodes 2 --spare-nodes 1` joins, passes the checks and runs no worker; when node 1's
trainvisor and workers are killed with SIGKILL, generation 1 gives node rank 1 to node 2:
WORLD_SIZE and node 0's ranks are unchanged, no restart is counted, and every node left ends 0.
A lost spare changes nothing; a member lost with no spare left ends the job 75. The job helpers
are test_multinode's and test_elastic's. No timed assertions.
Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import os
import signal
import subprocess
import time

import pytest
import test_multinode as mn
from test_elastic import NPROC, WORKER, kill_node, world

# test_elastic's worker, with its parent (the node's trainvisor) in its record.
WORKER_PPID = WORKER.replace('rec["pid"] = os.getpid()',
                             'rec["pid"] = os.getpid(); rec["ppid"] = os.getppid()')


def wait_for_line(proc, text, timeout=120):
    """Returns once `text` is in the node's output (the wait only guards against a hang)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in mn.output(proc):
            return
        assert proc.poll() is None, mn.output(proc)
        time.sleep(0.05)
    pytest.fail(f"no {text!r}:\n{mn.output(proc)}")


def wait_for_files(job, pattern, count, timeout=120):
    deadline = time.monotonic() + timeout
    while len(list(job.out.glob(pattern))) < count:
        if time.monotonic() > deadline:
            pytest.fail(f"never saw {count} {pattern}:\n" +
                        "\n".join(mn.output(p) for p in job.procs.values()))
        time.sleep(0.05)


class SpareJob(mn.Job):
    """A job of `--nnodes N --spare-nodes K`, node ranks 0..N+K-1 given."""

    def __init__(self, tmp, n, spares, **kw):
        super().__init__(tmp, n, nproc=NPROC, max_restarts=0, **kw)
        self.spares = spares

    def argv(self, rank, command, **kw):
        argv = super().argv(rank, command, **kw)
        return argv[:2] + ["--spare-nodes", str(self.spares)] + argv[2:]


@pytest.fixture
def job(tmp_path):
    """A job of --nnodes 2 --spare-nodes 1 (its nodes started by the test), killed after."""
    made = SpareJob(tmp_path, 2, 1)
    yield made
    made.kill_all()


def start_three(job):
    """Nodes 0, 1 and the spare 2, each with the worker that waits in generation 0."""
    return {r: job.start(r, [mn.PYTHON, "-c", WORKER_PPID, job.out]) for r in range(3)}


def test_a_spare_takes_the_lost_nodes_rank_and_the_world_stays(job):
    procs = start_three(job)
    assert job.wait_for_files("a0_r*.json", 2 * NPROC, "every worker of generation 0")
    wait_for_line(procs[0], "rdzv: node 2 joined from")  # the spare is there
    assert "start: nodes: 2 (from --nnodes), and 1 spare(s) (from --spare-nodes): this node " \
        "starts as one" in mn.output(procs[2]), mn.output(procs[2])
    gen0 = job.records(0)
    assert world(gen0) == {0: ("4", "0", "2"), 1: ("4", "0", "2"),
                           2: ("4", "1", "2"), 3: ("4", "1", "2")}, gen0
    assert {rec["ppid"] for rec in gen0.values()} == {procs[0].pid, procs[1].pid}  # not the spare
    kill_node(job, procs[1], 1)
    for r in (0, 2):
        mn.expect_rc(job, procs[r], 0)
    gen1 = job.records(1)
    assert world(gen1) == world(gen0), gen1  # the same world, the same node ranks
    assert gen1[2]["ppid"] == gen1[3]["ppid"] == procs[2].pid, gen1  # rank 1's ranks: the spare's
    assert gen1[0]["ppid"] == procs[0].pid
    log = mn.output(procs[0])
    assert "a spare node takes its rank at the next generation (1 ready)" in log, log
    assert "node ranks: 0->0 2->1" in log, log
    assert "no restart counted" in log, log  # --max-restarts 0


def test_a_lost_spare_changes_nothing_and_no_spare_left_is_75(job):
    procs = start_three(job)
    assert job.wait_for_files("a0_r*.json", 2 * NPROC, "every worker of generation 0")
    wait_for_line(procs[0], "rdzv: node 2 joined from")
    os.killpg(procs[2].pid, signal.SIGKILL)  # the spare: it has no worker
    wait_for_line(procs[0], "(a spare); 0 spare node(s) ready (--spare-nodes 1)")
    assert job.records(1) == {}  # the members run on
    kill_node(job, procs[1], 1)
    mn.expect_rc(job, procs[0], 75)
    log = mn.output(procs[0])
    assert "no spare node left to take its rank (--spare-nodes 1)" in log, log


def test_spares_are_refused_where_they_cannot_work(tmp_path):
    job = SpareJob(tmp_path, 2, 1)
    argv = job.argv(0, ["true"])
    argv[argv.index("--nnodes") + 1] = "2:3"
    out = subprocess.run(argv, env=job.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=120)
    assert out.returncode == 78, out.stdout
    assert '--spare-nodes="1" with --nnodes 2:3: expected a fixed --nnodes N with spares' in \
        out.stdout, out.stdout


def test_a_lost_node_back_is_a_spare_and_takes_the_next_lost_rank(tmp_path):
    """Node 1 lost: node 2 takes rank 1; node 1 started again joins as a spare; node 2 lost: node 1
    takes rank 1 back (generation 2, whose workers end 0). Workers wait in generations 0 and 1."""
    job = SpareJob(tmp_path, 2, 1)
    worker = [mn.PYTHON, "-c", WORKER_PPID.replace("if rc > 0:", "if rc > 1:"), job.out]
    try:
        procs = {r: job.start(r, worker) for r in range(3)}
        assert job.wait_for_files("a0_r*.json", 2 * NPROC, "every worker of generation 0")
        wait_for_line(procs[0], "rdzv: node 2 joined from")
        kill_node(job, procs[1], 1)
        wait_for_files(job, "a1_r*.json", 2 * NPROC)  # (node 1's exit ends Job.wait_for_files)
        procs[1] = job.start(1, worker, name="node1-again")
        wait_for_line(procs[0], "rdzv: node 1 joined as a spare (1 spare node(s) ready)")
        for rank, rec in job.records(1).items():  # generation 1's: node 2 holds rank 1
            if rank // NPROC == 1:
                os.kill(rec["pid"], signal.SIGKILL)
        os.killpg(procs[2].pid, signal.SIGKILL)
        for r in (0, 1):
            mn.expect_rc(job, procs[r], 0)
        gen2 = job.records(2)
        assert world(gen2) == world(job.records(0)), gen2
        assert gen2[2]["ppid"] == procs[1].pid, gen2  # the node back holds rank 1 again
    finally:
        job.kill_all()


@pytest.fixture
def waiting_job(tmp_path):
    """(job, procs, go): --nnodes 2 --spare-nodes 1, three nodes whose workers wait for `go`,
    the spare joined; killed after."""
    job = SpareJob(tmp_path, 2, 1)
    go = tmp_path / "go"
    wait_go = ["/bin/sh", "-c", f"while [ ! -e {go} ]; do sleep 0.05; done"]
    procs = {r: job.start(r, wait_go) for r in range(3)}
    wait_for_line(procs[0], "rdzv: node 2 joined from")
    yield job, procs, go
    job.kill_all()


def test_a_spare_that_leaves_is_its_own_business(waiting_job):
    """A spare's run stopped from outside (its pod deleted: SIGTERM) ends it alone, 143; the
    members run on and end 0 (a member that leaves still stops the job, as in a fixed world)."""
    job, procs, go = waiting_job
    wait_for_line(procs[0], "rdzv: starting generation 0 on 2 nodes")
    procs[2].send_signal(signal.SIGTERM)
    mn.expect_rc(job, procs[2], 143)
    wait_for_line(procs[0], "rdzv: node 2 left (")
    go.touch()
    for r in (0, 1):
        mn.expect_rc(job, procs[r], 0)
    assert "it ran no worker: the job goes on (0 node(s) waiting)" in mn.output(procs[0])


def test_a_spare_never_needed_ends_0_with_the_job(waiting_job):
    job, procs, go = waiting_job
    go.touch()
    for r in range(3):
        mn.expect_rc(job, procs[r], 0)
    assert "node ranks" not in mn.output(procs[0])  # no re-formation


class KubeflowSpareJob(SpareJob):
    """The same job under Kubeflow's environment: PET_NNODES counts every pod (3: the world of 2
    and the spare), PET_NODE_RANK is each pod's replica index; the seed's line passes
    --nnodes=$PET_NNODES and the spares come out of it."""

    def __init__(self, tmp):
        super().__init__(tmp, 3, 1)

    def start(self, rank, command, **kw):
        self.rank = rank
        return super().start(rank, command, **kw)

    def env(self):
        env = super().env()
        env.update(PET_NNODES="3", PET_NODE_RANK=str(self.rank), PET_MASTER_ADDR="127.0.0.1",
                   PET_MASTER_PORT=str(self.master_port))
        return env


def test_under_kubeflow_the_spare_comes_out_of_pet_nnodes(tmp_path):
    job = KubeflowSpareJob(tmp_path)
    try:
        procs = start_three(job)
        assert job.wait_for_files("a0_r*.json", 2 * NPROC, "every worker of generation 0")
        wait_for_line(procs[0], "rdzv: node 2 joined from")
        log = mn.output(procs[2])
        assert "nodes: 2 (from env PET_NNODES less --spare-nodes 1)" in log, log
        assert {rec["WORLD_SIZE"] for rec in job.records(0).values()} == {"4"}
        kill_node(job, procs[1], 1)
        for r in (0, 2):
            mn.expect_rc(job, procs[r], 0)
        assert world(job.records(1)) == world(job.records(0))
    finally:
        job.kill_all()


def test_a_node_cut_off_is_replaced_by_the_spare_and_stops_itself(tmp_path):
    """Node 1 in a network namespace of its own, nodes 0 and 2 (the spare) in another, one veth
    between them; the veth is set down (the cable cut): node 0 finds node 1 silent past
    --peer-timeout and gives its rank to the spare; node 1, cut off alone, finds the coordinator
    silent, stops its workers and exits 75. Nodes 0 and 2 end 0."""
    addrs = ["10.231.9.1", "10.231.9.2"]
    job = SpareJob(tmp_path, 2, 1, master_addr=addrs[0])
    with mn.two_namespaces("tvs", addrs) as (ns, cut):
        try:
            worker = [mn.PYTHON, "-c", WORKER_PPID, job.out]
            where = {0: ns[0], 1: ns[1], 2: ns[0]}
            procs = {r: job.start(r, worker, prefix=("ip", "netns", "exec", where[r])) for r in range(3)}
            assert job.wait_for_files("a0_r*.json", 2 * NPROC, "every worker of generation 0")
            wait_for_line(procs[0], "rdzv: node 2 joined from")
            cut(1)  # the cable is cut
            mn.expect_rc(job, procs[1], 75)
            for r in (0, 2):
                mn.expect_rc(job, procs[r], 0)
            gen1 = job.records(1)
            assert gen1[2]["ppid"] == gen1[3]["ppid"] == procs[2].pid, gen1
            log0 = mn.output(procs[0])
            assert "silent" in log0 and "a spare node takes its rank" in log0, log0
        finally:
            job.kill_all()
