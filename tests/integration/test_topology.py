"""`trainvisor topology [--json]` against the real binary, one platform at a time.

Each run starts from a minimal environment (never os.environ), so the machine's own SLURM_*,
PET_* or AWS_* variables cannot leak in, and --resource-config points into a temp dir unless the
test is about SageMaker.
"""
import json
import os
import re
import shutil
import subprocess

import pytest

import tvtest

BIN = str(tvtest.BIN)
SRC = tvtest.SOURCE_DIR
DATA = SRC / "tests" / "data" / "topology"

pytestmark = pytest.mark.skipif(not BIN or not os.access(BIN, os.X_OK),
                                reason="TRAINVISOR_BIN is not an executable")


def run(tmp_path, *args, env=None, prefix=()):
    base = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
            "TRAINVISOR_RESOURCE_CONFIG": str(tmp_path / "no-resourceconfig.json"),
            "CUDA_VISIBLE_DEVICES": ""}
    if "LD_LIBRARY_PATH" in os.environ:  # how the binary finds its libraries, nothing more
        base["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    base.update(env or {})
    base = {k: v for k, v in base.items() if v is not None}
    return subprocess.run([*prefix, BIN, "topology", *args], env=base, capture_output=True,
                          text=True, timeout=60)


def topo(tmp_path, *args, env=None, prefix=()):
    p = run(tmp_path, "--json", *args, env=env, prefix=prefix)
    assert p.returncode == 0, p.stderr
    assert p.stdout.endswith("\n") and p.stdout.count("\n") == 1, p.stdout
    return json.loads(p.stdout)


def refused(tmp_path, *args, env=None, code=78):
    p = run(tmp_path, "--json", *args, env=env)
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    assert p.stderr.count("\n") == 1, p.stderr
    assert len(tvtest.error_messages(p.stderr)) == 1, p.stderr  # the logger's error form
    return p.stderr


def rc_file(tmp_path, name):
    dst = tmp_path / name
    shutil.copy(DATA / name, dst)
    return str(dst)


# ---- local and explicit ----

def test_local_default(tmp_path):
    t = topo(tmp_path)
    assert t["platform"] == "local"
    assert (t["nnodes"], t["node_rank"], t["nproc_per_node"], t["world_size"]) == (1, 0, 1, 1)
    assert t["master_addr"] == "127.0.0.1" and t["master_port"] == 29500
    assert isinstance(t["master_port"], int) and "hosts" not in t
    assert t["job_id"] == ""
    assert t["sources"]["platform"] == "default (no platform detected)"
    assert t["sources"]["nproc_per_node"].startswith("auto")


def test_human_table_names_every_source(tmp_path):
    p = run(tmp_path, "--nnodes", "2", "--node-rank", "1", "--master-addr", "10.1.2.3",
            "--nproc-per-node", "4")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    table = {l.split()[0]: l for l in lines}
    assert "--nnodes" in table["nnodes"] and re.search(r"\b2\b", table["nnodes"])
    assert "--node-rank" in table["node_rank"]
    assert "10.1.2.3" in table["master_addr"] and "--master-addr" in table["master_addr"]
    assert re.search(r"world_size\s+8\b", p.stdout)


def test_explicit_flags_both_spellings(tmp_path):
    t = topo(tmp_path, "--nnodes=3", "--node_rank", "2", "--master_addr", "head",
             "--master-port", "4000", "--nproc_per_node", "2")
    assert t["platform"] == "explicit"
    assert (t["nnodes"], t["node_rank"], t["world_size"], t["master_port"]) == (3, 2, 6, 4000)
    assert t["sources"]["node_rank"] == "--node-rank"


def test_explicit_from_trainvisor_variables(tmp_path):
    t = topo(tmp_path, env={"TRAINVISOR_NNODES": "2", "TRAINVISOR_NODE_RANK": "1",
                            "TRAINVISOR_MASTER_ADDR": "10.0.0.1"})
    assert t["platform"] == "explicit" and t["node_rank"] == 1
    assert t["sources"]["nnodes"] == "TRAINVISOR_NNODES"


def test_flag_wins_over_environment(tmp_path):
    t = topo(tmp_path, "--nproc-per-node", "3", env={"TRAINVISOR_NPROC_PER_NODE": "5"})
    assert t["nproc_per_node"] == 3


def test_standalone_ignores_a_slurm_job(tmp_path):
    t = topo(tmp_path, "--standalone", env={"SLURM_JOB_ID": "9", "SLURM_NNODES": "4"})
    assert t["platform"] == "local" and t["nnodes"] == 1


def test_nproc_auto_counts_this_machines_gpus(tmp_path):
    """Real GpuCounter: the same rule as the docs, computed here from /dev and /proc."""
    dev = [n for n in os.listdir("/dev") if re.fullmatch(r"nvidia[0-9]+", n)]
    proc = "/proc/driver/nvidia/gpus"
    found = len(dev) or (len(os.listdir(proc)) if os.path.isdir(proc) else 0)
    t = topo(tmp_path, env={"CUDA_VISIBLE_DEVICES": None})
    assert t["nproc_per_node"] == max(found, 1), t["sources"]["nproc_per_node"]
    if found >= 2:
        t = topo(tmp_path, env={"CUDA_VISIBLE_DEVICES": "1"})
        assert t["nproc_per_node"] == 1


# ---- SageMaker ----

def test_sagemaker(tmp_path):
    path = rc_file(tmp_path, "resourceconfig_plain.json")
    t = topo(tmp_path, "--nproc-per-node", "8",
             env={"TRAINVISOR_RESOURCE_CONFIG": path, "TRAINING_JOB_NAME": "ppo-1"})
    assert t["platform"] == "sagemaker"
    assert (t["nnodes"], t["node_rank"], t["world_size"]) == (4, 1, 32)
    assert t["master_addr"] == "algo-1"
    assert t["hosts"] == ["algo-1", "algo-2", "algo-3", "algo-4"]
    assert t["job_id"] == "ppo-1"
    assert t["worker_env"] == {"NCCL_SOCKET_IFNAME": "eth0"}
    assert path in t["sources"]["node_rank"]


def test_sagemaker_keeps_nccl_socket_ifname(tmp_path):
    path = rc_file(tmp_path, "resourceconfig_plain.json")
    t = topo(tmp_path, "--resource-config", path, env={"NCCL_SOCKET_IFNAME": "ens"})
    assert t["worker_env"] == {}


def test_sagemaker_heterogeneous(tmp_path):
    path = rc_file(tmp_path, "resourceconfig_hetero.json")
    t = topo(tmp_path, "--resource-config", path)
    assert (t["nnodes"], t["node_rank"], t["master_addr"]) == (3, 2, "algo-1")


def test_sagemaker_refusals(tmp_path):
    path = rc_file(tmp_path, "resourceconfig_malformed.json")
    err = refused(tmp_path, "--resource-config", path)
    assert path in err and "not valid JSON" in err
    path = rc_file(tmp_path, "resourceconfig_stranger.json")
    err = refused(tmp_path, "--resource-config", path)
    assert 'current_host "algo-9" is not in hosts' in err
    err = refused(tmp_path, "--platform", "sagemaker")
    assert "no-resourceconfig.json does not exist" in err


# ---- Kubeflow ----

KF = {"PET_NNODES": "2", "PET_NODE_RANK": "1", "PET_MASTER_ADDR": "cosmos-master-0",
      "PET_MASTER_PORT": "23456", "PET_NPROC_PER_NODE": "4", "WORLD_SIZE": "8", "RANK": "1"}


def test_kubeflow(tmp_path):
    t = topo(tmp_path, env=KF)
    assert t["platform"] == "kubeflow"
    assert (t["nnodes"], t["node_rank"], t["nproc_per_node"], t["world_size"]) == (2, 1, 4, 8)
    assert (t["master_addr"], t["master_port"], t["job_id"]) == ("cosmos-master-0", 23456, "cosmos")
    assert t["sources"]["nproc_per_node"] == "PET_NPROC_PER_NODE"


def test_kubeflow_world_size_is_pod_count_without_nproc(tmp_path):
    t = topo(tmp_path, env={"MASTER_ADDR": "job-master-0", "MASTER_PORT": "23456", "RANK": "2",
                            "WORLD_SIZE": "3"})
    assert (t["platform"], t["nnodes"], t["node_rank"], t["nproc_per_node"]) == ("kubeflow", 3, 2, 1)


def test_kubeflow_refusals(tmp_path):
    err = refused(tmp_path, env={**KF, "WORLD_SIZE": "2"})
    assert 'WORLD_SIZE="2" conflicts with PET_NNODES="2" and PET_NPROC_PER_NODE="4"' in err
    err = refused(tmp_path, env={**KF, "PET_NNODES": "4:1"})
    assert 'PET_NNODES="4:1": expected N or MIN:MAX with 1 <= MIN <= MAX' in err
    err = refused(tmp_path, env={**KF, "PET_NODE_RANK": "2"})
    assert 'PET_NODE_RANK="2": expected an integer from 0 to 1' in err


def test_kubeflow_nn_range_accepted(tmp_path):
    assert topo(tmp_path, env={**KF, "PET_NNODES": "2:2"})["nnodes"] == 2


def test_kubeflow_elastic_range_is_min_and_max(tmp_path):
    t = topo(tmp_path, env={**KF, "PET_NNODES": "1:4", "PET_NODE_RANK": "0"})
    assert (t["nnodes"], t["min_nnodes"]) == (4, 1)


# ---- AWS Batch ----

def batch(index, main="0", n="3", **extra):
    return {"AWS_BATCH_JOB_NUM_NODES": n, "AWS_BATCH_JOB_NODE_INDEX": index,
            "AWS_BATCH_JOB_MAIN_NODE_INDEX": main, "AWS_BATCH_JOB_ID": f"abc#{index}", **extra}


def test_batch_child(tmp_path):
    t = topo(tmp_path, env=batch("0", main="1",
                                 AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS="10.0.3.4"))
    assert (t["platform"], t["node_rank"], t["master_addr"], t["job_id"]) == \
        ("batch", 2, "10.0.3.4", "abc")


def in_new_netns(script):
    """A command prefix running `script` then trainvisor in a fresh network namespace."""
    if not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("unshare or ip is missing")
    probe = subprocess.run(["unshare", "--net", "--map-root-user", "sh", "-c", script],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("cannot set up a network namespace here: " + probe.stderr.strip())
    return ("unshare", "--net", "--map-root-user", "sh", "-c", script + '; exec "$@"', "sh")


def test_batch_main_node_uses_its_own_interface_address(tmp_path):
    prefix = in_new_netns("ip link add tv0 type veth peer name tv1 && "
                          "ip addr add 10.231.0.7/24 dev tv0 && ip link set tv0 up")
    t = topo(tmp_path, env=batch("1", main="1"), prefix=prefix)
    assert (t["node_rank"], t["master_addr"]) == (0, "10.231.0.7")
    assert "tv0" in t["sources"]["master_addr"]


def test_batch_main_node_without_an_address_is_refused(tmp_path):
    prefix = in_new_netns("ip link set lo up")
    base = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "CUDA_VISIBLE_DEVICES": "",
            "TRAINVISOR_RESOURCE_CONFIG": str(tmp_path / "none"), **batch("0")}
    p = subprocess.run([*prefix, BIN, "topology", "--json"], env=base, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 78 and "main node" in p.stderr and "--master-addr" in p.stderr


def test_batch_refusals(tmp_path):
    err = refused(tmp_path, env=batch("3"))
    assert 'AWS_BATCH_JOB_NODE_INDEX="3": expected an integer from 0 to 2' in err
    err = refused(tmp_path, env=batch("1"))
    assert "AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS is not set" in err


# ---- Slurm ----

SLURM = {"SLURM_JOB_ID": "777", "SLURM_NNODES": "6", "SLURM_NODEID": "4",
         "SLURM_JOB_NODELIST": "gpu-[001-004,007],head"}


def test_slurm(tmp_path):
    t = topo(tmp_path, env=SLURM)
    assert t["platform"] == "slurm"
    assert t["hosts"] == ["gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-007", "head"]
    assert (t["nnodes"], t["node_rank"], t["master_addr"], t["job_id"]) == (6, 4, "gpu-001", "777")
    assert t["sources"]["node_rank"] == "env SLURM_NODEID"


def test_slurm_refusals(tmp_path):
    err = refused(tmp_path, env={**SLURM, "SLURM_NNODES": "5"})
    assert "names 6 hosts but SLURM_NNODES=\"5\"" in err
    err = refused(tmp_path, env={**SLURM, "SLURM_JOB_NODELIST": "n[0-999999999]"})
    assert "more than 100000 hosts" in err
    err = refused(tmp_path, "--platform", "slurm", "--nnodes", "2", env=SLURM)
    assert '--nnodes="2" conflicts with env SLURM_NNODES = 6' in err
    err = refused(tmp_path, "--platform", "slurm")
    assert "SLURM_JOB_ID is not set" in err


# ---- options and usage ----

@pytest.mark.parametrize("args,needle", [
    (["--master-port", "70000"], '--master-port="70000": expected an integer from 1 to 65535'),
    (["--nnodes", "two"], '--nnodes="two"'),
    (["--nnodes", "2", "--node-rank", "5", "--master-addr", "h"], '--node-rank="5"'),
    (["--platform", "k8s"], '--platform="k8s"'),
    (["--nproc-per-node", "0"], '--nproc-per-node="0"'),
])
def test_option_refusals(tmp_path, args, needle):
    assert needle in refused(tmp_path, *args)


def test_usage_errors_exit_64(tmp_path):
    assert "unknown option --bogus" in refused(tmp_path, "--bogus", code=64)
    assert "unexpected argument" in refused(tmp_path, "extra", code=64)


def test_help(tmp_path):
    p = run(tmp_path, "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: trainvisor topology")
    assert "--nproc-per-node" in p.stdout
