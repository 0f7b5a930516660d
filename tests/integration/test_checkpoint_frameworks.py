"""One tree per framework layout of issue #12 (ckpt_layouts.py builds them from real torch.save
files, DCP directories written by hand), each with a resumed run and a half-written newest
checkpoint: `trainvisor checkpoint latest` must pick the newest COMPLETE one, with --format auto
and with the framework's own format name; and a real `trainvisor run` must hand it to the worker
through --resume-arg placeholders."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import ckpt_layouts  # noqa: E402

BIN = os.environ.get("TRAINVISOR_BIN", "trainvisor")


def latest(root, fmt="auto", *extra):
    r = subprocess.run([BIN, "checkpoint", "latest", "--dir", str(root), "--format", fmt,
                        "--json", *extra], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), r.stderr


@pytest.mark.parametrize("row", sorted(ckpt_layouts.ROWS))
def test_layout_picks_newest_complete(tmp_path, row):
    rel, step, fmt = ckpt_layouts.build(row, tmp_path)
    for f in ("auto", fmt):
        j, log = latest(tmp_path, f)
        assert j["path"] == str(tmp_path / rel), (f, log)
        assert j["step"] == step, (f, j)
        assert j["format"] == fmt, (f, j)
    # The half-written newest one was seen and skipped, with a reason.
    assert "skipping" in log


def test_explicit_format_ignores_other_layouts(tmp_path):
    ckpt_layouts.build("hf_trainer", tmp_path)
    ckpt_layouts.build("deepspeed", tmp_path)
    j, _ = latest(tmp_path, "deepspeed")
    assert j["path"] == str(tmp_path / "ds/global_step200")
    j, _ = latest(tmp_path, "hf")
    assert j["path"] == str(tmp_path / "out/checkpoint-1000")


def test_dcp_restored_by_sync_with_new_mtimes_is_complete(tmp_path):
    """aws s3 sync / cp -r: new mtimes in arbitrary order (.metadata older than the shards)."""
    ckpt_layouts.torchtitan(str(tmp_path / "src"))
    dst = tmp_path / "restored"
    shutil.copytree(tmp_path / "src", dst)
    step = dst / "outputs/llama3_a/checkpoint/step-2000"
    os.utime(step / ".metadata", (1, 1))  # oldest file of all now
    shutil.rmtree(dst / "outputs/llama3_b")
    j, _ = latest(dst)
    assert j["path"] == str(step)
    # A shard lost on the way is not accepted.
    os.remove(step / "__0_0.distcp")
    j, log = latest(dst)
    assert j["path"] == str(dst / "outputs/llama3_a/checkpoint/step-1000")
    assert "__0_0.distcp is missing" in log


def test_zero_filled_body_with_intact_central_directory_is_rejected(tmp_path):
    """A parallel multipart download writes the tail first: the zip's end record and central
    directory are there, the body is still zeros. The CRC-32 check catches it."""
    rel, _, _ = ckpt_layouts.isaaclab_skrl(str(tmp_path))
    good = tmp_path / rel
    newer = good.parent / "agent_2400.pt"
    data = bytearray(good.read_bytes())
    # The largest entry's data (after its local header, name and extra field) is still zeros.
    info = max(zipfile.ZipFile(good).infolist(), key=lambda i: i.file_size)
    h = info.header_offset
    size = info.compress_size
    start = h + 30 + int.from_bytes(data[h + 26:h + 28], "little") + \
        int.from_bytes(data[h + 28:h + 30], "little")
    assert size > 0 and data[start:start + size] != bytes(size)
    data[start:start + size] = bytes(size)
    newer.write_bytes(bytes(data))
    j, log = latest(tmp_path)
    assert j["path"] == str(good)
    assert "CRC-32 mismatch" in log


def test_resume_arg_placeholders(tmp_path):
    rel, _, _ = ckpt_layouts.rsl_rl(str(tmp_path))
    j, _ = latest(tmp_path, "auto", "--resume-arg",
                  "--resume --load_run {run} --checkpoint {file} --step={step} --dir={dir}")
    run = "2025-01-03_09-00-00_resumed"
    assert j["resume_args"] == ["--resume", "--load_run", run, "--checkpoint", "model_1550.pt",
                                "--step=1550", f"--dir={(tmp_path / rel).parent}"]
    r = subprocess.run([BIN, "checkpoint", "latest", "--dir", str(tmp_path), "--resume-arg",
                        "--x={nope}"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 78 and "--resume-arg" in r.stderr and "{nope}" in r.stderr


WORKER = textwrap.dedent("""
    import json, os, sys
    with open(sys.argv[1], "w") as f:
        json.dump({"argv": sys.argv[2:], "env": os.environ.get("TRAINVISOR_RESUME_CHECKPOINT")}, f)
""")


@pytest.mark.parametrize("row,template,expect", [
    ("hf_trainer", "--resume_from_checkpoint {dir}", ["--resume_from_checkpoint", "{path}"]),
    ("isaaclab_rsl_rl", "--resume --load_run {run} --checkpoint {file}",
     ["--resume", "--load_run", "2025-01-03_09-00-00_resumed", "--checkpoint", "model_1550.pt"]),
    ("isaaclab_skrl", "--checkpoint {}", ["--checkpoint", "{path}"]),
    ("skrl_store_separately_multi_agent", "--dir={dir} --step={step}",
     ["--dir={parent}", "--step=200"]),
    ("torchtitan_dcp", "--checkpoint.initial_load_path", ["--checkpoint.initial_load_path", "{path}"]),
])
def test_run_hands_the_pick_to_the_worker(tmp_path, row, template, expect):
    ckpt = tmp_path / "ckpt"
    rel, _, _ = ckpt_layouts.build(row, ckpt)
    path = str(ckpt / rel)
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    out = tmp_path / "seen.json"
    r = subprocess.run([BIN, "run", "--preflight", "none", "--nproc-per-node", "1",
                        "--checkpoint-dir", str(ckpt), "--resume-arg", template, "--no-python",
                        sys.executable, str(worker), str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    seen = json.loads(out.read_text())
    assert seen["env"] == path
    want = [e.replace("{path}", path).replace("{parent}", os.path.dirname(path)) for e in expect]
    assert seen["argv"] == want
