"""The seeds' launcher lines (tests/data/seeds/, copied from ../shared/fixtures/seeds) under the
environment each platform really injects, with workers that really use torch: every worker joins a
gloo process group through env://, so rank 0's TCPStore binds MASTER_PORT, and all-reduces.
Two nodes x two workers on loopback; only the launcher word(s) change to `trainvisor run`.

- PyTorchJob (Isaac Lab on HyperPod EKS): what kubeflow/training-operator sets (v1.7.0+,
  commit 2f18ab7af, #1840: pkg/controller.v1/pytorch/master.go `MasterEnvVarGenerator.Generate`
  sets MASTER_PORT and PET_MASTER_PORT to the same container port, MASTER_ADDR and
  PET_MASTER_ADDR; pkg/controller.v1/pytorch/envvar.go `setPodEnv` sets WORLD_SIZE = replicas x
  nprocPerNode, RANK, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_NNODES, PYTHONUNBUFFERED); before
  v1.7 only MASTER_PORT, MASTER_ADDR, WORLD_SIZE (the pod count) and RANK. The seed's endpoint is
  $MASTER_ADDR:$MASTER_PORT, so trainvisor's coordinator takes that port and the workers'
  MASTER_PORT must be another one.

The test-only settings (no preflight, no standby, side files in tmp) travel as TRAINVISOR_*
variables, so the line itself is the seed's. Environment (set by ctest): TRAINVISOR_BIN,
TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON."""
import re
import shlex
import subprocess

import pytest

from tvtest import BIN, PYTHON, SOURCE_DIR, base_env, free_ports
from torchrun_cli import records

SEEDS = SOURCE_DIR / "tests" / "data" / "seeds"
TIMEOUT_S = 300  # generous: 2 shared cores, four torch imports

# The stand-in training script: a gloo group through env:// (rank 0's TCPStore listens on
# MASTER_PORT), one all-reduce, then its environment and argv recorded.
TORCH_WORKER = f"""#!{PYTHON}
import json, os, sys
import torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(1)
dist.all_reduce(t)
rec = {{"argv": sys.argv[1:], "env": dict(os.environ), "sum": t.item()}}
path = os.path.join(os.environ["TV_RECORD_DIR"], "rank_%s.json" % os.environ["RANK"])
with open(path + ".tmp", "w") as f:
    json.dump(rec, f)
os.rename(path + ".tmp", path)
dist.destroy_process_group()
"""


def seed_line(name, launcher):
    """The seed's launcher line, continuation lines joined, envsubst's $$ as $, the launcher word(s)
    replaced by `exec trainvisor run`."""
    text = (SEEDS / name).read_text().replace("\\\n", " ").replace("$$", "$")
    line = re.sub(r"\s+", " ", text).strip()
    assert line.startswith(launcher), line
    return f"exec {shlex.quote(str(BIN))} run" + line[len(launcher):]


def run_nodes(tmp_path, cmd, node_env, script_name, extra=None):
    """One `bash -c cmd` per node, cwd tmp_path (where the stand-in sits); returns the workers'
    records and each node's output, after every node exited 0."""
    (tmp_path / script_name).write_text(TORCH_WORKER)
    out = tmp_path / "records"
    out.mkdir()
    procs = []
    for node in range(2):
        env = base_env(TV_RECORD_DIR=out, TRAINVISOR_PREFLIGHT="none",
                       TRAINVISOR_WARM_STANDBY="off", TRAINVISOR_MAX_RESTARTS=0,
                       TRAINVISOR_RDZV_TIMEOUT=120, GLOO_SOCKET_IFNAME="lo",
                       TRAINVISOR_FAILURE_FILE=tmp_path / f"failure{node}",
                       TRAINVISOR_TERMINATION_LOG=tmp_path / f"termination{node}",
                       **node_env(node), **(extra(node) if extra else {}))
        procs.append(subprocess.Popen(["bash", "-c", cmd], cwd=tmp_path, env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outs = []
    try:
        outs = [p.communicate(timeout=TIMEOUT_S)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    for node, (p, said) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"node {node} exit {p.returncode}:\n{said[-4000:]}"
    return records(out), outs


def assert_one_torch_world(recs, argv):
    assert sorted(recs) == [0, 1, 2, 3], sorted(recs)
    for rank, r in recs.items():
        assert r["sum"] == 4.0, r["sum"]
        assert r["argv"] == argv, r["argv"]
        e = r["env"]
        layout = (e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"], e["GROUP_RANK"])
        assert layout == ("4", "2", str(rank // 2)), layout
        assert e["TORCHELASTIC_RESTART_COUNT"] == "0", "generation 0 did not make the group"
    assert len({r["env"]["MASTER_PORT"] for r in recs.values()}) == 1


ISAAC = {"TASK": "Isaac-Velocity-Rough-H1-v0", "MAX_ITERATIONS": "7", "RESUME_FLAG": "",
         "JOB_GPUS": 2, "JOB_NUM_NODES": 2}
ISAAC_ARGV = ["--distributed", "--task=Isaac-Velocity-Rough-H1-v0", "--max_iterations=7",
              "--headless"]


def pytorchjob_env(port, operator):
    """A PyTorchJob pod's variables as the training operator sets them (module docstring), for a
    job `isaaclab-h1` (the seed's name) with nprocPerNode 2; MASTER_ADDR is 127.0.0.1 on loopback
    (the operator's `isaaclab-h1-master-0` resolves only in the cluster), HOSTNAME the pod's."""
    def env(node):
        pod = "isaaclab-h1-master-0" if node == 0 else f"isaaclab-h1-worker-{node - 1}"
        e = {**ISAAC, "HOSTNAME": pod, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
             "RANK": node, "PYTHONUNBUFFERED": "0"}
        if operator == "v1.7+":
            e.update(PET_MASTER_ADDR="127.0.0.1", PET_MASTER_PORT=port, PET_NNODES=2,
                     PET_NODE_RANK=node, PET_NPROC_PER_NODE=2, WORLD_SIZE=4)
        else:
            e.update(WORLD_SIZE=2)
        return e
    return env


@pytest.mark.parametrize("operator", ["v1.7+"])
def test_pytorchjob_endpoint_port_is_the_coordinators_and_never_the_workers(tmp_path, operator):
    port, = free_ports(1)
    cmd = seed_line("isaac_lab_pytorchjob.sh", "/isaac-sim/python.sh -m torch.distributed.run")
    recs, outs = run_nodes(tmp_path, cmd, pytorchjob_env(port, operator), "run_train.py")
    assert_one_torch_world(recs, ISAAC_ARGV)
    master_port = int(recs[0]["env"]["MASTER_PORT"])
    assert master_port != port, "the workers got the coordinator's port"
    assert "is the rendezvous coordinator's port, from --rdzv-endpoint" in outs[0], outs[0][-3000:]

