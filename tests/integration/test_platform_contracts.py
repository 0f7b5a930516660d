"""Platform contracts: each spec `trainvisor render` writes is started the way its platform starts
it, with the real binary, and each outcome (success, worker failure, lost node, bad configuration,
preflight failure) is judged by the platform's own rule, transcribed from its source or docs:

- Kubeflow (training operator v1.x): the pod's command + args and env as rendered, the Secret
  references resolved as the kubelet does, plus the variables the operator injects
  (pkg/controller.v1/pytorch/envvar.go setPodEnv). The decision: Kubernetes' restartPolicy
  OnFailure (the kubelet restarts a container that exits non-zero; the operator fails the job
  past runPolicy.backoffLimit, PastBackoffLimit in pkg/controller.v1/common/job.go), and the
  operator's ExitCode rule (IsRetryableExitCode, pkg/util/train/train_util.go) to show why render
  refuses ExitCode.
- AWS Batch (multi-node parallel): the image's ENTRYPOINT (the project's Dockerfile) + the job
  definition's command, the AWS_BATCH_* variables, the rendered environment and secrets;
  retryStrategy.evaluateOnExit applied as the Batch user guide ("Automated job retries") and the
  RegisterJobDefinition model (botocore) define it; botocore validates the definition.
- SageMaker: ContainerEntrypoint + ContainerArguments, the rendered Environment, the resource
  config; any non-zero exit fails the job (RetryStrategy retries InternalServerError only, per
  the CreateTrainingJob model); the failure file is the job's FailureReason.

Every "node" is a process on this host: the container's files (/dev/termination-log,
/opt/ml/output/failure, /opt/ml/input/config/resourceconfig.json) are redirected into the test's
directory through trainvisor's TRAINVISOR_* variables, and the image's /usr/local/bin/trainvisor
is this build's binary. tests/container/test_platform_containers.py runs the same specs and rules
in podman containers, trainvisor as PID 1 (docs/render.md).
"""
import json
import re
import subprocess

import botocore.session
import botocore.validate
import pytest

from tvtest import free_ports
import tvtest

BIN = tvtest.BIN
HELPERS = tvtest.HELPERS
SRC = tvtest.SOURCE_DIR
IMAGE_BIN = "/usr/local/bin/trainvisor"
SECRETS = {("hf-token", "token"): "hf_secret_value",  # the cluster's Secret / Secrets Manager
           "arn:aws:secretsmanager:us-west-2:123456789012:secret:hf": "hf_secret_value",
           ("contract-rdzv", "token"): "0123456789abcdef"}
TIMEOUT_S = 60

# name -> (nodes in the spec, the nodes that actually run, command, extra run_args, trainvisor's code)
OUTCOMES = {
    "success": (1, [0], ["tv_env_dump", "{env}"], [], 0),
    "worker_failure": (1, [0], ["tv_exit", "3"], [], 3),
    "lost_node": (2, [1], ["tv_exit", "0"], ["--rdzv-timeout", "2"], 75),
    "bad_config": (1, [0], ["tv_exit", "0"], ["--resume", "sometimes"], 78),
    "preflight_failure": (1, [0], ["tv_exit", "0"], ["--preflight", "basic", "--require-transport", "efa"], 69),
}


def description(tmp, outcome, target):
    nodes, _, command, run_args, _ = OUTCOMES[outcome]
    cmd = [str(HELPERS / command[0])] + [a.replace("{env}", str(tmp / "env")) for a in command[1:]]
    preflight = [] if "--preflight" in run_args else ["--preflight", "none"]
    doc = {"name": "contract", "image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/contract:1",
           "nodes": nodes, "gpus_per_node": 0, "command": cmd, "run_args": preflight + run_args,
           "max_restarts": 0, "checkpoint_dir": str(tmp / "ckpt"),
           "env": {"ACCEPT_EULA": "Y", "NCCL_SOCKET_IFNAME": "lo"},
           "secrets": {"HF_TOKEN": {"secret": "hf-token", "key": "token",
                                    "arn": "arn:aws:secretsmanager:us-west-2:123456789012:secret:hf"}}}
    if target == "batch":
        doc["batch"] = {"vcpus": 4, "memory_mib": 8192,
                        "execution_role_arn": "arn:aws:iam::123456789012:role/exec"}
    if target == "sagemaker":
        del doc["secrets"]  # SageMaker has none: render refuses them (test below)
        doc["instance_type"] = "ml.g6.12xlarge"
        doc["checkpoint_s3_uri"] = "s3://bucket/ckpt"
        doc["sagemaker"] = {"role_arn": "arn:aws:iam::123456789012:role/sm", "output_s3_uri": "s3://bucket/out"}
    path = tmp / f"{target}.json"
    path.write_text(json.dumps(doc))
    return path


