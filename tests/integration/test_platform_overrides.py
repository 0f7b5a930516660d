"""Explicit topology options under a platform's environment, and a platform's environment cut
short, against the real binary (issue 53, items 1 and 7; docs/topology.md, "Explicit values over
a platform").

- AWS Batch, 2 nodes on loopback: the main node given `--master-addr 127.0.0.1` (what
  docs/platforms/aws-batch.md tells Batch users to pass there) and the child with Batch's own
  variables form one 2-node world and both exit 0; `--nnodes 3` under Batch's 2 is refused at once
  with 78, naming the option and Batch's variable.
- SageMaker: SM_HOSTS / SM_CURRENT_HOST without the resource config are refused with 78 (as a
  partial Slurm environment is); `trainvisor train` finds hyperparameters.json and the code where
  TRAINVISOR_RESOURCE_CONFIG puts the resource config, as `run`'s topology does.

Workers record what they saw; no timed assertions. Environment (set by ctest): TRAINVISOR_BIN,
TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON."""
import json
import subprocess
import uuid

import pytest

from tvtest import BIN, PYTHON, all_exit_0, base_env, free_ports

TIMEOUT_S = 300  # generous: 2 shared cores

# A worker: records its layout, then exits 0.
RECORDER = r'''
import json, os, sys
keys = ("RANK", "WORLD_SIZE", "GROUP_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR")
path = os.path.join(sys.argv[1], "rank_%s.json" % os.environ["RANK"])
with open(path + ".tmp", "w") as f: json.dump({k: os.environ.get(k) for k in keys}, f)
os.rename(path + ".tmp", path)
'''


def batch_env(tmp_path, job, index, **extra):
    """What AWS Batch sets on node `index` of a 2-node multi-node parallel job whose main node is
    index 0 (docs.aws.amazon.com/batch/latest/userguide/job_env_vars.html): the main node's
    private address only on the child."""
    e = {"AWS_BATCH_JOB_ID": f"{job}#{index}", "AWS_BATCH_JOB_NUM_NODES": 2,
         "AWS_BATCH_JOB_NODE_INDEX": index, "AWS_BATCH_JOB_MAIN_NODE_INDEX": 0}
    if index != 0:
        e["AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS"] = "127.0.0.1"
    return base_env(TRAINVISOR_PREFLIGHT="none", TRAINVISOR_WARM_STANDBY="off",
                    TRAINVISOR_MAX_RESTARTS=0, TRAINVISOR_RDZV_TIMEOUT=120,
                    TRAINVISOR_RESOURCE_CONFIG=tmp_path / "no-resourceconfig.json",
                    TRAINVISOR_FAILURE_FILE=tmp_path / f"failure{index}",
                    TRAINVISOR_TERMINATION_LOG=tmp_path / f"termination{index}",
                    CUDA_VISIBLE_DEVICES="", **e, **extra)


