"""The judge and the end report of a multi-node job read the whole job, not the failing node
(issue 53): only rank 0 prints progress in rsl_rl and skrl, and the main node's log and failure
file are the ones people read.

Real binary, two `trainvisor run` nodes on 127.0.0.1, one real Python worker per node on CPU:
- rank 0 prints progress lines; rank 1, on node 1, fails twice with the same message (a
  connection reset, or a lazy import error), each time once rank 0 has reached a further step
  (25, then 45): the job restarts on its progress (rule different_failure, not same_failure nor
  cannot_start), then succeeds (exit 0 on both nodes); node 0's table of root causes names rank 1
  on node 1;
- rank 1 hangs in a user function while rank 0 waits (printing): node 0's failure file holds the
  frame node 1's stacks found, as node 1's does (and node 1's holds node 0's).

Workers coordinate through files (each waits for the file that says the event happened), never
for a time; timeouts only stop hangs. Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS,
TV_SOURCE_DIR, TV_PYTHON.
"""
import subprocess

import pytest

import tvtest

TIMEOUT = 180  # every case ends well before this (2 shared cores); a hang fails the test
H = tvtest.Hermetic("TV_JOB_JUDGE_TEST", TIMEOUT)

# Generation g: rank 0 prints steps up to STEPS[g], then marks it; rank 1 waits for that mark and
# raises the same ConnectionResetError; rank 0 then waits to be stopped. Generation 2 succeeds.
TRANSIENT = r'''
import os, sys, time
out = sys.argv[1]
rank = int(os.environ["RANK"]); g = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
STEPS = [25, 45]
if g >= len(STEPS):
    sys.exit(0)
mark = os.path.join(out, "reached_%d" % g)
if rank == 0:
    for step in range(STEPS[g] - 20, STEPS[g] + 1):
        print("step %d" % step, flush=True)
    open(mark, "w").close()
    while True:
        time.sleep(0.05)
while not os.path.exists(mark):
    time.sleep(0.02)
if os.environ["JUDGE_ERROR"] == "reset":
    raise ConnectionResetError(104, "Connection reset by peer")
import not_a_module_anyone_has  # a lazy import in the middle of training
'''

# Rank 1 hangs in load_batch(); rank 0 keeps printing while it waits (its node sees no hang).
HANG = r'''
import os, sys, time
rank = int(os.environ["RANK"])

def load_batch():
    while True:  # a batch that never comes
        time.sleep(0.05)

def all_reduce():
    while True:  # waits for rank 1, saying so
        print("waiting for rank 1", flush=True)
        time.sleep(0.2)

print("ready", flush=True)
if rank == 1:
    load_batch()
all_reduce()
'''


@pytest.fixture(autouse=True)
def _kill_leftovers():
    yield
    H.kill_leftovers()


def start(tmp_path, node, ports, *options, **env):
    master, rdzv = ports
    argv = [str(tvtest.BIN), "run", "--preflight", "none", "--warm-standby", "off", "--nnodes",
            "2", "--node-rank", str(node), "--nproc-per-node", "1", "--master-addr", "127.0.0.1",
            "--master-port", str(master), "--rdzv-port", str(rdzv),
            "--failure-file", str(tmp_path / f"failure{node}"), *map(str, options)]
    err = open(tmp_path / f"node{node}.err", "w")
    return subprocess.Popen(argv, env=H.env(**env), stdout=subprocess.DEVNULL, stderr=err,
                            cwd=tmp_path)


def run_job(tmp_path, *options, **env):
    ports = tvtest.free_ports(2)
    nodes = [start(tmp_path, n, ports, *options, **env) for n in (0, 1)]
    codes = []
    for p in nodes:
        try:
            codes.append(p.wait(timeout=TIMEOUT))
        except subprocess.TimeoutExpired:
            H.kill_leftovers()
            pytest.fail("a node still runs:\n" + (tmp_path / "node0.err").read_text())
    return codes, [(tmp_path / f"node{n}.err").read_text() for n in (0, 1)]


# Node 1's failure each time: a transient reset (was same_failure), or a lazy import error in the
# middle of training (was cannot_start).
@pytest.mark.parametrize("error,text", [
    ("reset", "ConnectionResetError: [Errno <n>] Connection reset by peer"),
    ("import", "ModuleNotFoundError: No module named 'not_a_module_anyone_has'"),
])
def test_a_failure_on_node_1_is_judged_at_the_jobs_progress(tmp_path, error, text):
    (tmp_path / "worker.py").write_text(TRANSIENT)
    out = tmp_path / "out"
    out.mkdir()
    codes, logs = run_job(tmp_path, "--max-restarts", "3", "--progress-regex",
                          r"step (?<step>\d+)", "--no-python", "--", tvtest.PYTHON,
                          tmp_path / "worker.py", out, JUDGE_ERROR=error)
    assert codes == [0, 0], logs
    node0 = logs[0]
    assert "rule same_failure" not in node0 and "rule cannot_start" not in node0, node0
    decision = [l for l in node0.splitlines() if "rule different_failure" in l]
    assert len(decision) == 1, node0
    assert f"generation 1 ({text} at step 45)" in decision[0], decision[0]
    assert f"generation 0 ({text} at step 25)" in decision[0], decision[0]
    # Node 0's table of root causes is the job's: node 1's rank, both generations.
    table = node0[node0.index("root causes:"):]
    rows = [l for l in table.splitlines()[2:4]]
    assert rows[0].split()[:3] == ["0", "1", "1"], table
    assert rows[1].split()[:3] == ["1", "1", "1"], table
    assert text.split(":")[0] in rows[0], table


def test_node_0s_failure_file_holds_the_frame_of_node_1s_hang(tmp_path):
    (tmp_path / "worker.py").write_text(HANG)
    codes, logs = run_job(tmp_path, "--max-restarts", "0", "--hang-timeout", "3",
                          tmp_path / "worker.py")
    assert codes == [124, 124], logs
    own = (tmp_path / "failure1").read_text()
    assert "main thread in load_batch (" in own, (own, logs[1])
    report = (tmp_path / "failure0").read_text()
    assert report.startswith("rank 1 (node 1, local 0): hang"), (report, logs[0])
    stacks = report[report.index("stacks on hang (attempt 0, every node):\n"):]
    assert "\n  rank 1 (node 1): main thread in load_batch (" in stacks, report
    assert "\n  rank 0 (node 0): main thread in all_reduce (" in stacks, report
    assert "worker.py:" in report, report
    # Node 1's own root cause: its own stacks, then node 0's.
    assert "stacks on hang (attempt 0, the other nodes):\n  rank 0 (node 0): main thread in " \
           "all_reduce (" in own, own
    # Node 0's log names the job's root cause too.
    assert "root causes:" in logs[0], logs[0]
