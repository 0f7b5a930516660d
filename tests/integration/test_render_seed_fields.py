"""What the seeds set that render could not express (issue 40, item 6), rendered by the real binary
and checked by each platform's own validator: the PyTorchJob against the Kubeflow training
operator's CRD schema (tests/data/k8s/, python3-jsonschema), the SageMaker request and the Batch
job definition with botocore's ParamValidator and service models (offline), the sbatch script with
`bash -n`. Label keys and values follow Kubernetes' rules (Kubernetes docs, Labels and Selectors,
"Syntax and character set"; kubernetes/apimachinery pkg/util/validation/validation.go
IsQualifiedName, IsValidLabelValue); hugepages need cpu or memory (kubernetes
pkg/apis/core/validation: "HugePages require cpu or memory"); SageMaker's ChannelName pattern and
the InputDataConfig and InstanceGroups maximums are read from botocore's model.
"""
import json
import os
import re
import subprocess

import botocore.session
import jsonschema
import pytest

from test_render import BIN, SRC, botocore_errors, pytorchjob_schema

import tvtest


def render(tmp_path, doc, target, check=True):
    path = tmp_path / "job.json"
    path.write_text(json.dumps(doc))
    p = subprocess.run([BIN, "render", "--config", str(path), "--target", target],
                       capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def base(**extra):
    doc = {"name": "seedjob", "image": "registry.example/img:1", "nodes": 2,
           "instance_type": "p5.48xlarge", "command": ["train.py"]}
    doc.update(extra)
    return doc


KUBEFLOW = {"labels": {"app": "cosmos3-droid-policy-hp", "example.com/team": "robots"},
            "queue_name": "team-a-queue", "service_account": "training-sa",
            "image_pull_policy": "Always", "hugepages": {"2Mi": "1Gi"}, "memory_limit": "64Gi",
            "node_health_label": "example.com/health", "node_health_value": "ok",
            "topology_key": "topology.k8s.aws/network-node-layer-3", "topology_weight": 60}


def test_kubeflow_fields_are_rendered_and_pass_the_crd(tmp_path):
    job = json.loads(render(tmp_path, base(kubeflow=KUBEFLOW), "kubeflow").stdout)
    jsonschema.validate(job, pytorchjob_schema())
    # Kueue reads its queue on the job; the pods carry the user's labels
    assert job["metadata"]["labels"] == {"app": "cosmos3-droid-policy-hp",
                                         "example.com/team": "robots",
                                         "kueue.x-k8s.io/queue-name": "team-a-queue"}
    for spec in job["spec"]["pytorchReplicaSpecs"].values():
        pod = spec["template"]
        assert pod["metadata"]["labels"]["app"] == "cosmos3-droid-policy-hp"
        assert "kueue.x-k8s.io/queue-name" not in pod["metadata"]["labels"]
        ps = pod["spec"]
        assert ps["serviceAccountName"] == "training-sa"
        ct = ps["containers"][0]
        assert ct["imagePullPolicy"] == "Always"
        assert ct["resources"]["limits"]["hugepages-2Mi"] == "1Gi" == \
            ct["resources"]["requests"]["hugepages-2Mi"]
        assert {"name": "hugepages-2mi", "mountPath": "/dev/hugepages"} in ct["volumeMounts"]
        assert {"name": "hugepages-2mi", "emptyDir": {"medium": "HugePages"}} in ps["volumes"]
        assert ps["tolerations"][0]["key"] == "example.com/health"
        term = ps["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["nodeSelectorTerms"][0]["matchExpressions"][0] == \
            {"key": "example.com/health", "operator": "In", "values": ["ok"]}
        pref = ps["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
        assert pref["weight"] == 60
        assert pref["podAffinityTerm"] == {
            "labelSelector": {"matchLabels": {"trainvisor.io/job": "seedjob"}},
            "topologyKey": "topology.k8s.aws/network-node-layer-3"}
        env = {e["name"]: e.get("value") for e in ct["env"]}
        # --require-transport auto's instance fact (docs/health.md): the pod asks for EFA
        assert env["TRAINVISOR_INSTANCE_TYPE"] == "ml.p5.48xlarge"


def test_no_instance_type_variable_without_efa(tmp_path):
    job = json.loads(render(tmp_path, base(efa_per_node=0), "kubeflow").stdout)
    ct = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    assert "TRAINVISOR_INSTANCE_TYPE" not in {e["name"] for e in ct["env"]}


@pytest.mark.parametrize("field,value,said", [
    ("labels", {"app": "-bad"}, "labels.app: \"-bad\" (4 characters) is not a label value"),
    ("labels", {"Bad_Prefix/app": "x"}, "is not a label key's prefix"),
    ("labels", {"a/" + "n" * 64: "x"}, "is not a label key's name"),
    ("labels", {"app": "v" * 64}, "at most 63 characters"),
    ("queue_name", "queue with spaces", "kubeflow.queue_name: \"queue with spaces\""),
    ("service_account", "Training_SA", "is not a ServiceAccount name"),
    ("image_pull_policy", "Sometimes", "expected Always, IfNotPresent or Never"),
    ("node_health_value", "not ok", "is not a label value"),
    ("topology_key", "bad key", "is not a label key's name"),
])
def test_bad_kubernetes_values_exit_78_naming_the_field_and_rule(tmp_path, field, value, said):
    p = render(tmp_path, base(kubeflow={field: value}), "kubeflow", check=False)
    assert p.returncode == 78, p.stderr
    assert said in p.stderr, p.stderr
    if "label" in said:
        assert "Labels and Selectors" in p.stderr


def test_the_crd_schema_has_no_label_rule_so_render_checks_them(tmp_path):
    """The CRD schema has no label rule (which is why render checks them): a job with a bad label
    passes the schema, so the check is render's own, from the Kubernetes source it cites."""
    job = json.loads(render(tmp_path, base(), "kubeflow").stdout)
    job["metadata"]["labels"] = {"app": "-bad"}
    jsonschema.validate(job, pytorchjob_schema())


def test_hugepages_without_cpu_or_memory_is_refused(tmp_path):
    p = render(tmp_path, base(kubeflow={"hugepages": {"2Mi": "1Gi"}}), "kubeflow", check=False)
    assert p.returncode == 78 and "HugePages require cpu or memory" in p.stderr, p.stderr
    p = render(tmp_path, base(kubeflow={"hugepages": {"4Mi": "1Gi"}, "cpu_limit": "8"}), "kubeflow",
               check=False)
    assert p.returncode == 78 and "hugepages.4Mi: expected a page size" in p.stderr
    doc = base(kubeflow={"hugepages": {"2Mi": "1Gi"}, "cpu_limit": "8"},
               volumes=[{"name": "hp", "mount_path": "/dev/hugepages", "host_path": "/mnt/hp"}])
    p = render(tmp_path, doc, "kubeflow", check=False)
    assert p.returncode == 78 and "volumes hp: /dev/hugepages is where kubeflow.hugepages" in \
        p.stderr, p.stderr


def sagemaker_doc(**sm):
    section = {"role_arn": "arn:aws:iam::123456789012:role/SageMakerRole",
               "output_s3_uri": "s3://bucket/out/"}
    section.update(sm)
    return base(instance_type="ml.p4d.24xlarge", checkpoint_s3_uri="s3://bucket/ckpt",
                sagemaker=section)


def test_sagemaker_channels_and_run_args_pass_botocore(tmp_path):
    doc = sagemaker_doc(channels=[{"name": "scripts", "s3_uri": "s3://bucket/scripts/"},
                                  {"name": "train.shards", "s3_uri": "s3://bucket/data/",
                                   "distribution": "ShardedByS3Key", "input_mode": "FastFile"}],
                        run_args=["--export", "/workspace/logs"])
    doc["workdir"] = "/workspace"
    req = json.loads(render(tmp_path, doc, "sagemaker").stdout)
    assert botocore_errors("sagemaker", "CreateTrainingJob", req) == ""
    assert req["InputDataConfig"][1] == {
        "ChannelName": "train.shards", "InputMode": "FastFile",
        "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://bucket/data/",
                                        "S3DataDistributionType": "ShardedByS3Key"}}}
    args = req["AlgorithmSpecification"]["ContainerArguments"]
    assert args[args.index("--workdir") + 1] == "/workspace"
    # the section's run_args come after the common ones, before the command
    assert args[-3:] == ["--export", "/workspace/logs", "train.py"]
    # kubeflow never sees sagemaker.run_args
    job = json.loads(render(tmp_path, doc, "kubeflow").stdout)
    assert "--export" not in job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"][
        "containers"][0]["args"]


