"""Each seed job's platform: the environment it injects into a node's container (as its source
defines it, cited per platform), the seed's launcher line with only its first word changed,
where the stand-in script goes, the checkpoint layout, and the platform's retry rule (what it
does with each exit code). The seed files are read from tests/data/seeds/ (copied from
awsome-distributed-ai, MIT-0: tests/data/seeds/LICENSE-awsome-distributed-ai)."""
import json
import re
from pathlib import Path

import tvtest
from torchrun_cli import launcher_lines

SEEDS = tvtest.SOURCE_DIR / "tests" / "data" / "seeds"
STAND_IN = Path(__file__).resolve().parent / "stand_in_trainer.py"
DCP = tvtest.SOURCE_DIR / "tests" / "data" / "checkpoint" / "dcp_real" / "two_ranks"

# Isaac Sim's /isaac-sim/python.sh (Isaac Sim 5.1: it sources setup_python_env.sh, which exports
# these, then execs its bundled python): the wrapper every Isaac Lab seed line runs through.
ISAAC_PYTHON_SH = """#!/bin/bash
export ISAAC_PATH={root}
export CARB_APP_PATH={root}/kit
export EXP_PATH={root}/apps
export PYTHONPATH={root}/site:$PYTHONPATH
exec {python} "$@"
"""



class Platform:
    name = ""
    layout = "skrl"
    wrapper = True  # through Isaac Sim's python.sh
    script = "run_train.py"
    checkpoint_sub = "logs"

    def setup(self, job):
        """The image: the stand-in where the line expects its script, the interpreter wrapper,
        the shared storage."""
        target = job.workdir / self.script
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(STAND_IN.read_text())
        for parent in target.relative_to(job.workdir).parents:
            if parent != Path(".") and self.script.count("/"):
                (job.workdir / parent / "__init__.py").touch()
        self.storage = job.dir / "storage"
        self.ckpt = self.storage / self.checkpoint_sub
        self.ckpt.mkdir(parents=True)
        if self.wrapper:
            root = job.dir / "isaac-sim"
            (root / "site").mkdir(parents=True)
            sh = root / "python.sh"
            sh.write_text(ISAAC_PYTHON_SH.format(root=root, python=tvtest.PYTHON))
            sh.chmod(0o755)
            self.python = sh
        else:
            self.python = tvtest.PYTHON

    def common_env(self, job, node, container):
        env = {"SCEN_DIR": job.dir, "SCEN_LAYOUT": self.layout, "SCEN_CKPT_ROOT": self.ckpt,
               "SCEN_DCP": DCP, "PYTHON_EXEC": self.python, "PYTHONPATH": job.workdir,
               # the fake NVML: the GPU health watch on (its default), fed by a file the test
               # writes to raise an Xid (tests/helpers/fake_nvml/fake_nvml.cc)
               "LD_LIBRARY_PATH": tvtest.HELPERS / "fake_nvml", "TV_FAKE_NVML_GPUS": job.nproc,
               "TV_FAKE_NVML_XID_FILE": job.dir / f"xid_node{node}",
               # test-only settings that are not the job's: no GPU to check before the start
               "TRAINVISOR_PREFLIGHT": "none",
               # what an operator adds (off by default): a hang is 20 s without output or a
               # heartbeat (the stand-in touches its heartbeat file each step)
               "TRAINVISOR_HANG_TIMEOUT": 20,
               # where the seed keeps its checkpoints, and how its script takes one
               "TRAINVISOR_CHECKPOINT_DIR": self.ckpt}
        if self.layout == "skrl":
            env["TRAINVISOR_RESUME_ARG"] = "--checkpoint {}"
        return env

    def resume_words(self, record):
        path = record["resume_path"]
        return {"--checkpoint", path} if path and self.layout == "skrl" else set()

    def newest_step(self, job):
        steps = [int(m.group(1)) for p in self.ckpt.rglob("agent_*.pt")
                 if (m := re.fullmatch(r"agent_(\d+)\.pt", p.name))]
        for p in self.ckpt.rglob("latest_checkpoint.txt"):
            if m := re.fullmatch(r"iter_(\d+)\s*", p.read_text()):
                steps.append(int(m.group(1)))
        return max(steps, default=0)

    def command(self, job, node):
        raise NotImplementedError

    def launch(self, job, container):
        """Starts every node's container: here one entrypoint shell per node (job.Node); a
        platform with its own launcher (Slurm: sbatch, srun) starts them its way."""
        for n in job.nodes:
            n.start(container, self.env(job, n.index, container), self.command(job, n.index))

    def exits(self, job):
        """Each node's exit code, once every node has exited."""
        return [n.wait() for n in job.nodes]

    def retries(self, code):
        """Whether the platform starts this node's container again after `code`."""
        raise NotImplementedError


