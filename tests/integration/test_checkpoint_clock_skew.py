"""A save dated in the future (issue 58): written on a shared file system by a machine whose clock
runs ahead, its mtime is ahead of this node's clock. Whether it is still being written is decided
by what this node sees (its size and mtime unchanged across two looks), never by waiting for the
clock to catch up; one warning says the mtime is in the future. The skew here is 10 minutes, so a
lookup that waited for the clock would outlast every guard below (the issue's 15 s cost 17 s)."""
import os
import subprocess
import time
import zipfile

import tvtest

BIN = str(tvtest.BIN)
AHEAD_S = 600
RUN = "Isaac-Ant-v0/2025-01-01_00-00-00_ppo_torch/checkpoints"


def saves(ckpt):
    """agent_10.pt an hour old and agent_20.pt dated AHEAD_S in the future (skrl's zips)."""
    run = ckpt / RUN
    run.mkdir(parents=True)
    for step, when in ((10, time.time() - 3600), (20, time.time() + AHEAD_S)):
        path = run / f"agent_{step}.pt"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("archive/data.pkl", b"x" * 1024)
        os.utime(path, (when, when))
    return run / "agent_20.pt"


def test_checkpoint_latest_takes_a_save_dated_in_the_future_and_says_so(tmp_path):
    ahead = saves(tmp_path / "ckpt")
    r = subprocess.run([BIN, "checkpoint", "latest", "--dir", str(tmp_path / "ckpt")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == str(ahead), r.stdout + r.stderr
    warned = [line for line in r.stderr.splitlines() if "in the future by this node's clock" in line]
    assert len(warned) == 1, r.stderr
    assert str(ahead) in warned[0] and "looking at it again after 2000 ms" in warned[0], warned


def test_run_starts_its_worker_resuming_from_a_save_dated_in_the_future(tmp_path):
    ahead = saves(tmp_path / "ckpt")
    proc = subprocess.Popen(
        [BIN, "run", "--preflight", "none", "--nproc-per-node", "1",
         "--checkpoint-dir", str(tmp_path / "ckpt"), "--no-python", "/bin/sh", "-c",
         'echo "resuming from $TRAINVISOR_RESUME_CHECKPOINT"'],
        env=tvtest.base_env(), cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    out = tvtest.Output(proc, timeout=120)
    try:
        out.wait_for(r"resuming from " + str(ahead))
        out.wait_end()
        assert proc.wait(timeout=120) == 0, out.text()
        assert out.text().count("in the future by this node's clock") == 1, out.text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
