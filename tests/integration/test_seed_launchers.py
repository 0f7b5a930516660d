"""The seeds' launcher lines (tests/data/seeds/), read from the seed files themselves,
with only the launcher word(s) changed to `trainvisor run`, run as two nodes x two workers on
loopback with each platform's variables, the training script replaced by a stand-in that records
its argv and environment. Each must make one world of 4, ranks 0-3, and hand the script its own
arguments exactly as the line gives them. The test-only settings (no preflight, no standby, side
files in tmp) travel as TRAINVISOR_* variables, so the line itself is the seed's.

Changed besides the first word: Batch's fixed rendezvous port 5555 becomes a free port (a test
must not depend on one port being free)."""
import json
import shlex
import subprocess

import pytest

from tvtest import BIN, SOURCE_DIR, base_env, free_ports
from torchrun_cli import RECORDER, launcher_lines, records

SEEDS = SOURCE_DIR / "tests" / "data" / "seeds"




def as_trainvisor(line, launcher):
    assert line.startswith(launcher), line
    return f"exec {shlex.quote(str(BIN))} run" + line[len(launcher):]


def run_nodes(tmp_path, commands, node_env, script_name):
    """Starts one `bash -c COMMAND` per node (cwd tmp_path, where the stand-in sits), waits."""
    script = tmp_path / script_name
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(RECORDER)
    out = tmp_path / "records"
    out.mkdir()
    procs = []
    for rank, cmd in enumerate(commands):
        env = base_env(TV_RECORD_DIR=out, PYTHONPATH=tmp_path, TRAINVISOR_PREFLIGHT="none",
                       TRAINVISOR_WARM_STANDBY="off", TRAINVISOR_RDZV_TIMEOUT=60,
                       TRAINVISOR_FAILURE_FILE=tmp_path / f"failure{rank}",
                       TRAINVISOR_TERMINATION_LOG=tmp_path / f"termination{rank}",
                       **node_env(rank))
        procs.append(subprocess.Popen(["bash", "-c", cmd], cwd=tmp_path, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=90)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
    for p, said in zip(procs, outs):
        assert p.returncode == 0, f"exit {p.returncode}:\n{said[-3000:]}"
    return records(out), outs


def assert_one_world(recs, argv):
    assert sorted(recs) == [0, 1, 2, 3], sorted(recs)
    for rank, r in recs.items():
        e = r["env"]
        assert (e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"]) == ("4", "2"), e
        assert e["GROUP_RANK"] == str(rank // 2) and e["LOCAL_RANK"] == str(rank % 2), e
        assert r["argv"] == argv, r["argv"]
    assert len({r["env"]["MASTER_ADDR"] + r["env"]["MASTER_PORT"] for r in recs.values()}) == 1


ISAAC = {"TASK": "Isaac-Velocity-Rough-H1-v0", "MAX_ITERATIONS": "7", "RESUME_FLAG": ""}
ISAAC_ARGV = ["--distributed", "--task=Isaac-Velocity-Rough-H1-v0", "--max_iterations=7",
              "--headless"]


def test_isaac_lab_pytorchjob_template(tmp_path):
    tpl = SEEDS / "isaac-lab-hyperpod-sagemaker" / "templates" / "training-job.yaml.tpl"
    launcher = "/isaac-sim/python.sh -m torch.distributed.run"
    master, worker = launcher_lines(tpl, launcher)  # the Master replica's line, the Worker's
    port, = free_ports(1)
    kubeflow = lambda rank: {**ISAAC, "JOB_GPUS": 2, "JOB_NUM_NODES": 2, "RANK": rank,
                             "WORLD_SIZE": 2, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}
    recs, _ = run_nodes(tmp_path, [as_trainvisor(master, launcher),
                                   as_trainvisor(worker, launcher)], kubeflow, "run_train.py")
    assert_one_world(recs, ISAAC_ARGV)
    assert {r["env"]["TORCHELASTIC_RUN_ID"] for r in recs.values()} == {"isaaclab-job"}


def resource_config(tmp_path, rank):
    path = tmp_path / f"resourceconfig{rank}.json"
    hosts = ["127.0.0.1", "127.0.0.2"]
    path.write_text(json.dumps({"current_host": hosts[rank], "hosts": hosts}))
    return path


@pytest.mark.parametrize("node_rank_given", [True, False], ids=["as-published", "no-node-rank"])
def test_isaac_lab_sagemaker_entrypoint(tmp_path, node_rank_given):
    """The entrypoint's variables are what it computes from resourceconfig.json (NNODES,
    NODE_RANK, MASTER_HOST); without --node_rank the rank is the resource config's."""
    sh = SEEDS / "isaac-lab-hyperpod-sagemaker" / "scripts" / "sm-train-entrypoint.sh"
    launcher = "/isaac-sim/python.sh -m torch.distributed.run"
    line, = launcher_lines(sh, launcher)
    if not node_rank_given:
        line = line.replace("--node_rank=$NODE_RANK ", "")
        assert "node_rank" not in line
    port, = free_ports(1)
    sagemaker = lambda rank: {**ISAAC, "NPROC": 2, "NNODES": 2, "NODE_RANK": rank,
                              "MASTER_HOST": "127.0.0.1", "MASTER_PORT": port,
                              "TRAINVISOR_RESOURCE_CONFIG": resource_config(tmp_path, rank)}
    cmd = as_trainvisor(line, launcher)
    recs, _ = run_nodes(tmp_path, [cmd, cmd], sagemaker, "run_train.py")
    assert_one_world(recs, ISAAC_ARGV)


def test_cosmos3_hyperpod_pytorchjob(tmp_path):
    yaml = SEEDS / "cosmos3-hyperpod" / "hyperpod-eks" / "train-multi-node-dlc.yaml"
    line, = launcher_lines(yaml, "exec torchrun")
    port, = free_ports(1)
    kubeflow = lambda rank: {"NUM_NODES": 2, "GPUS_PER_NODE": 2, "RANK": rank, "WORLD_SIZE": 2,
                             "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
                             "POLICY_TOML": "droid_policy_smoke.toml", "MAX_ITER": 5,
                             "CKPT_TYPE": "dummy"}
    pkg = tmp_path / "cosmos3_aws" / "action"
    pkg.mkdir(parents=True)
    (tmp_path / "cosmos3_aws" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    recs, _ = run_nodes(tmp_path, [line.replace("exec torchrun", as_trainvisor("t", "t"), 1)] * 2,
                        kubeflow, "cosmos3_aws/action/launch_droid_policy.py")
    assert_one_world(recs, ["--sft-toml", "/workspace/cosmos3-aws/toml/droid_policy_smoke.toml",
                            "--", "trainer.max_iter=5", "ckpt_type=dummy",
                            "job.wandb_mode=disabled"])


def test_isaac_lab_batch_distributed_run(tmp_path):
    """No --node_rank on the line: each node's rank is AWS Batch's node index."""
    md = SEEDS / "isaac-lab-batch-mnp" / "distributed_run.md"
    line, = launcher_lines(md, "torchrun")
    assert "node_rank" not in line
    port, = free_ports(1)
    line = line.replace(":5555", f":{port}")
    batch = lambda rank: {"AWS_BATCH_JOB_NUM_NODES": 2, "AWS_BATCH_JOB_NODE_INDEX": 1 - rank,
                          "AWS_BATCH_JOB_MAIN_NODE_INDEX": 1, "AWS_BATCH_JOB_ID": f"j1#{1 - rank}",
                          "AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS": "127.0.0.1",
                          "MASTER_ADDR": "127.0.0.1", "NUM_GPUS": 2}
    recs, _ = run_nodes(tmp_path, [as_trainvisor(line, "torchrun")] * 2, batch, "train.py")
    assert_one_world(recs, ["..."])