def test_channel_limits_are_botocores(tmp_path):
    model = botocore.session.get_session().get_service_model("sagemaker")
    name = model.shape_for("ChannelName").metadata
    most = model.shape_for("InputDataConfig").metadata["max"]
    bad = "a" * (name["max"] + 1)
    assert re.fullmatch(name["pattern"], bad)  # the pattern alone would take it
    p = render(tmp_path, sagemaker_doc(channels=[{"name": bad, "s3_uri": "s3://b/x"}]),
               "sagemaker", check=False)
    assert p.returncode == 78 and "is not a SageMaker channel name" in p.stderr, p.stderr
    p = render(tmp_path, sagemaker_doc(channels=[{"name": "a b", "s3_uri": "s3://b/x"}]),
               "sagemaker", check=False)
    assert p.returncode == 78 and not re.fullmatch(name["pattern"], "a b")
    many = [{"name": f"c{i}", "s3_uri": "s3://b/x"} for i in range(most + 1)]
    p = render(tmp_path, sagemaker_doc(channels=many), "sagemaker", check=False)
    assert p.returncode == 78 and f"takes at most {most}" in p.stderr, p.stderr


def hetero_doc(**extra):
    sm = {"instance_groups": [{"name": "data", "instance_type": "c5.18xlarge", "count": 2},
                              {"name": "gpu", "instance_type": "p4d.24xlarge", "count": 2}],
          "training_groups": ["gpu"],
          "channels": [{"name": "raw", "s3_uri": "s3://bucket/raw/", "instance_groups": ["data"]}]}
    sm.update(extra)
    return sagemaker_doc(**sm)


