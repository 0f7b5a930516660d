"""SageMaker heterogeneous clusters and the instance type's say in --require-transport auto,
against the real binary (docs/platforms/sagemaker.md, "Heterogeneous clusters"; docs/health.md).

The resource config is SageMaker's heterogeneous-cluster format (current_host,
current_instance_type, current_group_name, hosts, instance_groups[] with instance_group_name,
instance_type, hosts: AWS, "Modify your training script to assign instance groups"), and the
training groups come as the SageMaker Python SDK passes `distribution={"instance_groups": ...}`:
the hyperparameter sagemaker_distribution_instance_groups, a JSON-encoded list, in
hyperparameters.json beside the resource config (aws/sagemaker-training-toolkit
src/sagemaker_training/environment.py reads it). Three containers on loopback: a data group of
one host and a training group of two (hosts 127.0.0.1 and localhost, so that node 0's address is
this machine's). No timed assertions: timeouts only stop hangs.
"""
import json
import subprocess

import tvtest

TIMEOUT_S = 300

RECORDER = """import json, os, sys
keys = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "NCCL_NET")
with open(os.path.join(sys.argv[1], "rank_" + os.environ["RANK"]), "w") as f:
    json.dump({k: os.environ.get(k) for k in keys}, f)
"""


def resource_config(current, group, groups):
    types = {"data": "ml.c5.xlarge", "gpu": "ml.g5.xlarge"}
    every = [h for g in groups.values() for h in g]
    return {"current_host": current, "current_instance_type": types[group],
            "current_group_name": group, "hosts": sorted(every),
            "instance_groups": [{"instance_group_name": n, "instance_type": types[n], "hosts": h}
                                for n, h in groups.items()],
            "network_interface_name": "lo"}


def container_dir(tmp_path, current, group, groups, training_groups):
    d = tmp_path / f"config-{current}"
    d.mkdir()
    (d / "resourceconfig.json").write_text(json.dumps(resource_config(current, group, groups)))
    (d / "hyperparameters.json").write_text(json.dumps(
        {"sagemaker_distribution_instance_groups": json.dumps(training_groups)}))
    return d / "resourceconfig.json"


def test_only_the_training_group_trains_and_the_data_group_exits_0(tmp_path):
    groups = {"data": ["data-1"], "gpu": ["127.0.0.1", "localhost"]}
    (tmp_path / "train.py").write_text(RECORDER)
    out = tmp_path / "ranks"
    out.mkdir()
    master_port, rdzv_port = tvtest.free_ports(2)
    procs = {}
    for host, group in (("data-1", "data"), ("127.0.0.1", "gpu"), ("localhost", "gpu")):
        rc = container_dir(tmp_path, host, group, groups, ["gpu"])
        env = tvtest.base_env(TRAINVISOR_RESOURCE_CONFIG=rc, TRAINING_JOB_NAME="hetero-job",
                              TRAINVISOR_PREFLIGHT="none", TRAINVISOR_WARM_STANDBY="off",
                              TRAINVISOR_CHECKPOINT_DIR=tmp_path / "ckpt",
                              TRAINVISOR_FAILURE_FILE=tmp_path / f"failure-{host}",
                              TRAINVISOR_TERMINATION_LOG=tmp_path / f"termination-{host}",
                              TRAINVISOR_GPU_HEALTH="off")
        argv = [str(tvtest.BIN), "run", "--platform", "sagemaker", "--nproc-per-node", "1",
                "--master-port", str(master_port), "--rdzv-port", str(rdzv_port),
                "train.py", str(out)]
        procs[host] = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True)
    said = {h: p.communicate(timeout=TIMEOUT_S)[0] for h, p in procs.items()}
    codes = {h: p.returncode for h, p in procs.items()}
    assert codes == {"data-1": 0, "127.0.0.1": 0, "localhost": 0}, said
    # The data host's one line, and nothing of it in the training world.
    assert ('not training on this node: SageMaker instance group "data" (host data-1) is not one '
            'of the training groups gpu (file ') in said["data-1"], said["data-1"]
    assert "sagemaker_distribution_instance_groups" in said["data-1"]
    ranks = {p.name: json.loads(p.read_text()) for p in out.iterdir()}
    assert sorted(ranks) == ["rank_0", "rank_1"], ranks  # two hosts x one worker, not three
    assert {r["WORLD_SIZE"] for r in ranks.values()} == {"2"}
    assert {r["MASTER_ADDR"] for r in ranks.values()} == {"127.0.0.1"}
    # ml.g5.xlarge has no EFA: auto is any, and the log says which fact decided it.
    assert ("--require-transport auto -> any (2 nodes, instance type ml.g5.xlarge (file "
            in said["127.0.0.1"]), said["127.0.0.1"]
    assert {r["NCCL_NET"] for r in ranks.values()} == {None}


