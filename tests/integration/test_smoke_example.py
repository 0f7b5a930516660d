"""README's first command (scripts/smoke.sh: `trainvisor run --nproc-per-node 2
examples/ddp_example.py`) finishes or fails within a bound: the example leaves without torch
1.13's gloo teardown (seen to hang after result=OK), and smoke.sh puts `timeout` around the run."""
import subprocess
import time

import pytest

from tvtest import BIN, PYTHON, SOURCE_DIR, base_env
from torchrun_cli import run_argv

EXAMPLE = SOURCE_DIR / "examples" / "ddp_example.py"


def torch_available():
    return subprocess.run([PYTHON, "-c", "import torch.distributed"],
                          capture_output=True).returncode == 0


@pytest.mark.skipif(not torch_available(), reason="no torch in TV_PYTHON")
def test_example_finishes_ok_and_every_worker_exits(tmp_path):
    proc = subprocess.run(run_argv(tmp_path, "--nproc-per-node", 2, EXAMPLE, "--seconds", 0.5),
                          env=base_env(), capture_output=True, text=True, timeout=180)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said[-3000:]
    assert "world_size=2" in said and "result=OK" in said, said[-3000:]


def test_smoke_script_is_bounded(tmp_path):
    """SMOKE_TIMEOUT=1: the run is stopped (timeout's 124) long before any test deadline."""
    started = time.monotonic()
    proc = subprocess.run(["bash", str(SOURCE_DIR / "scripts" / "smoke.sh")],
                          env=base_env(SMOKE_TIMEOUT=1, BUILD_DIR=BIN.parent,
                                       TRAINVISOR_FAILURE_FILE=tmp_path / "failure",
                                       TRAINVISOR_TERMINATION_LOG=tmp_path / "termination"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 124, f"exit {proc.returncode}:\n{proc.stderr[-2000:]}"
    assert time.monotonic() - started < 100
