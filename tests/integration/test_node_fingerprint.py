"""The node fingerprint at the rendezvous (docs/coordination.md, "Node fingerprint"), against the
real binary: two `trainvisor run` nodes on 127.0.0.1.

Nodes whose NCCL_* settings differ, or whose workers' torch differs (a real torch/version.py on
each node's PYTHONPATH, read by the real torch-version child: the "fake library dir" of this
test), are refused before any worker starts: both exit 78 and both name the difference per node,
and the worker (which would create a file) never ran. Identical nodes run the job; so do
different ones with --node-fingerprint off on node 0; per-node variables (CUDA_VISIBLE_DEVICES,
NCCL_SOCKET_IFNAME) may differ.
Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import subprocess
import uuid

import pytest

import tvtest

TIMEOUT_S = 240
WORKER = "import os, sys\nopen(os.path.join(sys.argv[1], 'ran_' + os.environ['RANK']), 'w').close()\n"


def fake_torch(directory, version):
    """A torch package the import system finds (torch/__init__.py, torch/version.py)."""
    pkg = directory / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('a version file for the test only')\n")
    (pkg / "version.py").write_text(f"__version__ = '{version}'\ncuda = '12.8'\n")
    return directory


def run_job(tmp_path, node_env=({}, {}), node_args=((), ())):
    master_port, rdzv_port = tvtest.free_ports(2)
    out = tmp_path / "out"
    out.mkdir()
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    marker = uuid.uuid4().hex
    procs = []
    for rank in (0, 1):
        env = tvtest.base_env(TMPDIR=tmp_path, TV_FP_TEST=marker, **node_env[rank])
        argv = [str(tvtest.BIN), "run", "--nnodes", "2", "--node-rank", str(rank),
                "--nproc-per-node", "1", "--master-addr", "127.0.0.1",
                "--master-port", str(master_port), "--rdzv-port", str(rdzv_port),
                "--rdzv-token", "fingerprint-test", "--rdzv-timeout", "120",
                "--preflight", "none", "--failure-file", str(tmp_path / f"failure{rank}"),
                "--termination-log", str(tmp_path / f"termlog{rank}"), *node_args[rank],
                "--", tvtest.PYTHON, str(script), str(out)]
        log = tmp_path / f"node{rank}.log"
        with open(log, "wb") as f:
            procs.append(subprocess.Popen(argv, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                          stdout=f, stderr=subprocess.STDOUT,
                                          start_new_session=True))
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=TIMEOUT_S))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a node still runs after %d s" % TIMEOUT_S)
    logs = [(tmp_path / f"node{r}.log").read_text(errors="replace") for r in (0, 1)]
    return codes, logs, sorted(p.name for p in out.iterdir())


def test_identical_nodes_run_the_job(tmp_path):
    same = {"NCCL_PROTO": "Simple", "FI_PROVIDER": "efa"}
    codes, logs, ran = run_job(tmp_path, ({**same, "CUDA_VISIBLE_DEVICES": "0",
                                           "NCCL_SOCKET_IFNAME": "lo"},
                                          {**same, "CUDA_VISIBLE_DEVICES": "1"}))
    assert codes == [0, 0], logs
    assert ran == ["ran_0", "ran_1"], logs


def test_one_nccl_variable_changed_is_refused_on_every_node(tmp_path):
    codes, logs, ran = run_job(tmp_path, ({}, {"NCCL_PROTO": "Simple"}))
    assert codes == [78, 78], logs
    assert ran == [], logs  # no worker started on either node
    for log in logs:
        assert "NCCL_PROTO=Simple on node 1 (" in log and "unset on node 0 (" in log, log
    for rank in (0, 1):
        assert "NCCL_PROTO=Simple" in (tmp_path / f"failure{rank}").read_text()


def test_another_torch_on_one_node_is_refused(tmp_path):
    a = fake_torch(tmp_path / "torch_a", "2.11.0")
    b = fake_torch(tmp_path / "torch_b", "2.10.0")
    codes, logs, ran = run_job(tmp_path, ({"PYTHONPATH": str(a)}, {"PYTHONPATH": str(b)}))
    assert codes == [78, 78], logs
    assert ran == [], logs
    for log in logs:
        assert "torch 2.11.0 on node 0 (" in log and "2.10.0 on node 1 (" in log, log


def test_the_check_can_be_turned_off_on_node_0(tmp_path):
    codes, logs, ran = run_job(tmp_path, ({}, {"NCCL_ALGO": "Tree"}),
                               (("--node-fingerprint", "off"), ()))
    assert codes == [0, 0], logs
    assert ran == ["ran_0", "ran_1"], logs
