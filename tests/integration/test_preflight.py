"""Integration tests of `trainvisor preflight` against the real binary on this machine.

This machine has no GPU and no EFA device; Debian's libfabric has no efa provider, which gives
exactly the FI_ENODATA failure, and its tcp provider works. GPU_ tests run only where a GPU is.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import tvtest

BIN = str(tvtest.BIN)
DATA = os.path.join(tvtest.SOURCE_DIR, "tests", "data", "nccl")
HAVE_GPU = shutil.which("nvidia-smi") is not None and subprocess.run(
    ["nvidia-smi", "-L"], capture_output=True).returncode == 0


def run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300, env=e)


def checks(report):
    return {c["name"]: c for c in report["checks"]}


@pytest.mark.skipif(HAVE_GPU, reason="expects a machine without a GPU driver")
def test_no_gpu_machine_passes_basic_and_says_no_driver():
    r = run("preflight", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    gpu = checks(report)["gpu"]
    assert gpu["outcome"] == "skip"
    assert "no NVIDIA driver" in gpu["message"]


def nvidia_pci_gpus():
    """NVIDIA VGA/3D functions on the PCI bus, driver or not (health/preflight.h)."""
    n = 0
    for dev in Path("/sys/bus/pci/devices").glob("*"):
        try:
            vendor, cls = (dev / "vendor").read_text(), (dev / "class").read_text()
        except OSError:
            continue
        n += vendor.startswith("0x10de") and cls.startswith(("0x0300", "0x0302"))
    return n


@pytest.mark.skipif(HAVE_GPU or nvidia_pci_gpus() > 0, reason="expects a node without NVIDIA GPUs")
def test_run_and_preflight_agree_on_a_node_without_nvidia_gpus():
    """One rule (resolve_expected_gpus): a node with no NVIDIA GPU, driver or not, runs its
    workers on the CPU; neither command expects GPUs there. A GPU node whose driver is missing
    fails both (tests/unit/health/expected_gpus_test.cc)."""
    r = run("preflight", "--nproc-per-node", "8")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no NVIDIA driver" in r.stdout
    r = run("run", "--preflight", "basic", "--warm-standby", "off", "--max-restarts", "0",
            "--nproc-per-node", "8", "--no-python", "/bin/true")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "starting 8 worker(s)" in r.stderr, r.stderr[-3000:]


def test_libfabric_efa_enodata_explained_when_efa_required():
    r = run("preflight", "--json", "--require-transport", "efa", "--level", "basic")
    assert r.returncode == 69
    lf = checks(json.loads(r.stdout))["libfabric"]
    assert lf["outcome"] == "fail"
    if lf["details"]["loaded"]:
        assert lf["details"]["rc"] == -61
        assert "No data available" in lf["message"]
        assert "uverbs" in lf["message"]
        assert lf["details"]["path"].endswith("libfabric.so.1")


def test_libfabric_tcp_provider_answers():
    r = run("preflight", "--json", "--fi-provider", "tcp", "--level", "basic")
    lf = checks(json.loads(r.stdout))["libfabric"]
    if not lf["details"]["loaded"]:
        pytest.skip("no libfabric here")
    assert lf["details"]["rc"] == 0, lf
    assert lf["details"]["provider_name"].startswith("tcp")
    assert lf["details"]["domains"]
    assert lf["details"]["version"]


def test_bad_option_values_are_usage_or_config_errors():
    assert run("preflight", "--require-transport", "fast").returncode in (64, 78)
    assert run("preflight", "--bogus").returncode == 64
    r = run("preflight", "--nccl-log", "/nonexistent/file")
    assert r.returncode == 78
    assert "/nonexistent/file" in r.stderr


@pytest.mark.parametrize("name,require,code,transport", [
    ("h200x2-nccl2.28.9-p2p-nvlink.log", "any", 0, "p2p"),
    ("h200x2-nccl2.28.9-p2p-nvlink.log", "efa", 69, "p2p"),
    ("h200x2-nccl2.28.9-p2p-shm-disabled-net-socket.log", "efa", 69, "socket"),
    ("h200x2-nccl2.28.9-p2p-shm-disabled-net-socket.log", "any", 0, "socket"),
    ("h200x2-nccl2.28.9-p2p-disabled-shm.log", "any", 0, "shm"),
    ("h200x2-nccl2.28.9-net-libfabric-forced-no-plugin-fatal.log", "any", 69, "failed"),
    ("h200x2-nccl2.28.9-plugin-ofi-not-found-fatal.log", "any", 69, "failed"),
    ("synthetic-nccl2.18.5-ofi1.7.3-efa-4nics-gdr.log", "auto", 0, "efa-gdr"),
    ("synthetic-nccl2.21.5-ofi1.9.1-tcp-provider.log", "net", 69, "ofi"),
])
def test_nccl_log_command(name, require, code, transport):
    r = run("preflight", "--nccl-log", os.path.join(DATA, name), "--require-transport", require, "--json")
    assert r.returncode == code, r.stdout + r.stderr
    j = json.loads(r.stdout)
    assert j["transport"] == transport
    for key in ("nccl_version", "plugin_name", "plugin_version", "libfabric_version", "provider",
                "nic_count", "gdr"):
        assert key in j


def test_nccl_log_auto_requires_efa_for_multinode_efa_log():
    # auto resolves to efa for a 2-node log whose plugin picked the efa provider: efa without GDR passes.
    r = run("preflight", "--nccl-log", os.path.join(DATA, "synthetic-nccl2.23.4-ofi1.13.2-efa-nogdr.log"), "--json")
    j = json.loads(r.stdout)
    assert j["require_transport"] == "efa"
    assert r.returncode == 0
    assert j["gdr"] is False


def test_socket_log_message_for_people():
    r = run("preflight", "--nccl-log", os.path.join(DATA, "h200x2-nccl2.28.9-p2p-shm-disabled-net-socket.log"),
            "--require-transport", "efa")
    assert r.returncode == 69
    assert "NET/Socket" in r.stdout and "uverbs" in r.stdout


@pytest.mark.skipif(not HAVE_GPU, reason="needs a GPU")
def test_GPU_full_preflight_passes(tmp_path):
    r = run("preflight", "--json", "--level", "full", "--log-dir", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    c = checks(json.loads(r.stdout))
    assert c["nccl-probe"]["outcome"] == "pass"
    assert c["nccl-probe"]["details"]["busbw_GBps"] > 0