def test_topology_shows_the_training_hosts_and_the_idle_node(tmp_path):
    groups = {"data": ["algo-1"], "gpu": ["algo-2", "algo-3"]}
    rc = container_dir(tmp_path, "algo-1", "data", groups, ["gpu"])
    r = subprocess.run([str(tvtest.BIN), "topology", "--json", "--resource-config", str(rc)],
                       env=tvtest.base_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)
    assert t["hosts"] == ["algo-2", "algo-3"] and t["nnodes"] == 2
    assert "is not one of the training groups gpu" in t["not_training"]
    assert t["instance_type"] == "ml.c5.xlarge"
    # --instance-groups wins over the hyperparameter; an unknown group is refused naming the file's
    r = subprocess.run([str(tvtest.BIN), "topology", "--json", "--resource-config", str(rc),
                        "--instance-groups", "cpu"], env=tvtest.base_env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 78
    assert 'has no instance group "cpu"' in r.stderr and "data, gpu" in r.stderr, r.stderr


def p4d_config(tmp_path):
    """Two ml.p4d.24xlarge hosts (4 EFA interfaces each in the instance table); this machine
    shows no EFA device."""
    rc = tmp_path / "resourceconfig.json"
    rc.write_text(json.dumps({"current_host": "algo-1", "hosts": ["algo-1", "algo-2"],
                              "current_instance_type": "ml.p4d.24xlarge",
                              "network_interface_name": "eth0"}))
    return rc


def test_preflight_requires_efa_on_an_efa_instance_type_without_its_devices(tmp_path):
    """Issue 40 item 9: auto -> efa from the resource config's instance type, and the standalone
    preflight gives the verdict run gives from the same facts."""
    rc = p4d_config(tmp_path)
    env = tvtest.base_env()
    r = subprocess.run([str(tvtest.BIN), "preflight", "--json", "--level", "basic",
                        "--resource-config", str(rc)], env=env, capture_output=True, text=True,
                       timeout=120)
    report = json.loads(r.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    decided = checks["require-transport"]
    assert decided["details"]["resolved"] == "efa", decided
    assert ("instance type ml.p4d.24xlarge (file " + str(rc) + " (current_instance_type)) has 4 "
            "EFA interfaces") in decided["message"], decided
    assert checks["efa-devices"]["outcome"] == "fail" and r.returncode == 69, checks
    # run: the same facts, the same verdict (69 before any worker), the same line
    ran = subprocess.run([str(tvtest.BIN), "run", "--preflight", "basic", "--resource-config",
                          str(rc), "--nproc-per-node", "1", "--no-python", "/bin/true"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 69, ran.stderr[-3000:]
    assert decided["message"] in ran.stderr, ran.stderr[-3000:]
    # --instance-type says the same on a platform whose type nobody reports (Batch)
    r = subprocess.run([str(tvtest.BIN), "preflight", "--json", "--level", "basic", "--nnodes", "2",
                        "--master-addr", "127.0.0.1", "--instance-type", "p5.48xlarge"],
                       env=env, capture_output=True, text=True, timeout=120)
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
    assert checks["require-transport"]["details"]["resolved"] == "efa"
    assert "(--instance-type) has 32 EFA interfaces" in checks["require-transport"]["message"]


def test_a_rendered_pods_instance_type_decides_auto_on_kubeflow(tmp_path):
    """The PyTorchJob render writes for the Isaac Lab example carries TRAINVISOR_INSTANCE_TYPE
    (ml.g6.12xlarge: 1 EFA interface in the table); with the operator's PET_* variables for 2 nodes
    the preflight requires efa and names the variable as the fact."""
    example = tvtest.SOURCE_DIR / "examples" / "render" / "isaac-lab-hyperpod-sagemaker.json"
    job = json.loads(subprocess.run([str(tvtest.BIN), "render", "--config", str(example),
                                     "--target", "kubeflow"], capture_output=True, text=True,
                                    timeout=60, check=True).stdout)
    ct = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    pod_env = {e["name"]: e["value"] for e in ct["env"] if "value" in e}
    assert pod_env["TRAINVISOR_INSTANCE_TYPE"] == "ml.g6.12xlarge"
    operator = {"PET_NNODES": "2", "PET_NODE_RANK": "1", "PET_MASTER_ADDR": "127.0.0.1",
                "PET_MASTER_PORT": str(tvtest.free_port())}
    env = tvtest.base_env(**operator, TRAINVISOR_INSTANCE_TYPE=pod_env["TRAINVISOR_INSTANCE_TYPE"])
    r = subprocess.run([str(tvtest.BIN), "preflight", "--json", "--level", "basic"], env=env,
                       capture_output=True, text=True, timeout=120)
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
    decided = checks["require-transport"]
    assert decided["details"]["resolved"] == "efa", decided
    assert "instance type ml.g6.12xlarge (TRAINVISOR_INSTANCE_TYPE) has 1 EFA interface," in \
        decided["message"], decided
    assert r.returncode == 69


def test_the_rendered_heterogeneous_request_trains_on_its_training_group(tmp_path):
    """render --target sagemaker of a heterogeneous description, started as SageMaker starts it
    (ContainerEntrypoint + ContainerArguments on every host, the groups in resourceconfig.json
    and no hyperparameter): --instance-groups in the arguments picks the training hosts."""
    (tmp_path / "train.py").write_text(RECORDER)
    out = tmp_path / "ranks"
    out.mkdir()
    doc = {"name": "hetero", "image": "img:1", "nodes": 2, "gpus_per_node": 0,
           "instance_type": "ml.g5.xlarge", "command": [str(tmp_path / "train.py"), str(out)],
           "run_args": ["--preflight", "none", "--nproc-per-node", "1", "--warm-standby", "off"],
           "checkpoint_s3_uri": "s3://bucket/ckpt",
           "sagemaker": {"role_arn": "arn:aws:iam::123456789012:role/sm",
                         "output_s3_uri": "s3://bucket/out",
                         "instance_groups": [
                             {"name": "data", "instance_type": "ml.c5.xlarge", "count": 1},
                             {"name": "gpu", "instance_type": "ml.g5.xlarge", "count": 2}],
                         "training_groups": ["gpu"]}}
    (tmp_path / "job.json").write_text(json.dumps(doc))
    r = subprocess.run([str(tvtest.BIN), "render", "--config", str(tmp_path / "job.json"),
                        "--target", "sagemaker"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    request = json.loads(r.stdout)
    algo = request["AlgorithmSpecification"]
    groups = {"data": ["data-1"], "gpu": ["127.0.0.1", "localhost"]}
    master_port, rdzv_port = tvtest.free_ports(2)
    procs = {}
    for host, group in (("data-1", "data"), ("127.0.0.1", "gpu"), ("localhost", "gpu")):
        d = tmp_path / f"config-{host}"
        d.mkdir()
        (d / "resourceconfig.json").write_text(json.dumps(resource_config(host, group, groups)))
        env = tvtest.base_env(TRAINVISOR_RESOURCE_CONFIG=d / "resourceconfig.json",
                              TRAINING_JOB_NAME=request["TrainingJobName"],
                              TRAINVISOR_MASTER_PORT=master_port, TRAINVISOR_RDZV_PORT=rdzv_port,
                              TRAINVISOR_CHECKPOINT_DIR=tmp_path / "ckpt",
                              TRAINVISOR_FAILURE_FILE=tmp_path / f"failure-{host}",
                              TRAINVISOR_TERMINATION_LOG=tmp_path / f"termination-{host}",
                              TRAINVISOR_GPU_HEALTH="off")
        argv = [str(tvtest.BIN)] + algo["ContainerArguments"]
        procs[host] = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True)
    said = {h: p.communicate(timeout=TIMEOUT_S)[0] for h, p in procs.items()}
    assert {h: p.returncode for h, p in procs.items()} == \
        {"data-1": 0, "127.0.0.1": 0, "localhost": 0}, said
    assert "(--instance-groups)" in said["data-1"], said["data-1"]
    assert sorted(p.name for p in out.iterdir()) == ["rank_0", "rank_1"]
