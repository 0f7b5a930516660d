"""`trainvisor checkpoint latest` against a tree real Orbax wrote (tests/data/checkpoint/orbax_real,
its README says how): the newest complete step, a save in progress under Orbax's tmp name, a step
directory without its _CHECKPOINT_METADATA."""
import os
import shutil
import subprocess
from pathlib import Path

import tvtest

TREE = Path(tvtest.SOURCE_DIR) / "tests" / "data" / "checkpoint" / "orbax_real"


def latest(d):
    p = subprocess.run([str(tvtest.BIN), "checkpoint", "latest", "--dir", str(d)],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.strip(), p.stderr


def test_real_orbax_steps_in_progress_and_damaged(tmp_path):
    d = tmp_path / "ckpt"
    shutil.copytree(TREE, d)
    (d / "README.md").unlink()
    rc, out, err = latest(d)  # 300 has no _CHECKPOINT_METADATA
    assert (rc, out) == (0, str(d / "200")), err
    shutil.copy(d / "200" / "_CHECKPOINT_METADATA", d / "300" / "_CHECKPOINT_METADATA")
    rc, out, err = latest(d)
    assert (rc, out) == (0, str(d / "300")), err
    os.rename(d / "300", d / "400.orbax-checkpoint-tmp-7")  # Orbax renames it when complete
    rc, out, err = latest(d)
    assert (rc, out) == (0, str(d / "200")), err
    assert "save in progress" in err, err
