"""The seeds' launcher lines (tests/data/seeds/, copied from the seeds' published files) under the
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
- AWS Batch multi-node parallel: AWS_BATCH_JOB_ID (`<job id>#<node index>`),
  AWS_BATCH_JOB_NUM_NODES, AWS_BATCH_JOB_NODE_INDEX, AWS_BATCH_JOB_MAIN_NODE_INDEX, and on child
  nodes only AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS (docs.aws.amazon.com/batch/latest/
  userguide/job_env_vars.html). The seed's --nnodes names the node count only: the job id, the
  port derived from it, the rendezvous key and the job's ledger stay Batch's.
- SageMaker Training: two training jobs (TRAINING_JOB_NAME) in a row on one checkpoint location
  with the seed's fixed --rdzv_id: each keeps its own ledger.

The test-only settings (no preflight, no standby, side files in tmp) travel as TRAINVISOR_*
variables, so the line itself is the seed's. Environment (set by ctest): TRAINVISOR_BIN,
TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON."""
import json
import shlex
import subprocess
import uuid

import pytest

from tvtest import BIN, PYTHON, SOURCE_DIR, all_exit_0, base_env, free_ports
from torchrun_cli import RECORDER, launcher_lines, records

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


def seed_line(name, launcher, index=0):
    """The seed's launcher line, read from the seed's own file (torchrun_cli.launcher_lines), the
    launcher word(s) replaced by `exec trainvisor run`."""
    line = launcher_lines(SEEDS / name, launcher)[index]
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
    outs = all_exit_0(procs, TIMEOUT_S)
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


@pytest.mark.parametrize("operator", ["v1.7+", "v1.6"])
def test_pytorchjob_endpoint_port_is_the_coordinators_and_never_the_workers(tmp_path, operator):
    port, = free_ports(1)
    cmd = seed_line("isaac-lab-hyperpod-sagemaker/templates/training-job.yaml.tpl", "/isaac-sim/python.sh -m torch.distributed.run")
    recs, outs = run_nodes(tmp_path, cmd, pytorchjob_env(port, operator), "run_train.py")
    assert_one_torch_world(recs, ISAAC_ARGV)
    master_port = int(recs[0]["env"]["MASTER_PORT"])
    assert master_port != port, "the workers got the coordinator's port"
    assert "is the rendezvous coordinator's port, from --rdzv-endpoint" in outs[0], outs[0][-3000:]


def fnv1a(text):
    h = 14695981039346656037
    for c in text.encode():
        h = ((h ^ c) * 1099511628211) % 2**64
    return h


def job_master_port(job_id):
    """launcher/topology/topology.h, job_master_port, for a non-numeric id."""
    return 20000 + 2 * (fnv1a(job_id) % 5000)


def ledger(ckpt, job_id):
    return json.loads((ckpt / f".trainvisor-ledger-{fnv1a(job_id):016x}.json").read_text())


def test_batch_seed_keeps_the_job_id_its_port_key_and_ledger(tmp_path):
    """Batch's `torchrun --nnodes=$AWS_BATCH_JOB_NUM_NODES ... --rdzv_endpoint=$MASTER_ADDR:5555`:
    node index 1 is the main node (rank 0), so the ranks are Batch's, not the start order."""
    job = str(uuid.uuid4())
    port, = free_ports(1)
    cmd = seed_line("isaac-lab-batch-mnp/distributed_run.md", "torchrun").replace(":5555", f":{port}")
    ckpt = tmp_path / "efs"
    ckpt.mkdir()

    def batch(node):
        index = 1 - node  # node 0 (rank 0) is the main node, index 1
        e = {"AWS_BATCH_JOB_ID": f"{job}#{index}", "AWS_BATCH_JOB_NUM_NODES": 2,
             "AWS_BATCH_JOB_NODE_INDEX": index, "AWS_BATCH_JOB_MAIN_NODE_INDEX": 1,
             "MASTER_ADDR": "127.0.0.1", "NUM_GPUS": 2, "TRAINVISOR_CHECKPOINT_DIR": ckpt}
        if index != 1:
            e["AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS"] = "127.0.0.1"
        return e
    recs, outs = run_nodes(tmp_path, cmd, batch, "train.py")
    assert_one_torch_world(recs, ["..."])
    assert {r["env"]["TORCHELASTIC_RUN_ID"] for r in recs.values()} == {job}
    assert recs[0]["env"]["MASTER_PORT"] == str(job_master_port(job))
    for said in outs:
        assert "the rendezvous key is public" not in said, said[-3000:]
    assert ledger(ckpt, job)["job_id"] == job


def sagemaker_job(tmp_path, name, ckpt):
    """One SageMaker training job of one instance running the seed entrypoint's line."""
    rc = tmp_path / f"resourceconfig-{name}.json"
    rc.write_text(json.dumps({"current_host": "algo-1", "hosts": ["algo-1"]}))
    rec_dir = tmp_path / f"records-{name}"
    rec_dir.mkdir()
    (tmp_path / "run_train.py").write_text(RECORDER)
    env = base_env(TV_RECORD_DIR=rec_dir, TRAINVISOR_PREFLIGHT="none",
                   TRAINVISOR_WARM_STANDBY="off", TRAINVISOR_RESOURCE_CONFIG=rc,
                   TRAINVISOR_CHECKPOINT_DIR=ckpt, TRAINING_JOB_NAME=name,
                   TRAINVISOR_FAILURE_FILE=tmp_path / f"failure-{name}",
                   TRAINVISOR_TERMINATION_LOG=tmp_path / f"termination-{name}",
                   NPROC=1, NNODES=1, NODE_RANK=0, MASTER_HOST="127.0.0.1",
                   MASTER_PORT=free_ports(1)[0], RESUME_FLAG="")
    cmd = seed_line("isaac-lab-hyperpod-sagemaker/scripts/sm-train-entrypoint.sh", "/isaac-sim/python.sh -m torch.distributed.run")
    p = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=TIMEOUT_S)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return records(rec_dir), p.stdout + p.stderr


def test_two_sagemaker_jobs_on_one_checkpoint_location_keep_two_ledgers(tmp_path):
    ckpt = tmp_path / "checkpoints"
    ckpt.mkdir()
    recs_a, _ = sagemaker_job(tmp_path, "isaaclab-a", ckpt)
    recs_b, said_b = sagemaker_job(tmp_path, "isaaclab-b", ckpt)
    # torchrun's meaning of --rdzv_id stays: the workers' run id
    assert recs_a[0]["env"]["TORCHELASTIC_RUN_ID"] == recs_b[0]["env"]["TORCHELASTIC_RUN_ID"] \
        == "sm-isaaclab"
    assert "job summary (its ledger: 1 container so far)" in said_b, said_b[-3000:]
    for job in ("isaaclab-a", "isaaclab-b"):
        account = ledger(ckpt, job)
        assert account["job_id"] == job
        assert len(account["records"]) == 1, account
