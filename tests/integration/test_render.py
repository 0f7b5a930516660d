"""`trainvisor render`: every target rendered by the real binary from the examples, then checked
by the platforms' own validators: the PyTorchJob against the Kubeflow training operator's CRD
schema (python3-jsonschema), the SageMaker and Batch requests with botocore's ParamValidator and
service models (offline), the sbatch script with `bash -n`. Bad configs exit 78 naming the field.
"""
import json
import re
import subprocess

import botocore.session
import botocore.validate
import jsonschema
import pytest
import yaml

import tvtest

BIN = str(tvtest.BIN)
SRC = tvtest.SOURCE_DIR
EXAMPLES = sorted((SRC / "examples" / "render").glob("*.json"))
# The operator's CRD and the seeds' files, copied into the repository (tests/data/k8s/README.md,
# tests/data/seeds/README.md): every clone runs these tests.
CRD = SRC / "tests" / "data" / "k8s" / "kubeflow.org_pytorchjobs.yaml"
SEEDS = SRC / "tests" / "data" / "seeds"


def render(config, target, check=True):
    p = subprocess.run([BIN, "render", "--config", str(config), "--target", target],
                       capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def pytorchjob_schema():
    crd = yaml.safe_load(CRD.read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def botocore_errors(service, operation, params):
    shape = botocore.session.get_session().get_service_model(service).operation_model(operation).input_shape
    report = botocore.validate.ParamValidator().validate(params, shape)
    return report.generate_report() if report.has_errors() else ""


def full_example():
    return SRC / "examples" / "render" / "isaac-lab-hyperpod-sagemaker.json"


def batch_example():
    return SRC / "examples" / "render" / "isaac-lab-batch-mnp.json"


KUBEFLOW_EXAMPLES = [e for e in EXAMPLES if e.stem != "isaac-lab-batch-mnp"]


@pytest.mark.parametrize("example", KUBEFLOW_EXAMPLES, ids=lambda p: p.stem)
def test_kubeflow_satisfies_the_operator_crd(example):
    job = json.loads(render(example, "kubeflow").stdout)
    jsonschema.validate(job, pytorchjob_schema())
    assert job["apiVersion"] == "kubeflow.org/v1" and job["kind"] == "PyTorchJob"


def test_crd_validation_is_real():
    """The schema check rejects a job the operator would reject (replicas as a string)."""
    job = json.loads(render(full_example(), "kubeflow").stdout)
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = "one"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(job, pytorchjob_schema())


def test_kubeflow_stop_window_is_above_the_grace_period():
    job = json.loads(render(full_example(), "kubeflow").stdout)
    for spec in job["spec"]["pytorchReplicaSpecs"].values():
        pod = spec["template"]["spec"]
        args = pod["containers"][0]["args"]
        grace = int(args[args.index("--grace-period") + 1])
        assert pod["terminationGracePeriodSeconds"] > grace
        assert pod["volumes"][1]["persistentVolumeClaim"]["claimName"] == "isaaclab-fsx-pvc"
        assert spec["restartPolicy"] == "OnFailure"


def test_sagemaker_request_passes_botocore():
    req = json.loads(render(full_example(), "sagemaker").stdout)
    assert botocore_errors("sagemaker", "CreateTrainingJob", req) == ""
    assert req["CheckpointConfig"]["LocalPath"] == "/opt/ml/checkpoints"
    assert req["RetryStrategy"]["MaximumRetryAttempts"] == 3
    bad = dict(req, ResourceConfig={"InstanceCount": "2"})
    errors = botocore_errors("sagemaker", "CreateTrainingJob", bad)
    assert "VolumeSizeInGB" in errors and "ResourceConfig.InstanceCount" in errors


def test_heterogeneous_sagemaker_example_passes_botocore():
    req = json.loads(render(SRC / "examples" / "render" / "sagemaker-heterogeneous.json",
                            "sagemaker").stdout)
    assert botocore_errors("sagemaker", "CreateTrainingJob", req) == ""
    assert [g["InstanceGroupName"] for g in req["ResourceConfig"]["InstanceGroups"]] == ["data", "gpu"]


def test_batch_job_definition_passes_botocore():
    definition = json.loads(render(batch_example(), "batch").stdout)
    assert botocore_errors("batch", "RegisterJobDefinition", definition) == ""
    codes = {r.get("onExitCode"): r["action"] for r in definition["retryStrategy"]["evaluateOnExit"]}
    assert codes["75"] == "RETRY" and "78" not in codes and "69" not in codes  # the last rule: EXIT
    assert definition["retryStrategy"]["evaluateOnExit"][-1] == {"onReason": "*", "action": "EXIT"}
    bad = dict(definition, nodeProperties={"numNodes": 2})
    assert "mainNode" in botocore_errors("batch", "RegisterJobDefinition", bad)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_sbatch_script_is_valid_bash(example, tmp_path):
    script = tmp_path / "job.sbatch"
    out = tmp_path / "written.sbatch"
    p = subprocess.run([BIN, "render", "--config", str(example), "--target", "slurm", "--output", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    script.write_text(out.read_text())
    check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert script.read_text().startswith("#!/bin/bash\n#SBATCH --job-name=")


def test_bad_config_exits_78_naming_the_field(tmp_path):
    cfg = json.loads(full_example().read_text())
    cfg["nodes"] = "two"
    path = tmp_path / "job.json"
    path.write_text(json.dumps(cfg))
    out = tmp_path / "out.json"
    p = subprocess.run([BIN, "render", "--config", str(path), "--target", "kubeflow", "--output", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 78
    assert "nodes: expected an integer 1..10000, got \"two\"" in p.stderr
    assert not out.exists(), "no half-written output"
    assert list(tmp_path.iterdir()) == [path]


def test_missing_target_fields_and_files_exit_78(tmp_path):
    p = render(SRC / "examples" / "render" / "minimal.json", "sagemaker", check=False)
    assert p.returncode == 78 and "sagemaker: missing" in p.stderr
    p = render(tmp_path / "nope.json", "slurm", check=False)
    assert p.returncode == 78 and "nope.json" in p.stderr
    p = render(full_example(), "nomad", check=False)
    assert p.returncode == 78 and "--target" in p.stderr
    p = render(batch_example(), "kubeflow", check=False)  # its EFS volume and no Secret: fine
    assert p.returncode == 0 and "efs_id is not used by kubeflow" in p.stderr
    p = render(SRC / "examples" / "render" / "cosmos3-hyperpod.json", "sagemaker", check=False)
    assert p.returncode == 78 and "sagemaker: missing" in p.stderr


def envsubst(text, env_file=None):
    """The seeds' `envsubst < manifest`: ${VAR} from their env_vars file, else the variable's name."""
    values = {}
    if env_file:
        for m in re.finditer(r'^export (\w+)="?([^"$\n#]*?)"?\s*(#.*)?$', env_file.read_text(), re.M):
            values[m.group(1)] = m.group(2)
    return re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1), m.group(1)), text)


def rendered_pod(example):
    job = json.loads(render(SRC / "examples" / "render" / example, "kubeflow").stdout)
    return job, job["spec"]["pytorchReplicaSpecs"]


def seed_env_names(container):
    return {e["name"] for e in container["env"]}


def test_cosmos_example_keeps_the_seeds_settings():
    """The seed's PyTorchJob (its ${VARS} read as text) against the rendered one."""
    cosmos = SEEDS / "cosmos3-hyperpod"
    seed = yaml.safe_load(envsubst((cosmos / "hyperpod-eks" / "train-multi-node-dlc.yaml").read_text(),
                                   cosmos / "env_vars.example"))
    job, specs = rendered_pod("cosmos3-hyperpod.json")
    assert set(seed["metadata"]["annotations"]) == set(job["metadata"]["annotations"])
    for rtype, spec in seed["spec"]["pytorchReplicaSpecs"].items():
        mine = specs[rtype]
        assert mine["restartPolicy"] == spec["restartPolicy"] == "OnFailure"
        want, got = spec["template"]["spec"], mine["template"]["spec"]
        assert got["tolerations"] == want["tolerations"]
        assert got["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == \
            want["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert got["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0] == \
            want["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
        want_ct, got_ct = want["containers"][0], got["containers"][0]
        # every variable but the optional, empty-by-default OTel endpoint
        assert seed_env_names(want_ct) - {"OTEL_EXPORTER_OTLP_ENDPOINT"} <= seed_env_names(got_ct)
        hf = [e for e in got_ct["env"] if e["name"] == "HF_TOKEN"][0]
        assert hf["valueFrom"] == [e for e in want_ct["env"] if e["name"] == "HF_TOKEN"][0]["valueFrom"]
        assert {m["mountPath"] for m in want_ct["volumeMounts"]} == {m["mountPath"] for m in got_ct["volumeMounts"]}
        shm = [v for v in got["volumes"] if v["name"] == "shm"][0]
        assert shm["emptyDir"]["medium"] == "Memory" and shm["emptyDir"]["sizeLimit"] == "65536Mi"
        assert got_ct["resources"]["limits"] == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 16}
        # the pod label and the pull policy (render v2: kubeflow.labels, image_pull_policy)
        assert spec["template"]["metadata"]["labels"].items() <= \
            mine["template"]["metadata"]["labels"].items()
        assert got_ct["imagePullPolicy"] == want_ct["imagePullPolicy"] == "Always"


def test_isaac_hyperpod_example_keeps_the_seeds_settings():
    seed = yaml.safe_load(envsubst(
        (SEEDS / "isaac-lab-hyperpod-sagemaker" / "templates" / "training-job.yaml.tpl").read_text()))
    job, specs = rendered_pod("isaac-lab-hyperpod-sagemaker.json")
    for rtype, spec in seed["spec"]["pytorchReplicaSpecs"].items():
        mine = specs[rtype]
        assert mine["restartPolicy"] == spec["restartPolicy"] == "OnFailure"
        want_ct, got_ct = spec["template"]["spec"]["containers"][0], mine["template"]["spec"]["containers"][0]
        mlflow_empty = {"MLFLOW_TRACKING_URI", "SAGEMAKER_MLFLOW_ASSUME_ROLE_ARN"}
        assert seed_env_names(want_ct) - mlflow_empty <= seed_env_names(got_ct)
        assert {m["mountPath"] for m in want_ct["volumeMounts"]} == {m["mountPath"] for m in got_ct["volumeMounts"]}
        assert got_ct["securityContext"] == want_ct["securityContext"]
        assert got_ct["resources"]["limits"] == {"nvidia.com/gpu": 4, "vpc.amazonaws.com/efa": 1,
                                                 "cpu": "24", "memory": "80Gi"}
        assert got_ct["resources"]["requests"]["memory"] == "64Gi"
        assert got_ct["workingDir"] == "/workspace/IsaacLab"
        got_pod = mine["template"]["spec"]
        assert got_pod["nodeSelector"]["node.kubernetes.io/instance-type"] == "ml.g6.12xlarge"
        # the seed's nodeSelector NODE_HEALTH_LABEL: NODE_HEALTH_VALUE, as a required affinity
        health = got_pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert health["nodeSelectorTerms"][0]["matchExpressions"][0] == {
            "key": "sagemaker.amazonaws.com/node-health-status", "operator": "In",
            "values": ["Schedulable"]}
        assert [v for v in got_pod["volumes"] if v["name"] == "shm"][0]["emptyDir"]["sizeLimit"] == "16384Mi"
    req = json.loads(render(SRC / "examples" / "render" / "isaac-lab-hyperpod-sagemaker.json", "sagemaker").stdout)
    assert {"ACCEPT_EULA", "PRIVACY_CONSENT", "NVIDIA_VISIBLE_DEVICES", "NCCL_DEBUG",
            "HYDRA_FULL_ERROR", "MLFLOW_ARTIFACT_DIR"} <= set(req["Environment"])
    args = req["AlgorithmSpecification"]["ContainerArguments"]
    # the entrypoint's `cd /workspace/IsaacLab` and its `cp -rv logs/* /opt/ml/model/`
    assert args[args.index("--workdir") + 1] == "/workspace/IsaacLab"
    assert args[args.index("--export") + 1] == "/workspace/IsaacLab/logs"
    assert [c["ChannelName"] for c in req["InputDataConfig"]] == ["scripts"]
    assert req["ResourceConfig"] == {"InstanceType": "ml.g6.12xlarge", "InstanceCount": 2, "VolumeSizeInGB": 200}
    assert req["StoppingCondition"]["MaxRuntimeInSeconds"] == 7200
    assert req["EnableInterContainerTrafficEncryption"] is True


def test_batch_example_keeps_the_seeds_settings():
    seed = json.loads((SEEDS / "isaac-lab-batch-mnp" / "register-job-definition.json").read_text())
    mine = json.loads(render(batch_example(), "batch").stdout)
    assert mine["timeout"] == seed["timeout"]
    for k in ("numNodes", "mainNode"):
        assert mine["nodeProperties"][k] == seed["nodeProperties"][k]
    want = seed["nodeProperties"]["nodeRangeProperties"][0]["container"]
    got = mine["nodeProperties"]["nodeRangeProperties"][0]["container"]
    assert sorted(got["resourceRequirements"], key=str) == sorted(want["resourceRequirements"], key=str)
    script_only = {"TASK", "PROC_PER_NODE", "MAX_ITERATIONS"}  # distributed_run.bash's: now arguments
    assert {e["name"] for e in want["environment"]} - script_only <= {e["name"] for e in got["environment"]}
    assert got["linuxParameters"]["sharedMemorySize"] == want["linuxParameters"]["sharedMemorySize"]
    assert got["mountPoints"][0]["containerPath"] == want["mountPoints"][0]["containerPath"]
    assert got["volumes"][0]["efsVolumeConfiguration"]["rootDirectory"] == \
        want["volumes"][0]["efsVolumeConfiguration"]["rootDirectory"]
    assert got["instanceType"] == "g6.12xlarge"
    # the seed's `cd /workspace/IsaacLab && ./distributed_run.bash`
    assert got["command"][got["command"].index("--workdir") + 1] == "/workspace/IsaacLab"
