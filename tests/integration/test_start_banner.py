"""The start banner (launcher/run/start_banner.h): the real binary prints each item once, one line each,
with where its value came from; with --log-format json each line is one JSON record. The
interpreter item names PYTHON_EXEC (the first of the image's interpreters, docs/torchrun.md). The
gpus item names the workers' GPUs with their UUIDs (the fake NVML's), or none, or unknown and why."""
import json
import os
import shutil
import socket
import subprocess

import pytest

import tvtest

ITEMS = ["host", "platform", "node rank", "nodes", "master", "workers", "gpus", "command",
         "interpreter", "torch", "resume"]


def run(tmp_path, *args):
    script = tmp_path / "train.py"
    script.write_text("print('ok')\n")
    cmd = [str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "2",
           "--master-port", str(tvtest.free_port()), *args, str(script)]
    p = subprocess.run(cmd, env=tvtest.base_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stderr.splitlines()


def banner(lines):
    out = {}
    for line in lines:
        if "start: " not in line:
            continue
        item, _, text = line.split("start: ", 1)[1].partition(": ")
        assert item not in out, f"{item} printed twice"
        out[item] = text
    return out


def test_text_banner_names_each_value_and_its_origin(tmp_path):
    b = banner(run(tmp_path, "--nnodes", "1"))
    assert list(b) == ITEMS, b
    assert b["host"] == socket.gethostname()
    assert b["nodes"] == "1 (from --nnodes)"
    assert b["workers"].startswith("2 per node (from --nproc-per-node") and "world 2" in b["workers"]
    assert b["interpreter"] == f"{tvtest.PYTHON} (from PYTHON_EXEC)"
    assert b["torch"].startswith("1.13"), b["torch"]  # Debian's torch, read without importing it
    assert b["resume"] == "nothing (no --checkpoint-dir)"


def test_json_banner_is_one_record_per_item(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    lines = run(tmp_path, "--log-format", "json", "--checkpoint-dir", str(ckpt))
    records = [json.loads(l) for l in lines if l.startswith("{")]
    assert len(records) == len([l for l in lines if l.strip()]), "a line that is not JSON"
    msgs = [r["msg"] for r in records if r["msg"].startswith("start: ")]
    assert [m.split(": ")[1] for m in msgs] == ITEMS
    assert all(r["level"] == "info" for r in records if r["msg"].startswith("start: "))
    assert msgs[-1] == f"start: resume: nothing (no checkpoint yet under {ckpt})", msgs[-1]


# The GPUs item: NVML's names and UUIDs of the GPUs the workers will use, from the preflight's
# reading when it ran, else from one bounded `__query gpu-health` child; never from NVML loaded in
# trainvisor itself. The fake NVML (tests/helpers/fake_nvml/) has GPUs GPU-fake-000N at PCI
# 00000000:0(N+1):00.0.
FAKE_NVML = tvtest.HELPERS / "fake_nvml"
FAKE_GPU = "GPU {0}: Fake H200 (UUID: GPU-fake-000{0}, PCI 00000000:0{1}:00.0)"


def gpu_run(tmp_path, *args, wrap=(), **extra):
    """trainvisor run of a worker that exits 0, 2 workers, the GPU health watch off (its child
    would load NVML too); returns the process and the command lines that loaded the fake NVML."""
    log = tmp_path / "nvml.log"
    extra.setdefault("LD_LIBRARY_PATH", FAKE_NVML)
    env = tvtest.base_env(TV_FAKE_NVML_LOG=log, **extra)
    cmd = [*wrap, str(tvtest.BIN), "run", "--gpu-health", "off", "--nproc-per-node", "2",
           "--master-port", str(tvtest.free_port()), *args, "--no-python", "--", "/bin/true"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = log.read_text().splitlines() if log.exists() else []
    return p, [line.split(" ", 2)[2] for line in lines if line.startswith("load ")]


def gpus_item(p):
    return banner(p.stderr.splitlines())["gpus"]


def with_a_gpu_device():
    """A wrapper that runs trainvisor where the device nodes count one GPU: a private mount
    namespace with a tmpfs on /proc/driver holding nvidia/gpus/0000:01:00.0 (the GPU counter's
    fallback, launcher/topology/gpu_count.h). Skips where mount namespaces are refused."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) for a mount namespace")
    script = ("mount -t tmpfs none /proc/driver && "
              "mkdir -p /proc/driver/nvidia/gpus/0000:01:00.0")
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("cannot fake a GPU device node here: " + probe.stderr.strip())
    return ("unshare", "-m", "--propagation", "private", "sh", "-c", script + ' && exec "$@"', "sh")


def test_gpus_come_from_the_preflights_nvml_reading(tmp_path):
    p, loaders = gpu_run(tmp_path, "--preflight", "basic")
    assert gpus_item(p).startswith(FAKE_GPU.format(0, 1) + "; " + FAKE_GPU.format(1, 2) +
                                   " (from NVML, read in the preflight; "), gpus_item(p)
    # One NVML reading, the preflight's: the banner does not query again.
    assert loaders and all(" __query gpu-health" in c for c in loaders), loaders
    assert len(loaders) == 1, loaders


def test_json_gpus_record_carries_the_array(tmp_path):
    p, _ = gpu_run(tmp_path, "--preflight", "basic", "--log-format", "json")
    records = [json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")]
    gpus = [r for r in records if r["msg"].startswith("start: gpus: ")]
    assert len(gpus) == 1, records
    assert gpus[0]["gpus"] == [
        {"index": i, "name": "Fake H200", "uuid": f"GPU-fake-000{i}",
         "pci_bus_id": f"00000000:0{i + 1}:00.0"} for i in range(2)]
    assert gpus[0]["gpus_state"] == "listed"
    assert gpus[0]["gpus_from"].startswith("NVML, read in the preflight")
    assert all("gpus" not in r for r in records if r is not gpus[0]), "extra members elsewhere"


def test_without_preflight_one_query_child_reads_the_workers_gpus(tmp_path):
    p, loaders = gpu_run(tmp_path, "--preflight", "none", wrap=with_a_gpu_device(),
                         TV_FAKE_NVML_GPUS=4)
    item = gpus_item(p)
    assert item.startswith(FAKE_GPU.format(0, 1) + "; " + FAKE_GPU.format(1, 2) + " (from NVML, "
                           "read by trainvisor __query gpu-health; device nodes: 1 visible GPU "
                           "(1 device in /proc/driver/nvidia/gpus)"), item
    assert "GPU-fake-0002" not in item and item.endswith("; 2 more visible GPUs not used)"), item
    assert len(loaders) == 1 and " __query gpu-health" in loaders[0], loaders


def test_a_hung_gpu_query_is_one_unknown_line_not_a_failed_run(tmp_path):
    (tmp_path / "libs").mkdir()
    libs = tvtest.fake_vendor_libs(tmp_path / "libs", names=("libnvidia-ml.so.1",))
    p, _ = gpu_run(tmp_path, "--preflight", "none", wrap=with_a_gpu_device(),
                   LD_LIBRARY_PATH=libs, TV_FAKE_HANG=60, TRAINVISOR_CHECK_TIMEOUT=1)
    assert gpus_item(p) == ("unknown (trainvisor __query gpu-health hung: killed after 1 s "
                            "(TRAINVISOR_CHECK_TIMEOUT); device nodes: 1 visible GPU (1 device "
                            "in /proc/driver/nvidia/gpus))"), p.stderr
    assert tvtest.left_behind(tvtest.MARKER, tvtest.SESSION) == []


@pytest.mark.skipif(os.path.exists("/dev/nvidia0") or os.path.exists("/proc/driver/nvidia/gpus"),
                    reason="this machine has NVIDIA GPU devices")
def test_a_cpu_job_without_preflight_starts_no_gpu_query(tmp_path):
    p, loaders = gpu_run(tmp_path, "--preflight", "none")
    assert gpus_item(p) == "none (no NVIDIA GPU device (/dev/nvidia*, /proc/driver/nvidia/gpus))"
    assert loaders == [], loaders


def test_resume_item_gives_the_lookups_reason_for_other_experiments_runs(tmp_path):
    """A checkpoint dir with only other experiments' runs (skrl, seed 001's /efs/models): the
    resume item says so, in the words of the lookup's own line, not "nothing complete"."""
    pt = tvtest.SOURCE_DIR / "tests/data/checkpoint/agent_1000.pt"
    ckpt = tmp_path / "models"
    for exp in ("h1_flat", "h1_rough"):
        d = ckpt / exp / "2025-01-02_10-00-00_ppo_torch/checkpoints"
        d.mkdir(parents=True)
        shutil.copyfile(pt, d / "agent_400.pt")
    cmd = [str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "1",
           "--master-port", str(tvtest.free_port()), "--checkpoint-dir", str(ckpt), "--no-python",
           "--", "/bin/true", "--task", "Isaac-Ant-v0"]
    p = subprocess.run(cmd, env=tvtest.base_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    said = [l.split("checkpoint: not resuming: ", 1)[1] for l in p.stderr.splitlines()
            if "checkpoint: not resuming: " in l]
    assert len(said) == 1, p.stderr
    assert said[0].startswith(f"runs of 2 experiment(s) under {ckpt}: h1_flat, h1_rough"), said
    assert banner(p.stderr.splitlines())["resume"] == f"nothing ({said[0]})"
