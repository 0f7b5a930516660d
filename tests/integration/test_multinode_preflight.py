"""`trainvisor run --preflight full` across nodes on one machine: 2 `trainvisor run` processes on
127.0.0.1 (node 0 also serving the coordinator), against the real binary.

Covered (docs/health.md, "Several nodes"): every node runs its preflight inside the rendezvous
before generation 0 and the coordinator shares one verdict. On this machine (no GPU) the NCCL probe
is skipped on every node and the job starts; a node whose checks fail (--require-transport efa
where there is no EFA) makes EVERY node exit 69 with that node's summary, before any worker starts.
The NCCL probe across nodes itself needs GPUs (see docs/health.md for the device run).

No timed assertions: timeouts only stop hangs. Ports come from binding port 0.
Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import os
import signal
import subprocess
from pathlib import Path

import pytest

import tvtest

SOURCE_DIR = tvtest.SOURCE_DIR
TRAINVISOR = tvtest.BIN.resolve()
TIMEOUT_S = 300  # generous: 2 shared cores
free_ports = tvtest.free_ports

# The worker leaves a file per rank: proof that it started.
WORKER = 'import os, sys; open(os.path.join(sys.argv[1], "r" + os.environ["RANK"]), "w").close()'

def no_gpu():
    return not any(Path("/dev").glob("nvidia[0-9]*"))


@pytest.fixture
def job(tmp_path):
    procs = []
    master_port, rdzv_port = free_ports(2)
    out = tmp_path / "out"
    out.mkdir()

    def start(rank, *extra, env_extra=None):
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
               "TMPDIR": str(tmp_path), "CUDA_VISIBLE_DEVICES": "", **(env_extra or {})}
        argv = [str(TRAINVISOR), "run", "--nnodes", "2", "--node-rank", str(rank),
                "--master-addr", "127.0.0.1", "--master-port", str(master_port),
                "--rdzv-port", str(rdzv_port), "--nproc-per-node", "1", "--rdzv-timeout", "120",
                "--peer-timeout", "5", "--rdzv-token", "preflight-secret", "--preflight", "full",
                "--failure-file", str(tmp_path / f"failure{rank}"),
                "--termination-log", str(tmp_path / f"termlog{rank}"), *extra,
                "--no-python", "--", "/usr/bin/python3", "-c", WORKER, str(out)]
        log = tmp_path / f"node{rank}.log"
        with open(log, "wb") as f:
            proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                    stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        proc.log = log
        procs.append(proc)
        return proc

    def finish(proc):
        try:
            code = proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running after {TIMEOUT_S}s:\n{proc.log.read_text(errors='replace')}")
        return code, proc.log.read_text(errors="replace")

    yield start, finish, out
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.mark.skipif(not no_gpu(), reason="checks the no-GPU path")
def test_every_node_preflights_through_the_rendezvous_then_starts(job):
    start, finish, out = job
    nodes = [start(0), start(1)]
    results = [finish(p) for p in nodes]
    for code, log in results:
        assert code == 0, log
        assert "no GPU: the NCCL probe needs one" in log, log
    assert "preflight on 2 nodes before generation 0" in results[0][1], results[0][1]
    assert "every node passed the preflight" in results[0][1], results[0][1]
    assert "preflight (full, node 1 of 2" in results[1][1], results[1][1]
    assert sorted(p.name for p in out.iterdir()) == ["r0", "r1"]


@pytest.mark.skipif(not no_gpu(), reason="relies on this machine having no EFA and no GPU")
def test_one_failing_node_stops_every_node_with_exit_69(job):
    start, finish, out = job
    # Only node 1 requires EFA (absent here): its efa-devices check fails.
    nodes = [start(0), start(1, "--require-transport", "efa")]
    results = [finish(p) for p in nodes]
    for code, log in results:
        assert code == 69, log
        assert "not starting the workers on any node: node 1: efa-devices:" in log, log
    assert "preflight failed on node 1" in results[0][1], results[0][1]
    # Logs a person can read: node 1's verdict once on each node (it was 3 times on node 0).
    for code, log in results:
        assert log.count("node 1: efa-devices:") == 1, log
    assert list(out.iterdir()) == []  # no worker started anywhere


@pytest.mark.skipif(not no_gpu(), reason="the fake NVML's GPUs, on a machine without real ones")
def test_each_nodes_banner_names_the_gpus_its_own_preflight_read(job, tmp_path):
    """The start banner of every node takes its GPUs from that node's preflight (run on the
    cluster's thread inside the rendezvous): the fake NVML's UUIDs, and no second NVML query."""
    start, finish, out = job
    nodes = []
    for rank in (0, 1):
        fake = {"LD_LIBRARY_PATH": str(tvtest.HELPERS / "fake_nvml"), "CUDA_VISIBLE_DEVICES": "1",
                "TV_FAKE_NVML_LOG": str(tmp_path / f"nvml{rank}.log")}
        nodes.append(start(rank, "--gpu-health", "off", env_extra=fake))
    for rank, (code, log) in enumerate(finish(p) for p in nodes):
        assert code == 0, log
        gpus = [l.split("start: gpus: ", 1)[1] for l in log.splitlines() if "start: gpus: " in l]
        assert gpus == ["GPU 1: Fake H200 (UUID: GPU-fake-0001, PCI 00000000:02:00.0) (from NVML, "
                        "read in the preflight; device nodes: no NVIDIA GPU device (/dev/nvidia*, "
                        "/proc/driver/nvidia/gpus))"], log
        loads = [l for l in (tmp_path / f"nvml{rank}.log").read_text().splitlines()
                 if l.startswith("load ")]
        assert len(loads) == 1 and " __query gpu-health" in loads[0], loads