def render(path, target):
    p = subprocess.run([str(BIN), "render", "--config", str(path), "--target", target],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def image_argv(argv):
    """The image's /usr/local/bin/trainvisor is this build's binary."""
    return [str(BIN) if a == IMAGE_BIN else a for a in argv]


def start(tmp, name, argv, env):
    base = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "LANG": "C.UTF-8",
            "TRAINVISOR_TERMINATION_LOG": str(tmp / f"termination-log-{name}"),
            "TRAINVISOR_FAILURE_FILE": str(tmp / f"failure-{name}")}
    log = open(tmp / f"{name}.log", "wb")
    p = subprocess.Popen(image_argv(argv), env={**base, **env}, cwd=tmp, stdin=subprocess.DEVNULL,
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    return p


def finish(tmp, procs):
    codes = {}
    for name, p in procs.items():
        try:
            codes[name] = p.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            pytest.fail(f"{name} hung: {(tmp / f'{name}.log').read_text()[-2000:]}")
    return codes


def check_worker_env(tmp, expected):
    dumped = json.loads((tmp / "env_0").read_text())
    for k, v in expected.items():
        assert dumped.get(k) == v, (k, dumped.get(k))


# --- Kubeflow ---------------------------------------------------------------------------------

def operator_is_retryable_exit_code(code):
    """Transcribed from kubeflow/training-operator pkg/util/train/train_util.go
    (https://github.com/kubeflow/training-operator/blob/07a4a89697d80501695ae59f2d9a22aa27fd5044/pkg/util/train/train_util.go)."""
    return code >= 128


def kubeflow_decision(restart_policy, code):
    if code == 0:
        return "Succeeded"
    if restart_policy == "OnFailure":  # kubelet restarts in place; backoffLimit bounds the total
        return "restart"
    assert restart_policy == "ExitCode"  # the operator recreates the pod, or fails the job for good
    return "restart" if operator_is_retryable_exit_code(code) else "Failed"


def operator_env(job, rtype, index, master_port):
    """setPodEnv + the master env generator (pkg/controller.v1/pytorch/envvar.go, master.go)."""
    specs = job["spec"]["pytorchReplicaSpecs"]
    total = sum(s["replicas"] for s in specs.values())
    nproc = job["spec"].get("nprocPerNode", "1")
    rank = index + (1 if rtype == "Worker" else 0)
    return {"PYTHONUNBUFFERED": "0", "MASTER_PORT": str(master_port), "MASTER_ADDR": "127.0.0.1",
            "PET_MASTER_PORT": str(master_port), "PET_MASTER_ADDR": "127.0.0.1",
            "WORLD_SIZE": str(total * int(nproc) if nproc.isdigit() else total), "RANK": str(rank),
            "PET_NPROC_PER_NODE": nproc, "PET_NODE_RANK": str(rank), "PET_NNODES": str(total),
            "KUBERNETES_SERVICE_HOST": "10.100.0.1"}


def kubelet_env(container):
    env = {}
    for e in container["env"]:
        if "value" in e:
            env[e["name"]] = e["value"]
        else:
            ref = e["valueFrom"]["secretKeyRef"]
            env[e["name"]] = SECRETS[(ref["name"], ref["key"])]
    return env


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_kubeflow_pods_end_as_the_operator_treats_them(tmp_path, outcome):
    job = render(description(tmp_path, outcome, "kubeflow"), "kubeflow")
    _, running, _, _, expected = OUTCOMES[outcome]
    master_port, rdzv_port = free_ports(2)
    procs = {}
    for rank in running:
        rtype, index = ("Master", 0) if rank == 0 else ("Worker", rank - 1)
        spec = job["spec"]["pytorchReplicaSpecs"][rtype]
        assert spec["restartPolicy"] == "OnFailure"
        ct = spec["template"]["spec"]["containers"][0]
        env = {**kubelet_env(ct), **operator_env(job, rtype, index, master_port),
               "TRAINVISOR_RDZV_PORT": str(rdzv_port)}  # two pods on one host
        procs[f"{rtype}-{index}"] = start(tmp_path, f"{rtype}-{index}", ct["command"] + ct["args"], env)
    code = list(finish(tmp_path, procs).values())[0]
    assert code == expected, (tmp_path / f"{list(procs)[0]}.log").read_text()[-2000:]
    assert kubeflow_decision("OnFailure", code) == ("Succeeded" if code == 0 else "restart")
    if outcome == "success":
        check_worker_env(tmp_path, {"ACCEPT_EULA": "Y", "HF_TOKEN": "hf_secret_value", "PET_NNODES": "1"})
    if outcome == "lost_node":
        # Under ExitCode the operator would fail the job for good on trainvisor's "retry me".
        assert kubeflow_decision("ExitCode", code) == "Failed"
        assert kubeflow_decision("ExitCode", 137) == "restart"  # and retry an OOM kill forever


def test_kubeflow_exitcode_policy_is_refused(tmp_path):
    path = description(tmp_path, "success", "kubeflow")
    doc = json.loads(path.read_text())
    doc["kubeflow"] = {"restart_policy": "ExitCode"}
    path.write_text(json.dumps(doc))
    p = subprocess.run([str(BIN), "render", "--config", str(path), "--target", "kubeflow"],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    assert p.returncode == 78 and "IsRetryableExitCode" in p.stderr


# --- AWS Batch ----------------------------------------------------------------------------------

def dockerfile_entrypoint():
    """The last ENTRYPOINT of the project's Dockerfile: the image docs/deployment.md describes."""
    lines = [l for l in (SRC / "Dockerfile").read_text().splitlines() if l.startswith("ENTRYPOINT")]
    return json.loads(lines[-1][len("ENTRYPOINT"):].strip())


def batch_glob(pattern, value):
    """A Batch pattern: exact, or a prefix when it ends with '*' (EvaluateOnExit in the model)."""
    return value.startswith(pattern[:-1]) if pattern.endswith("*") else value == pattern


def batch_evaluate_on_exit(rules, exit_code, status_reason, reason):
    """First rule whose every condition matches; none matches: RETRY (RetryStrategy in the model)."""
    facts = {"onExitCode": str(exit_code), "onStatusReason": status_reason, "onReason": reason}
    for r in rules:
        if all(batch_glob(r[k], v) for k, v in facts.items() if k in r):
            return r["action"]
    return "RETRY"


def batch_errors(definition):
    model = botocore.session.get_session().get_service_model("batch")
    shape = model.operation_model("RegisterJobDefinition").input_shape
    report = botocore.validate.ParamValidator().validate(definition, shape)
    return report.generate_report() if report.has_errors() else ""


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_batch_nodes_end_as_evaluate_on_exit_treats_them(tmp_path, outcome):
    definition = render(description(tmp_path, outcome, "batch"), "batch")
    assert batch_errors(definition) == ""
    _, running, _, _, expected = OUTCOMES[outcome]
    ct = definition["nodeProperties"]["nodeRangeProperties"][0]["container"]
    entrypoint = dockerfile_entrypoint()
    assert entrypoint == [IMAGE_BIN] and ct["command"][0] == "run"
    n = definition["nodeProperties"]["numNodes"]
    procs = {}
    for index in running:
        env = {e["name"]: e["value"] for e in ct.get("environment", [])}
        env.update({s["name"]: SECRETS[s["valueFrom"]] for s in ct.get("secrets", [])})
        env.update({"AWS_BATCH_JOB_ID": f"0d4e1b7a-job#{index}", "AWS_BATCH_JOB_ATTEMPT": "1",
                    "AWS_BATCH_JOB_NUM_NODES": str(n), "AWS_BATCH_JOB_NODE_INDEX": str(index),
                    "AWS_BATCH_JOB_MAIN_NODE_INDEX": "0", "AWS_BATCH_CE_NAME": "ce",
                    "AWS_BATCH_JQ_NAME": "jq"})
        if index != 0:  # Batch gives the children the main node's address
            env["AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS"] = "127.0.0.1"
        env["TRAINVISOR_MASTER_PORT"], env["TRAINVISOR_RDZV_PORT"] = map(str, free_ports(2))
        procs[f"node{index}"] = start(tmp_path, f"node{index}", entrypoint + ct["command"], env)
    code = list(finish(tmp_path, procs).values())[0]
    assert code == expected, (tmp_path / f"{list(procs)[0]}.log").read_text()[-2000:]
    rules = definition["retryStrategy"]["evaluateOnExit"]
    action = None if code == 0 else batch_evaluate_on_exit(
        rules, code, "Essential container in task exited", "")
    assert action == {0: None, 3: "EXIT", 75: "RETRY", 78: "EXIT", 69: "EXIT"}[code]
    assert batch_evaluate_on_exit(rules, 137, "Host EC2 (instance i-0abc) terminated.", "") == "RETRY"
    if outcome == "success":
        check_worker_env(tmp_path, {"ACCEPT_EULA": "Y", "HF_TOKEN": "hf_secret_value",
                                    "NCCL_SOCKET_IFNAME": "lo"})


def test_batch_without_the_entrypoint_would_run_trainvisor_twice(tmp_path):
    """What the old command did: ENTRYPOINT + [/usr/local/bin/trainvisor, run, ...] exits 64."""
    definition = render(description(tmp_path, "success", "batch"), "batch")
    command = definition["nodeProperties"]["nodeRangeProperties"][0]["container"]["command"]
    p = start(tmp_path, "twice", dockerfile_entrypoint() + [IMAGE_BIN] + command,
              {"AWS_BATCH_JOB_NUM_NODES": "1", "AWS_BATCH_JOB_NODE_INDEX": "0",
               "AWS_BATCH_JOB_MAIN_NODE_INDEX": "0"})
    assert finish(tmp_path, {"twice": p})["twice"] == 64


# --- SageMaker ----------------------------------------------------------------------------------

def sagemaker_errors(request):
    model = botocore.session.get_session().get_service_model("sagemaker")
    shape = model.operation_model("CreateTrainingJob").input_shape
    report = botocore.validate.ParamValidator().validate(request, shape)
    return report.generate_report() if report.has_errors() else ""


def sagemaker_decision(code):
    """Non-zero: Failed (AlgorithmError). RetryStrategy retries InternalServerError only."""
    return "Completed" if code == 0 else "Failed"


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_sagemaker_hosts_end_as_the_job_treats_them(tmp_path, outcome):
    request = render(description(tmp_path, outcome, "sagemaker"), "sagemaker")
    assert sagemaker_errors(request) == ""
    # the UTC time of the rendering: a second submission does not collide with the first
    assert re.fullmatch(r"contract-[0-9]{8}-[0-9]{6}", request["TrainingJobName"])
    _, running, _, _, expected = OUTCOMES[outcome]
    algo = request["AlgorithmSpecification"]
    hosts = [f"algo-{i + 1}" for i in range(request["ResourceConfig"]["InstanceCount"])]
    procs = {}
    for index in running:
        rc = tmp_path / f"resourceconfig-{index}.json"
        rc.write_text(json.dumps({"current_host": hosts[index], "hosts": hosts,
                                  "network_interface_name": "eth0"}))
        env = {**request.get("Environment", {}), "TRAINVISOR_RESOURCE_CONFIG": str(rc),
               "TRAINING_JOB_NAME": request["TrainingJobName"], "SM_CURRENT_HOST": hosts[index]}
        procs[hosts[index]] = start(tmp_path, hosts[index], algo["ContainerEntrypoint"] + algo["ContainerArguments"], env)
    name, code = list(finish(tmp_path, procs).items())[0]
    assert code == expected, (tmp_path / f"{name}.log").read_text()[-2000:]
    assert sagemaker_decision(code) == ("Completed" if code == 0 else "Failed")
    if code in (3, 75):  # the root cause SageMaker shows as FailureReason
        assert (tmp_path / f"failure-{name}").read_text().strip()
    if outcome == "success":
        check_worker_env(tmp_path, {"ACCEPT_EULA": "Y", "NCCL_SOCKET_IFNAME": "lo"})


def test_sagemaker_refuses_secrets(tmp_path):
    path = description(tmp_path, "success", "sagemaker")
    doc = json.loads(path.read_text())
    doc["secrets"] = {"HF_TOKEN": {"arn": "arn:aws:secretsmanager:us-west-2:1:secret:hf"}}
    path.write_text(json.dumps(doc))
    p = subprocess.run([str(BIN), "render", "--config", str(path), "--target", "sagemaker"],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    assert p.returncode == 78 and "secrets.HF_TOKEN: SageMaker training jobs have no secret" in p.stderr