class Kubeflow(Platform):
    """Isaac Lab on HyperPod EKS: the PyTorchJob of templates/training-job.yaml.tpl (Master's line
    on node 0, Worker's on node 1). The operator's env: kubeflow/training-operator
    pkg/controller.v1/pytorch/envvar.go `setPodEnv` (PYTHONUNBUFFERED=0, WORLD_SIZE = replicas,
    RANK = the replica's index, +1 for workers) and master.go `MasterEnvVarGenerator`
    (MASTER_PORT and PET_MASTER_PORT, MASTER_ADDR and PET_MASTER_ADDR, the same values); the
    v1.8.1/v1.9.0 builds set no PET_* (variant "plain"). restartPolicy OnFailure: any non-zero
    exit restarts the container in place (kubeflow/common `pastBackoffLimit` counts them)."""
    name = "kubeflow"

    def __init__(self, pet=True):
        self.pet = pet

    def operator_env(self, job, node):
        env = {"PYTHONUNBUFFERED": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": job.port,
               "WORLD_SIZE": len(job.nodes), "RANK": node,
               "HOSTNAME": f"isaaclab-job-{'master' if node == 0 else 'worker'}-{max(node - 1, 0)}"}
        if self.pet:
            env.update(PET_MASTER_ADDR="127.0.0.1", PET_MASTER_PORT=job.port)
        return env

    def env(self, job, node, container):
        return {**self.common_env(job, node, container), **self.operator_env(job, node),
                # the template's own env and what envsubst filled in (config.yaml.example)
                "ACCEPT_EULA": "Y", "PRIVACY_CONSENT": "Y", "JOB_GPUS": job.nproc,
                "JOB_NUM_NODES": len(job.nodes), "TASK": "Isaac-Velocity-Rough-H1-v0",
                "MAX_ITERATIONS": 1000, "RESUME_FLAG": ""}

    def command(self, job, node):
        tpl = SEEDS / "isaac-lab-hyperpod-sagemaker" / "templates" / "training-job.yaml.tpl"
        launcher = "/isaac-sim/python.sh -m torch.distributed.run"
        line = launcher_lines(tpl, launcher)[0 if node == 0 else 1]
        return line[len(launcher):]

    def retries(self, code):
        return code != 0


class Cosmos(Kubeflow):
    """Cosmos 3 on HyperPod EKS: hyperpod-eks/train-multi-node-dlc.yaml, `exec torchrun ... -m
    cosmos3_aws.action.launch_droid_policy --sft-toml ... -- overrides`, the same operator env,
    checkpoints as cosmos-rl writes them under IMAGINAIRE_OUTPUT_ROOT (FSx), no wrapper."""
    name = "cosmos"
    layout = "cosmos"
    wrapper = False
    script = "cosmos3_aws/action/launch_droid_policy.py"
    checkpoint_sub = "out"

    def env(self, job, node, container):
        return {**self.common_env(job, node, container), **self.operator_env(job, node),
                "NUM_NODES": len(job.nodes), "GPUS_PER_NODE": job.nproc,
                "POLICY_TOML": "droid_policy_smoke.toml", "MAX_ITER": 1000, "CKPT_TYPE": "dummy",
                "IMAGINAIRE_OUTPUT_ROOT": self.ckpt, "PYTHONHASHSEED": "42",
                "FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "FI_EFA_FORK_SAFE": "1",
                "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET,ENV",
                # EFA is what this seed asks for; there is none on loopback
                "TRAINVISOR_REQUIRE_TRANSPORT": "any"}

    def command(self, job, node):
        yaml = SEEDS / "cosmos3-hyperpod" / "hyperpod-eks" / "train-multi-node-dlc.yaml"
        line, = launcher_lines(yaml, "exec torchrun")
        return line[len("exec torchrun"):]


