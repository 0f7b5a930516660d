"""Issue 38: checkpoints at the very top of --checkpoint-dir, with no directory of their own
(Lightning's ModelCheckpoint(dirpath=D) writes D/last.ckpt and D/epoch=1-step=10.ckpt). The real
binary once died of SIGSEGV (exit 139) on `echo 1 > D/last.ckpt`; it must answer, with the right
path, for `checkpoint latest` and for `run --checkpoint-dir`."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import ckpt_layouts  # noqa: E402
import tvtest  # noqa: E402

BIN = str(tvtest.BIN)


def latest(root, *args):
    return subprocess.run([BIN, "checkpoint", "latest", "--dir", str(root), *args],
                          capture_output=True, text=True, timeout=120)


def lightning_ckpt(path, epoch, step, mtime):
    ckpt_layouts.save(path, {"epoch": epoch, "global_step": step,
                             "pytorch-lightning_version": "2.4.0",
                             "state_dict": ckpt_layouts.model(seed=step)}, mtime)


def test_a_file_that_is_not_a_checkpoint_at_the_top_does_not_crash(tmp_path):
    (tmp_path / "last.ckpt").write_text("1\n")
    for fmt in ("auto", "lightning"):
        r = latest(tmp_path, "--format", fmt)
        assert r.returncode in (0, 1), (fmt, r.returncode, r.stderr)  # an answer, not a signal
        assert "last.ckpt" in r.stderr, r.stderr  # it was looked at and skipped, with a reason


def test_lightning_dirpath_layout_at_the_top(tmp_path):
    lightning_ckpt(tmp_path / "epoch=0-step=5.ckpt", 0, 5, ckpt_layouts.t(1))
    lightning_ckpt(tmp_path / "epoch=1-step=10.ckpt", 1, 10, ckpt_layouts.t(2))
    lightning_ckpt(tmp_path / "last.ckpt", 1, 10, ckpt_layouts.t(3))  # save_last: after step 10
    for fmt in ("auto", "lightning"):
        r = latest(tmp_path, "--format", fmt, "--json")
        assert r.returncode == 0, (fmt, r.returncode, r.stderr)
        j = json.loads(r.stdout)
        assert j["path"] == str(tmp_path / "last.ckpt"), (fmt, j)
        assert j["step"] == 10 and j["format"] == "lightning", j
    # The newest save cut off: the step file before it.
    ckpt_layouts.write(str(tmp_path / "last.ckpt"), (tmp_path / "last.ckpt").read_bytes(),
                       ckpt_layouts.t(3), fraction=0.5)
    r = latest(tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "epoch=1-step=10.ckpt")


def test_run_resumes_from_the_top_of_the_checkpoint_dir(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    lightning_ckpt(ckpt / "epoch=1-step=10.ckpt", 1, 10, ckpt_layouts.t(2))
    out = tmp_path / "resumed"
    r = subprocess.run([BIN, "run", "--preflight", "none", "--nproc-per-node", "1",
                        "--checkpoint-dir", str(ckpt), "--resume-arg", "{}", "--no-python",
                        "/bin/sh", "-c", f'echo "$1" > {out}', "sh"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert out.read_text().strip() == str(ckpt / "epoch=1-step=10.ckpt")
