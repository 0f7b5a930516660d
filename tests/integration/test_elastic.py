"""Elastic membership (`--nnodes MIN:MAX`, docs/coordination.md "Elastic membership") on one
machine: 3 node agents on 127.0.0.1, each its own `trainvisor run`, against the real binary.
A node whose trainvisor and workers are killed with SIGKILL is dropped: nodes 0 and 1 run
generation 1 with WORLD_SIZE = 2 x nproc, ranks renumbered, and end 0; a node that joins while a
generation runs is taken in at the next one (WORLD_SIZE grows); below MIN the job ends 75 as a
fixed world does. The job helpers are test_multinode's. No timed assertions.
Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import json
import os
import signal

import pytest
import test_multinode as mn

NPROC = 2

# Records what it saw for this attempt (with its pid), then: on attempt 0 waits to be stopped;
# on any later attempt exits 0.
WORKER = r'''
import json, os, sys, time
out = sys.argv[1]
rc = int(os.environ["TORCHELASTIC_RESTART_COUNT"]); rank = int(os.environ["RANK"])
rec = {k: os.environ.get(k) for k in ("RANK", "WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
                                      "TORCHELASTIC_RESTART_COUNT", "MASTER_PORT")}
rec["pid"] = os.getpid()
path = os.path.join(out, "a%d_r%d.json" % (rc, rank))
with open(path + ".tmp", "w") as f: json.dump(rec, f)
os.rename(path + ".tmp", path)
if rc > 0: sys.exit(0)
while True: time.sleep(1)
'''


class ElasticJob(mn.Job):
    """A job of `--nnodes MIN:MAX` with a short last call."""

    def __init__(self, tmp, lo, hi, last_call=1):
        super().__init__(tmp, hi, nproc=NPROC, max_restarts=0)
        self.range, self.last_call = f"{lo}:{hi}", last_call

    def argv(self, rank, command, **kw):
        argv = super().argv(rank, command, **kw)
        argv[argv.index("--nnodes") + 1] = self.range
        return argv[:2] + ["--rdzv-last-call", str(self.last_call)] + argv[2:]


@pytest.fixture
def start(tmp_path):
    """start(lo, hi, ranks): a job of --nnodes lo:hi and those nodes started; killed after."""
    made = []

    def make(lo, hi, ranks):
        job = ElasticJob(tmp_path, lo, hi)
        made.append(job)
        return job, {r: job.start(r, [mn.PYTHON, "-c", WORKER, job.out]) for r in ranks}

    yield make
    for job in made:
        job.kill_all()


def kill_node(job, proc, node_rank):
    """SIGKILL a node's trainvisor and its workers (their pids from their records)."""
    os.killpg(proc.pid, signal.SIGKILL)
    for rank, rec in job.records(0).items():
        if rank // NPROC == node_rank:
            try:
                os.kill(rec["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass


def world(records):
    return {r: (rec["WORLD_SIZE"], rec["GROUP_RANK"], rec["GROUP_WORLD_SIZE"])
            for r, rec in records.items()}


@pytest.mark.parametrize("lost", [2, 1])
def test_a_lost_node_leaves_the_others_running_generation_1_with_fewer_ranks(start, lost):
    job, procs = start(2, 3, range(3))
    assert job.wait_for_files("a0_r*.json", 3 * NPROC, "every worker of generation 0")
    assert {r["WORLD_SIZE"] for r in job.records(0).values()} == {"6"}
    kill_node(job, procs[lost], lost)
    survivors = [r for r in range(3) if r != lost]
    for r in survivors:
        mn.expect_rc(job, procs[r], 0)
    # The survivors' node ranks renumbered in their order: node 2 is node 1 when 1 is lost.
    gen1 = job.records(1)
    assert world(gen1) == {0: ("4", "0", "2"), 1: ("4", "0", "2"),
                           2: ("4", "1", "2"), 3: ("4", "1", "2")}, gen1
    assert {r["TORCHELASTIC_RESTART_COUNT"] for r in gen1.values()} == {"1"}
    log = mn.output(procs[0])
    assert f"node ranks: 0->0 {survivors[1]}->1" in log, log
    # --max-restarts 0: the membership change counted no restart.
    assert "no restart counted" in log, log


def test_a_late_node_is_taken_in_at_the_next_generation(start):
    job, procs = start(2, 3, range(2))
    # MIN present, the last call over: generation 0 runs on 2 nodes.
    assert job.wait_for_files("a0_r*.json", 2 * NPROC, "generation 0 on 2 nodes")
    assert {r["WORLD_SIZE"] for r in job.records(0).values()} == {"4"}
    procs[2] = job.start(2, [mn.PYTHON, "-c", WORKER, job.out])
    for r in range(3):
        mn.expect_rc(job, procs[r], 0)
    gen1 = job.records(1)
    assert sorted(gen1) == list(range(3 * NPROC)), gen1
    assert {r["WORLD_SIZE"] for r in gen1.values()} == {"6"}
    assert gen1[4]["GROUP_RANK"] == "2", gen1
    assert not job.records(0).get(4)  # the late node ran no worker in generation 0


def test_below_min_ends_75_on_the_survivors(start):
    job, procs = start(2, 3, range(2))
    assert job.wait_for_files("a0_r*.json", 2 * NPROC, "generation 0 on 2 nodes")
    kill_node(job, procs[1], 1)
    mn.expect_rc(job, procs[0], 75)
    assert "fewer than the minimum 2 (--nnodes 2:3)" in mn.output(procs[0]), \
        mn.output(procs[0])
