"""`trainvisor render`: every target rendered by the real binary from the examples, then checked
by the platforms' own validators: the PyTorchJob against the Kubeflow training operator's CRD
schema (python3-jsonschema), the SageMaker and Batch requests with botocore's ParamValidator and
service models (offline), the sbatch script with `bash -n`. Bad configs exit 78 naming the field.
"""
import json
import os
import subprocess
from pathlib import Path

import botocore.session
import botocore.validate
import jsonschema
import pytest
import yaml

BIN = os.environ["TRAINVISOR_BIN"]
SRC = Path(os.environ["TV_SOURCE_DIR"])
EXAMPLES = sorted((SRC / "examples" / "render").glob("*.json"))
# The operator's CRD is a shared fixture (../shared beside the clone; CI has it). A plain clone
# has none: the tests that need it skip, saying so.
CRD = SRC.parent / "shared" / "fixtures" / "k8s" / "kubeflow.org_pytorchjobs.yaml"


def render(config, target, check=True):
    p = subprocess.run([BIN, "render", "--config", str(config), "--target", target],
                       capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def pytorchjob_schema():
    if not CRD.is_file():
        pytest.skip(f"no Kubeflow CRD at {CRD} (../shared/fixtures is not beside this clone)")
    crd = yaml.safe_load(CRD.read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def botocore_errors(service, operation, params):
    shape = botocore.session.get_session().get_service_model(service).operation_model(operation).input_shape
    report = botocore.validate.ParamValidator().validate(params, shape)
    return report.generate_report() if report.has_errors() else ""


def full_example():
    return SRC / "examples" / "render" / "isaac-lab-ppo.json"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
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
        assert pod["volumes"][1]["persistentVolumeClaim"]["claimName"] == "fsx-claim"


def test_sagemaker_request_passes_botocore():
    req = json.loads(render(full_example(), "sagemaker").stdout)
    assert botocore_errors("sagemaker", "CreateTrainingJob", req) == ""
    assert req["CheckpointConfig"]["LocalPath"] == "/opt/ml/checkpoints"
    assert req["RetryStrategy"]["MaximumRetryAttempts"] == 3
    bad = dict(req, ResourceConfig={"InstanceCount": "2"})
    errors = botocore_errors("sagemaker", "CreateTrainingJob", bad)
    assert "VolumeSizeInGB" in errors and "ResourceConfig.InstanceCount" in errors


def test_batch_job_definition_passes_botocore():
    definition = json.loads(render(full_example(), "batch").stdout)
    assert botocore_errors("batch", "RegisterJobDefinition", definition) == ""
    codes = {r.get("onExitCode"): r["action"] for r in definition["retryStrategy"]["evaluateOnExit"]}
    assert codes["75"] == "RETRY" and codes["78"] == "EXIT" and codes["69"] == "EXIT"
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
