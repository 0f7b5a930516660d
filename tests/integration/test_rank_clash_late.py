"""A second node claiming a rank after the job started (README, docs/coordination.md "Node
ranks"): two nodes that claim one rank both exit 78, each told why, whether the second arrives
before generation 0 (test_node_rank_assignment.py) or while the job runs. The node already
running stops its workers; no node waits out --rdzv-timeout (which would be 75, retried).

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON."""
import time

from tvtest import PYTHON, base_env, free_ports
from test_node_rank_assignment import TIMEOUT, ended, start

# Says it started, then trains until it is stopped.
WORKER = f"""#!{PYTHON}
import os, pathlib, time
pathlib.Path(os.environ["TV_RECORD_DIR"], "started_%s" % os.environ["RANK"]).touch()
while True:
    time.sleep(0.1)
"""


def wait_for(paths, procs):
    deadline = time.monotonic() + TIMEOUT
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, "the workers never started"
        assert all(p.poll() is None for p in procs), [p.poll() for p in procs]
        time.sleep(0.05)


def test_a_second_node_rank_1_after_the_start_ends_the_job_78_on_every_node(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    out = tmp_path / "records"
    out.mkdir()
    (rdzv_port,) = free_ports(1)
    common = ["--nnodes", 2, "--rdzv-endpoint", f"127.0.0.1:{rdzv_port}", "--nproc-per-node", 1,
              script]
    env = base_env(TV_RECORD_DIR=out)
    first = [start(tmp_path, 0, "--node-rank", 0, *common, env=env),
             start(tmp_path, 1, "--node-rank", 1, *common, env=env)]
    wait_for([out / "started_0", out / "started_1"], first)
    late = start(tmp_path, 2, *common, env=base_env(TV_RECORD_DIR=out, TRAINVISOR_NODE_RANK=1))
    results = ended(first + [late])
    for node, (code, said) in enumerate(results):
        assert code == 78, f"node {node}: exit {code}\n{said[-3000:]}"
        assert "node rank 1 is claimed by two nodes: host " in said, said[-3000:]
        assert "the second joined after the job started" in said, said[-3000:]
        assert "rank from --node-rank" in said and "rank from TRAINVISOR_NODE_RANK" in said, said
    for node in (0, 1):
        assert "claimed by two nodes" in (tmp_path / f"failure{node}").read_text()
