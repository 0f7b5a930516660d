"""Each spec `trainvisor render` writes, started in a container the way its platform starts it,
trainvisor as PID 1 of the container (scripts/test-image.sh builds the image: a debootstrap
root, the portable binary as ENTRYPOINT, the helper programs at TV_IMAGE_HELPERS). The specs,
the injected variables and each platform's rule come from tests/integration/test_platform_contracts.py;
here the behaviour is the container's: its PID 1, its files (/dev/termination-log, /opt/ml),
its loopback (a lost node is a main node nobody serves on the container's 127.0.0.1).

Env: TV_IMAGE, TV_PODMAN, TV_PODMAN_RUN_OPTS (test_container.py), TV_IMAGE_HELPERS, and
TRAINVISOR_BIN + TV_SOURCE_DIR for `render` on the host.
"""
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

if not os.environ.get("TV_IMAGE_HELPERS") or not os.environ.get("TRAINVISOR_BIN"):
    pytest.skip("the image has no helper programs (scripts/test-image.sh builds one that has)",
                allow_module_level=True)
os.environ["TV_HELPERS"] = os.environ["TV_IMAGE_HELPERS"]  # the spec's commands: paths in the image
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from test_container import IMAGE, PODMAN, POLITE, RUN_OPTS, logs, podman, stop, wait_for  # noqa: E402
from test_platform_contracts import (OUTCOMES, SECRETS, batch_evaluate_on_exit, description,  # noqa: E402
                                     dockerfile_entrypoint, kubeflow_decision, kubelet_env,
                                     operator_env, render, sagemaker_decision)

TIMEOUT_S = 120  # guards against a hang only


def run_args(tmp, env, volumes, network=None):
    """`podman run` options: the test's directory at the same path (the specs name it), env;
    network replaces RUN_OPTS' --network."""
    opts = list(RUN_OPTS)
    if network:
        while "--network" in opts:
            del opts[opts.index("--network"):opts.index("--network") + 2]
        opts += ["--network", network]
    vol = [a for v in [f"{tmp}:{tmp}", *volumes] for a in ("-v", v)]
    return [*opts, *vol, *[a for k, v in env.items() for a in ("--env", f"{k}={v}")]]


def run(tmp, env, args, entrypoint=None, volumes=(), network=None):
    """Runs one container to its end; podman run's exit code is the container's."""
    name = f"tv-contract-{uuid.uuid4().hex[:8]}"
    ep = ["--entrypoint", json.dumps(entrypoint)] if entrypoint else []
    try:
        p = subprocess.run([*PODMAN, "run", "--name", name, *run_args(tmp, env, volumes, network), *ep, IMAGE,
                            *args],
                           capture_output=True, text=True, timeout=TIMEOUT_S)
    finally:
        podman("rm", "-f", "-t", "0", name, check=False)
    return p.returncode, p.stdout + p.stderr


def termination_log(tmp):
    """The kubelet bind-mounts a host file at the container's /dev/termination-log."""
    path = tmp / "termination-log"
    path.write_text("")
    return path, f"{path}:/dev/termination-log"


def kubeflow_pod(tmp, outcome, command=None):
    desc = description(tmp, outcome, "kubeflow")
    if command:
        doc = json.loads(desc.read_text())
        doc["command"] = command
        desc.write_text(json.dumps(doc))
    job = render(desc, "kubeflow")
    rank = OUTCOMES[outcome][1][0]
    rtype, index = ("Master", 0) if rank == 0 else ("Worker", rank - 1)
    spec = job["spec"]["pytorchReplicaSpecs"][rtype]
    assert spec["restartPolicy"] == "OnFailure"
    ct = spec["template"]["spec"]["containers"][0]
    return ct, {**kubelet_env(ct), **operator_env(job, rtype, index, 29500)}


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_kubeflow_pod_in_a_container(tmp_path, outcome):
    ct, env = kubeflow_pod(tmp_path, outcome)
    log, mount = termination_log(tmp_path)
    code, out = run(tmp_path, env, ct["args"], entrypoint=ct["command"], volumes=[mount])
    assert code == OUTCOMES[outcome][4], out[-3000:]
    assert kubeflow_decision("OnFailure", code) == ("Succeeded" if code == 0 else "restart")
    if code in (3, 75):  # the root cause, what `kubectl describe pod` shows as the message
        assert log.read_text().strip(), out[-3000:]
    if outcome == "success":
        dumped = json.loads((tmp_path / "env_0").read_text())
        assert dumped["HF_TOKEN"] == "hf_secret_value" and dumped["PET_NNODES"] == "1"


def batch_env(ct, n, index):
    env = {e["name"]: e["value"] for e in ct.get("environment", [])}
    env.update({s["name"]: SECRETS[s["valueFrom"]] for s in ct.get("secrets", [])})
    env.update({"AWS_BATCH_JOB_ID": f"0d4e1b7a-job#{index}",
                "AWS_BATCH_JOB_ATTEMPT": "1", "AWS_BATCH_JOB_NUM_NODES": str(n),
                "AWS_BATCH_JOB_NODE_INDEX": str(index), "AWS_BATCH_JOB_MAIN_NODE_INDEX": "0",
                "AWS_BATCH_CE_NAME": "ce", "AWS_BATCH_JQ_NAME": "jq"})
    if index != 0:  # Batch gives the children the main node's address: here, nobody serves it
        env["AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS"] = "127.0.0.1"
    return env