def run(args, env, cwd, timeout=TIMEOUT_S):
    return subprocess.run([str(BIN), *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def test_batch_main_node_given_master_addr_trains_with_both_nodes(tmp_path):
    job = str(uuid.uuid4())
    rdzv_port, = free_ports(1)
    out = tmp_path / "records"
    out.mkdir()
    worker = ["--nproc-per-node", "2", "--rdzv-port", str(rdzv_port), "--no-python", "--",
              PYTHON, "-c", RECORDER, str(out)]
    procs = []
    for index, extra in ((0, ["--master-addr", "127.0.0.1"]), (1, [])):
        procs.append(subprocess.Popen([str(BIN), "run", *extra, *worker],
                                      env=batch_env(tmp_path, job, index), cwd=tmp_path,
                                      text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outs = all_exit_0(procs, TIMEOUT_S)
    assert "start: nodes: 2 (from env AWS_BATCH_JOB_NUM_NODES)" in outs[0], outs[0][-4000:]
    assert "start: master: 127.0.0.1 (from --master-addr)" in outs[0], outs[0][-4000:]
    recs = {int(f.stem.split("_")[1]): json.loads(f.read_text()) for f in out.glob("rank_*.json")}
    assert sorted(recs) == [0, 1, 2, 3], recs
    for rank, r in recs.items():
        assert (r["WORLD_SIZE"], r["LOCAL_WORLD_SIZE"], r["GROUP_RANK"]) == \
            ("4", "2", str(rank // 2)), r
        assert r["MASTER_ADDR"] == "127.0.0.1"


def test_batch_with_another_node_count_is_refused_naming_both(tmp_path):
    p = run(["run", "--nnodes", "3", "--master-addr", "127.0.0.1", "--no-python", "/bin/true"],
            batch_env(tmp_path, "job-1", 0), tmp_path, timeout=60)
    assert p.returncode == 78, (p.returncode, p.stdout, p.stderr)
    lines = [l for l in (p.stdout + p.stderr).splitlines() if "conflicts with" in l]
    assert len(lines) == 1, p.stdout + p.stderr
    assert '--nnodes="3" conflicts with env AWS_BATCH_JOB_NUM_NODES = 2 (platform batch)' \
        in lines[0], lines[0]


def test_partial_sagemaker_environment_is_refused(tmp_path):
    env = base_env(TRAINVISOR_RESOURCE_CONFIG=tmp_path / "input/config/resourceconfig.json",
                   TRAINVISOR_PREFLIGHT="none", SM_HOSTS='["algo-1","algo-2"]',
                   SM_CURRENT_HOST="algo-2", CUDA_VISIBLE_DEVICES="",
                   TRAINVISOR_FAILURE_FILE=tmp_path / "failure",
                   TRAINVISOR_TERMINATION_LOG=tmp_path / "termination")
    p = run(["run", "--no-python", "/bin/true"], env, tmp_path, timeout=60)
    assert p.returncode == 78, (p.returncode, p.stdout, p.stderr)
    said = p.stdout + p.stderr
    assert "resourceconfig.json does not exist but SM_HOSTS, SM_CURRENT_HOST are set" in said, said
    assert "start: " not in said, "a run started"


def sagemaker_dirs(tmp_path, program):
    """SageMaker's layout under tmp_path (not /opt/ml): input/config/{resourceconfig,
    hyperparameters}.json and code/."""
    config = tmp_path / "ml" / "input" / "config"
    config.mkdir(parents=True)
    (tmp_path / "ml" / "code").mkdir()
    (config / "resourceconfig.json").write_text(json.dumps(
        {"current_host": "algo-1", "hosts": ["algo-1"]}))
    (config / "hyperparameters.json").write_text(json.dumps(
        {"sagemaker_program": json.dumps(program), "epochs": '"3"'}))
    return config / "resourceconfig.json"


@pytest.mark.parametrize("how", ["variable", "option"])
def test_train_reads_sagemakers_files_where_the_resource_config_is(tmp_path, how):
    rc = sagemaker_dirs(tmp_path, "train.sh")
    (tmp_path / "ml" / "code" / "train.sh").write_text(
        'echo "args: $*"; echo "cwd: $(pwd)"; echo "rank $RANK of $WORLD_SIZE"\n')
    env = base_env(TRAINVISOR_PREFLIGHT="none", TRAINVISOR_WARM_STANDBY="off",
                   TRAINING_JOB_NAME="train-" + uuid.uuid4().hex[:8], CUDA_VISIBLE_DEVICES="",
                   TRAINVISOR_FAILURE_FILE=tmp_path / "failure",
                   TRAINVISOR_TERMINATION_LOG=tmp_path / "termination")
    args = ["train"]
    if how == "variable":
        env["TRAINVISOR_RESOURCE_CONFIG"] = str(rc)
    else:
        args = ["run", "--resource-config", str(rc), "train"]
    p = run(args, env, tmp_path)
    said = p.stdout + p.stderr
    assert p.returncode == 0, said[-4000:]
    assert "args: --epochs 3" in said, said[-4000:]
    assert f"cwd: {tmp_path / 'ml' / 'code'}" in said, said[-4000:]
    assert "rank 0 of 1" in said and "start: platform: sagemaker" in said, said[-4000:]