def test_heterogeneous_request_passes_botocore_and_names_the_training_groups(tmp_path):
    req = json.loads(render(tmp_path, hetero_doc(), "sagemaker").stdout)
    assert botocore_errors("sagemaker", "CreateTrainingJob", req) == ""
    rc = req["ResourceConfig"]
    assert "InstanceType" not in rc and "InstanceCount" not in rc
    assert rc["InstanceGroups"] == [
        {"InstanceType": "ml.c5.18xlarge", "InstanceCount": 2, "InstanceGroupName": "data"},
        {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2, "InstanceGroupName": "gpu"}]
    args = req["AlgorithmSpecification"]["ContainerArguments"]
    assert args[args.index("--instance-groups") + 1] == "gpu"
    assert args[args.index("--nnodes") + 1] == "2"
    s3 = req["InputDataConfig"][0]["DataSource"]["S3DataSource"]
    assert s3["InstanceGroupNames"] == ["data"]
    most = botocore.session.get_session().get_service_model("sagemaker").shape_for(
        "InstanceGroups").metadata["max"]
    groups = [{"name": f"g{i}", "instance_type": "p4d.24xlarge"} for i in range(most + 1)]
    p = render(tmp_path, hetero_doc(instance_groups=groups, training_groups=["g0"]), "sagemaker",
               check=False)
    assert p.returncode == 78 and f"takes at most {most}" in p.stderr, p.stderr