def test_image_entrypoint_is_the_dockerfiles():
    config = json.loads(podman("image", "inspect", IMAGE).stdout)[0]["Config"]
    assert config["Entrypoint"] == dockerfile_entrypoint()


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_batch_node_in_a_container(tmp_path, outcome):
    definition = render(description(tmp_path, outcome, "batch"), "batch")
    ct = definition["nodeProperties"]["nodeRangeProperties"][0]["container"]
    index = OUTCOMES[outcome][1][0]
    env = batch_env(ct, definition["nodeProperties"]["numNodes"], index)
    code, out = run(tmp_path, env, ct["command"])  # the image's ENTRYPOINT + the command
    assert code == OUTCOMES[outcome][4], out[-3000:]
    action = None if code == 0 else batch_evaluate_on_exit(
        definition["retryStrategy"]["evaluateOnExit"], code, "Essential container in task exited", "")
    assert action == {0: None, 3: "EXIT", 75: "RETRY", 78: "EXIT", 69: "EXIT"}[code]


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_sagemaker_host_in_a_container(tmp_path, outcome):
    request = render(description(tmp_path, outcome, "sagemaker"), "sagemaker")
    algo = request["AlgorithmSpecification"]
    index = OUTCOMES[outcome][1][0]
    hosts = [f"algo-{i + 1}" for i in range(request["ResourceConfig"]["InstanceCount"])]
    ml = tmp_path / "ml"
    (ml / "input" / "config").mkdir(parents=True)
    (ml / "output").mkdir()
    (ml / "input" / "config" / "resourceconfig.json").write_text(json.dumps(
        {"current_host": hosts[index], "hosts": hosts, "network_interface_name": "lo"}))
    (ml / "input" / "config" / "hyperparameters.json").write_text("{}")
    env = {**request.get("Environment", {}), "TRAINING_JOB_NAME": request["TrainingJobName"]}
    code, out = run(tmp_path, env, algo["ContainerArguments"], entrypoint=algo["ContainerEntrypoint"],
                    volumes=[f"{ml}:/opt/ml"])
    assert code == OUTCOMES[outcome][4], out[-3000:]
    assert sagemaker_decision(code) == ("Completed" if code == 0 else "Failed")
    if code in (3, 75):  # the root cause: the job's FailureReason
        assert (ml / "output" / "failure").read_text().strip(), out[-3000:]


@pytest.mark.parametrize("target", ["kubeflow", "batch"])
def test_podman_stop_reaches_the_rendered_workers(tmp_path, target):
    command = ["bash", "-c", POLITE]
    if target == "kubeflow":
        ct, env = kubeflow_pod(tmp_path, "success", command)
        ep, args = ["--entrypoint", json.dumps(ct["command"])], ct["args"]
    else:
        desc = description(tmp_path, "success", "batch")
        doc = json.loads(desc.read_text())
        doc["command"] = command
        desc.write_text(json.dumps(doc))
        ct = render(desc, "batch")["nodeProperties"]["nodeRangeProperties"][0]["container"]
        env, ep, args = batch_env(ct, 1, 0), [], ct["command"]
    name = f"tv-contract-{uuid.uuid4().hex[:8]}"
    try:
        podman("run", "-d", "--name", name, *run_args(tmp_path, env, ()), *ep, IMAGE, *args)
        wait_for(name, "ready")
        code, seconds = stop(name, 10)
        out = logs(name)
    finally:
        podman("rm", "-f", "-t", "0", name, check=False)
    assert code == 143, out
    assert "rank 0 got SIGTERM" in out, out


def test_batch_two_nodes_in_two_containers_sharing_the_main_nodes_network(tmp_path):
    """The main node and a child, each its own container with trainvisor as PID 1. The main node
    is on podman's bridge network (it needs an address of its own, as on Batch); the child joins
    its network namespace (--network container:NAME) and reaches it at 127.0.0.1, so the
    rendezvous is real TCP between two containers and nothing leaves the host."""
    desc = description(tmp_path, "success", "batch")
    doc = json.loads(desc.read_text())
    doc["nodes"] = 2
    desc.write_text(json.dumps(doc))
    definition = render(desc, "batch")
    ct = definition["nodeProperties"]["nodeRangeProperties"][0]["container"]
    main = f"tv-contract-{uuid.uuid4().hex[:8]}"
    try:
        p = podman("run", "-d", "--name", main, *run_args(tmp_path, batch_env(ct, 2, 0), (), "bridge"), IMAGE,
                   *ct["command"], check=False)
        if p.returncode != 0:
            pytest.skip(f"podman's bridge network does not work on this host: {p.stderr.strip()[-300:]}")
        code_child, out = run(tmp_path, batch_env(ct, 2, 1), ct["command"], network=f"container:{main}")
        code_main = int(podman("wait", main, timeout=TIMEOUT_S).stdout.strip())
        out += logs(main)
    finally:
        podman("rm", "-f", "-t", "0", main, check=False)
    assert (code_main, code_child) == (0, 0), out[-4000:]
    dumped = [json.loads((tmp_path / f"env_{r}").read_text()) for r in (0, 1)]
    assert [(d["RANK"], d["WORLD_SIZE"]) for d in dumped] == [("0", "2"), ("1", "2")]