class SageMaker(Platform):
    """Isaac Lab on SageMaker Training: scripts/sm-train-entrypoint.sh's exports and what it
    computes from /opt/ml/input/config/resourceconfig.json (NNODES, NODE_RANK, MASTER_HOST,
    MASTER_PORT=29500 there: a free port here), TRAINING_JOB_NAME as SageMaker sets it, the
    checkpoints in /opt/ml/checkpoints (the entrypoint links the logs there), the copy into
    /opt/ml/model as `--export`. SageMaker does not restart a failed job's containers: a new
    container of the same job is a managed spot restart or HyperPod's auto-resume."""
    name = "sagemaker"
    checkpoint_sub = "opt_ml_checkpoints"

    def env(self, job, node, container):
        hosts = [f"127.0.0.{i + 1}" for i in range(len(job.nodes))]
        rc = job.dir / f"resourceconfig{node}.json"
        rc.write_text(json.dumps({"current_host": hosts[node], "hosts": hosts,
                                  "current_group_name": "homogeneousCluster"}))
        model = job.dir / "opt_ml_model"
        model.mkdir(exist_ok=True)
        return {**self.common_env(job, node, container),
                "TRAINING_JOB_NAME": "isaaclab-h1-2026-12-01", "TRAINVISOR_RESOURCE_CONFIG": rc,
                "NCCL_DEBUG": "INFO", "ACCEPT_EULA": "Y", "PRIVACY_CONSENT": "Y",
                "HYDRA_FULL_ERROR": "1", "TORCHELASTIC_ERROR_FILE": "/tmp/torch_elastic_error.json",
                "ISAACLAB_INIT_LOCK": job.dir / "isaaclab_init.lock",
                "NPROC": job.nproc, "NNODES": len(job.nodes), "NODE_RANK": node,
                "MASTER_HOST": hosts[0], "MASTER_PORT": job.port,
                "TASK": "Isaac-Velocity-Rough-H1-v0", "MAX_ITERATIONS": 1000, "RESUME_FLAG": "",
                "TRAINVISOR_EXPORT": self.ckpt, "TRAINVISOR_EXPORT_DIR": model}

    def command(self, job, node):
        sh = SEEDS / "isaac-lab-hyperpod-sagemaker" / "scripts" / "sm-train-entrypoint.sh"
        launcher = "/isaac-sim/python.sh -m torch.distributed.run"
        line, = launcher_lines(sh, launcher)
        return line[len(launcher):]

    def retries(self, code):
        return False


class Batch(Platform):
    """Isaac Lab on AWS Batch multi-node parallel: distributed_run.md's line, run from the
    Isaac Lab directory, the variables Batch sets in each node's container (AWS Batch User Guide,
    "Multi-node parallel jobs" / "Environment variables": AWS_BATCH_JOB_ID with #<node index>,
    AWS_BATCH_JOB_ATTEMPT, AWS_BATCH_JOB_NUM_NODES, AWS_BATCH_JOB_NODE_INDEX,
    AWS_BATCH_JOB_MAIN_NODE_INDEX, AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS on the other
    nodes only), distributed_run.bash's MASTER_ADDR and NUM_GPUS. The retry rule is the rendered
    job definition's evaluateOnExit: 74 and 75 retry, everything else exits."""
    name = "batch"
    script = "train.py"
    checkpoint_sub = "efs_models"

    def env(self, job, node, container):
        env = {**self.common_env(job, node, container),
               "AWS_BATCH_JOB_ID": f"4f1c-isaaclab#{node}", "AWS_BATCH_JOB_ATTEMPT": container + 1,
               "AWS_BATCH_JOB_NUM_NODES": len(job.nodes), "AWS_BATCH_JOB_NODE_INDEX": node,
               "AWS_BATCH_JOB_MAIN_NODE_INDEX": 0, "AWS_BATCH_CE_NAME": "isaaclab-ce",
               "AWS_BATCH_JQ_NAME": "isaaclab-jq", "MASTER_ADDR": "127.0.0.1",
               "NUM_GPUS": job.nproc, "ACCEPT_EULA": "Y", "PRIVACY_CONSENT": "Y"}
        if node != 0:
            env["AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS"] = "127.0.0.1"
        return env

    def command(self, job, node):
        line, = launcher_lines(SEEDS / "isaac-lab-batch-mnp" / "distributed_run.md", "torchrun")
        return line[len("torchrun"):].replace(":5555", f":{job.port}")

    def retries(self, code):
        return code in (74, 75)


PLATFORMS = {"kubeflow": Kubeflow(pet=True), "kubeflow-plain": Kubeflow(pet=False),
             "sagemaker": SageMaker(), "batch": Batch(), "cosmos": Cosmos()}