@pytest.mark.parametrize("change,said", [
    ({"training_groups": ["cpu"]}, "training_groups: \"cpu\" is not one of instance_groups"),
    ({"training_groups": ["gpu", "data"]}, "is not instance_type ml.p4d.24xlarge"),
    ({"instance_groups": [{"name": "gpu", "instance_type": "p4d.24xlarge", "count": 3}],
      "channels": []}, "nodes: 2, but the training groups have 3 instances"),
])
def test_heterogeneous_mistakes_exit_78(tmp_path, change, said):
    p = render(tmp_path, hetero_doc(**change), "sagemaker", check=False)
    assert p.returncode == 78 and said in p.stderr, p.stderr


def test_batch_workdir_becomes_run_workdir_and_passes_botocore(tmp_path):
    doc = base(workdir="/workspace/IsaacLab", batch={"run_args": ["--log-format", "json"]})
    definition = json.loads(render(tmp_path, doc, "batch").stdout)
    assert botocore_errors("batch", "RegisterJobDefinition", definition) == ""
    cmd = definition["nodeProperties"]["nodeRangeProperties"][0]["container"]["command"]
    assert cmd[cmd.index("--workdir") + 1] == "/workspace/IsaacLab"
    assert cmd[-3:] == ["--log-format", "json", "train.py"]


def test_run_workdir_changes_directory_before_anything(tmp_path):
    work = tmp_path / "IsaacLab"
    work.mkdir()
    (work / "train.py").write_text("import os; open('cwd', 'w').write(os.getcwd())\n")
    p = subprocess.run([str(tvtest.BIN), "run", "--preflight", "none", "--warm-standby", "off",
                        "--nproc-per-node", "1", "--workdir", str(work), "train.py"],
                       cwd=tmp_path, env=tvtest.base_env(), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert (work / "cwd").read_text() == str(work)  # train.py was found from there too
    p = subprocess.run([str(tvtest.BIN), "run", "--workdir", str(tmp_path / "none"), "train.py"],
                       env=tvtest.base_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 78 and "--workdir " + str(tmp_path / "none") in p.stderr, p.stderr


def test_slurm_requeue_and_run_args_owned_by_render(tmp_path):
    for value, line in ((True, "#SBATCH --requeue\n"), (False, "#SBATCH --no-requeue\n")):
        script = render(tmp_path, base(slurm={"requeue": value}), "slurm").stdout
        assert line in script
        (tmp_path / "job.sbatch").write_text(script)
        assert subprocess.run(["bash", "-n", str(tmp_path / "job.sbatch")]).returncode == 0
    assert "#SBATCH --requeue" not in render(tmp_path, base(), "slurm").stdout
    p = render(tmp_path, base(slurm={"run_args": ["--workdir", "/x"]}), "slurm", check=False)
    assert p.returncode == 78 and "slurm.run_args: \"--workdir\" is written by render from workdir" \
        in p.stderr, p.stderr


@pytest.mark.parametrize("where", ["run_args", "kubeflow.run_args", "env"])
def test_kubeflow_pods_carry_prometheus_scrape_annotations_and_pass_the_crd(tmp_path, where):
    """Where trainvisor serves /metrics (HyperPod's managed Prometheus scrapes only annotated pods),
    every pod template says so, with the port the container's trainvisor listens on."""
    doc = base()
    if where == "run_args":
        doc["run_args"] = ["--metrics-port", "9400"]
    elif where == "kubeflow.run_args":
        doc["kubeflow"] = {"run_args": ["--metrics-port=9400"]}
    else:
        doc["env"] = {"TRAINVISOR_METRICS_PORT": "9400"}
    job = json.loads(render(tmp_path, doc, "kubeflow").stdout)
    jsonschema.validate(job, pytorchjob_schema())
    for spec in job["spec"]["pytorchReplicaSpecs"].values():
        assert spec["template"]["metadata"]["annotations"] == {
            "prometheus.io/scrape": "true", "prometheus.io/port": "9400",
            "prometheus.io/path": "/metrics"}
    plain = json.loads(render(tmp_path, base(), "kubeflow").stdout)
    for spec in plain["spec"]["pytorchReplicaSpecs"].values():
        assert "annotations" not in spec["template"]["metadata"]
