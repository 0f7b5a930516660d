"""The culprit of a hang for the whole job (docs/supervision.md, "The culprit"): on a hang every
node takes its ranks' stacks before its workers are stopped, sends where each rank was to the
coordinator, and every node's failure file names the one rank the others waited for.

Real binary, two nodes on loopback, two real Python workers per node on CPU. The ranks "wait in
a collective" in the script's own all_reduce(); one rank is elsewhere: in load_batch(), stopped
by SIGSTOP, or its main thread waiting on a data-loader thread that never delivers.

The NCCL side: each rank writes the flight-recorder dump torch 2.11's ProcessGroupNCCL writes
(its DebugInfoWriter's pickle, FlightRecorder.cpp's keys, as read on the H200 host) to
TORCH_FR_DUMP_TEMP_FILE + rank; rank 3's last collective is #6 (completed, then a send: p2p
entries do not count), every other rank's #7 (started). Every rank's Python frame is the same
all_reduce(): only the dumps tell the culprit. Either the job hangs (the verdict is trainvisor's)
or rank 0 aborts as torch's watchdog does after its dump on a collective timeout (a failure, 134).
"""
import re
import subprocess
import time

import pytest

import tvtest

TIMEOUT = 90  # every case ends well before this; a hang fails the test
H = tvtest.Hermetic("TV_HANG_CULPRIT_TEST", TIMEOUT)

WORKER = '''
import os, queue, signal, threading, time
RANK = int(os.environ["RANK"])
MODE = os.environ["CULPRIT_MODE"]

def all_reduce():
    while True:  # a collective the culprit never enters
        time.sleep(0.05)

def load_batch():
    while True:  # a batch that never comes
        time.sleep(0.05)

def next_batch(q):
    return q.get()  # the loader thread never puts one

def write_dump(last, state):
    """A dump as ProcessGroupNCCL writes it: collectives 1..last of the default group."""
    import pickle
    entries = []
    for seq in range(1, last + 1):
        entries.append({
            "record_id": seq - 1, "pg_id": 0, "process_group": ("0", "default_pg"),
            "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
            "profiling_name": "nccl:all_reduce", "time_created_ns": time.time_ns(),
            "input_sizes": [[1024]], "input_dtypes": ["Float"], "output_sizes": [[1024]],
            "output_dtypes": ["Float"], "state": "completed" if seq < last else state,
            "time_discovered_started_ns": time.time_ns(), "time_discovered_completed_ns": None,
            "retired": seq < last, "timeout_ms": 600000, "is_p2p": False,
            "frames": [{"name": "all_reduce", "filename": "distributed_c10d.py", "line": 2950}]})
    if RANK == 3:  # a later send: point-to-point, not a collective
        entries.append(dict(entries[-1], record_id=last, collective_seq_id=0, p2p_seq_id=1,
                            profiling_name="nccl:send 3->0", is_p2p=True, state="started"))
    dump = {"version": "2.10", "comm_lib_version": "2.28.9",
            "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
            "pg_status": {"0": {"last_enqueued_collective": last, "last_started_collective": last,
                                "last_completed_collective": last - 1}},
            "entries": entries}
    path = os.environ["TORCH_FR_DUMP_TEMP_FILE"] + str(RANK)
    with open(path + ".tmp", "wb") as f:
        pickle.dump(dump, f)
    os.rename(path + ".tmp", path)

print("ready", flush=True)
if MODE.startswith("fr-"):
    write_dump(6 if RANK == 3 else 7, "completed" if RANK == 3 else "started")
    if RANK == 0 and MODE == "fr-abort":
        time.sleep(1)  # the watchdog's timeout: every rank has dumped
        os.abort()
if RANK == 3 and MODE == "elsewhere":
    load_batch()
elif RANK == 3 and MODE == "stopped":
    os.kill(os.getpid(), signal.SIGSTOP)
elif RANK == 3 and MODE == "loader":
    q = queue.Queue()
    threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
    next_batch(q)
all_reduce()
'''


@pytest.fixture(autouse=True)
def _kill_leftovers():
    yield
    H.kill_leftovers()


def start(tmp_path, node, ports, mode):
    master, rdzv = ports
    hang = "8" if mode == "fr-abort" else "3"  # the abort comes first
    argv = [str(tvtest.BIN), "run", "--preflight", "none", "--nnodes", "2", "--node-rank",
            str(node), "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port",
            str(master), "--rdzv-port", str(rdzv), "--max-restarts", "0", "--hang-timeout", hang,
            "--failure-file", str(tmp_path / f"failure{node}"), str(tmp_path / "worker.py")]
    err = open(tmp_path / f"node{node}.err", "w")
    return subprocess.Popen(argv, env=H.env(CULPRIT_MODE=mode), stdout=subprocess.DEVNULL,
                            stderr=err)


@pytest.mark.parametrize("mode,where", [
    ("elsewhere", "is in load_batch ("),
    ("stopped", "wrote no stack within 3 s"),
    ("loader", "is in next_batch ("),
])
def test_every_nodes_failure_file_names_the_rank_the_others_wait_for(tmp_path, mode, where):
    (tmp_path / "worker.py").write_text(WORKER)
    ports = tvtest.free_ports(2)
    nodes = [start(tmp_path, n, ports, mode) for n in (0, 1)]
    codes = [p.wait(timeout=TIMEOUT) for p in nodes]
    logs = [(tmp_path / f"node{n}.err").read_text() for n in (0, 1)]
    assert codes == [124, 124], logs
    for n in (0, 1):
        report = (tmp_path / f"failure{n}").read_text()
        line = next((l for l in report.splitlines() if l.startswith("culprit: ")), None)
        assert line, (report, logs[n])
        assert line.startswith("culprit: rank 3 on node 1" + " " + where.split(" (")[0]) or \
            line.startswith("culprit: rank 3 on node 1 " + where), line
        assert "every other rank waits in all_reduce (" in line, line
        assert "worker.py:" in line, line


def culprit_line(report):
    return next((l for l in report.splitlines() if l.startswith("culprit: ")), None)


@pytest.mark.parametrize("mode,code", [("fr-hang", 124), ("fr-abort", 134)])
def test_the_flight_recorder_names_the_rank_that_never_entered_the_collective(tmp_path, mode,
                                                                                 code):
    (tmp_path / "worker.py").write_text(WORKER)
    ports = tvtest.free_ports(2)
    nodes = [start(tmp_path, n, ports, mode) for n in (0, 1)]
    codes = [p.wait(timeout=TIMEOUT) for p in nodes]
    logs = [(tmp_path / f"node{n}.err").read_text() for n in (0, 1)]
    assert codes[0] == code, logs
    want = ("culprit: rank 3 on node 1 never entered nccl:all_reduce #7 of process group 0 "
            "(its last: #6, completed)")
    for n in (0, 1):
        report = (tmp_path / f"failure{n}").read_text()
        line = culprit_line(report)
        assert line and line.startswith(want), (report, logs[n])
        assert "every other rank of the group entered it and waits in it" in line, line
    assert "rank(s)' last collective read from their flight-recorder dumps" in logs[1], logs[1]
