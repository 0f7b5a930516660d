"""A slow log directory (--log-dir on a network file system) never silences a node (issue 58,
item 1): the rank directories are opened, the heartbeat files read and the per-rank logs written
off the thread of the event loop, which keeps answering heartbeats, the coordinator and signals.

Node 0's file calls that name its log directory, its rank directories or their files are slowed
to 1.5 s each with strace's syscall delay injection (-P), and the job restarts once (the worker
fails in generation 0 on the last node) with --peer-timeout 2 s: no node is lost, both nodes end
0 (before: 75 on both, "node 0 silent": the rank directories of each generation were opened on
the loop, several calls each). No timed assertion: the waits only stop a hang. Environment: as
tests/integration/test_multinode.py.
"""
import shutil

import pytest

import test_multinode as mn
from test_slow_checkpoint_dir import FILE_CALLS

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")


class LogJob(mn.Job):
    """A test_multinode Job whose nodes keep per-rank logs, each node under its own --log-dir."""

    def __init__(self, tmp, *args, **kw):
        tmp.mkdir()
        super().__init__(tmp, *args, **kw)

    def logs(self, rank):
        return self.tmp / f"logs{rank}"

    def argv(self, rank, command, **kw):
        a = super().argv(rank, command, **kw)
        at = a.index("--no-python")
        return a[:at] + ["--log-dir", str(self.logs(rank))] + a[at:]


def slowed(logs, generations, delay_us, log):
    """strace's options that delay each file call naming `logs`, its attempt and rank directories
    of `generations` (one rank per node: rank_0 on node 0) and their files."""
    paths = [logs]
    for g in range(generations):
        rank_dir = logs / f"attempt_{g}" / "rank_0"
        paths += [logs / f"attempt_{g}", rank_dir, *(rank_dir / f for f in
                  ("heartbeat", "stdout.log", "stderr.log", "error.json", "stacks.txt"))]
    return ["strace", "-f", "-qq", "-o", str(log), *[a for p in paths for a in ("-P", str(p))],
            "-e", f"trace={FILE_CALLS},write,unlinkat",
            "-e", f"inject={FILE_CALLS},write,unlinkat:delay_enter={delay_us}"]


def test_a_slow_log_directory_on_node_0_loses_no_node_at_a_restart(tmp_path):
    job = LogJob(tmp_path / "job", 2, nproc=1, peer_timeout=2)
    try:
        slow = slowed(job.logs(0), 2, 1_500_000, job.tmp / "strace.log")
        node0 = job.start(0, mn.worker(job, "fail-last"), prefix=slow)
        node1 = job.start(1, mn.worker(job, "fail-last"))
        mn.expect_rc(job, node1, 0)
        mn.expect_rc(job, node0, 0)
        assert sorted(job.records(1)) == [0, 1]  # generation 1 ran on both nodes
        out = mn.output(node0) + mn.output(node1)
        assert "silent" not in out, out
        # The calls were slowed indeed (strace saw the rank directories opened under the logs).
        assert "attempt_1" in (job.tmp / "strace.log").read_text(), out
        assert (job.logs(0) / "attempt_1" / "rank_0").is_dir()
    finally:
        job.kill_all()
