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
import tvtest  # noqa: E402

BIN = str(tvtest.BIN)


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


def test_hf_sharded_weights_need_every_shard_the_index_names(tmp_path):
    """A sharded HF save: model.safetensors.index.json names a shard for every tensor. Restored
    without a shard, or with a shard whose header is cut off, the checkpoint is not complete,
    although trainer_state.json is there."""
    out = tmp_path / "out"
    for n, m in ((500, 1), (1000, 2)):
        ckpt_layouts.hf_sharded_files(f"{out}/checkpoint-{n}", n, ckpt_layouts.t(m))
    for fmt in ("auto", "hf"):
        j, _ = latest(tmp_path, fmt)
        assert j["path"] == str(out / "checkpoint-1000") and j["step"] == 1000
    shard = out / "checkpoint-1000/model-00002-of-00002.safetensors"
    data = shard.read_bytes()
    shard.unlink()
    j, log = latest(tmp_path)
    assert j["path"] == str(out / "checkpoint-500")
    assert "model-00002-of-00002.safetensors is missing (model.safetensors.index.json" in log
    shard.write_bytes(data[:12])  # the length, then a header cut off
    j, log = latest(tmp_path)
    assert j["path"] == str(out / "checkpoint-500")
    assert "header" in log
    shard.write_bytes(data)
    j, _ = latest(tmp_path)
    assert j["path"] == str(out / "checkpoint-1000")
    # A hostile index: a shard outside its checkpoint, a nested object. Never complete, no crash.
    index = out / "checkpoint-1000/model.safetensors.index.json"
    for bad in ({"weight_map": {"w": "../checkpoint-500/model-00001-of-00002.safetensors"}},
                {"weight_map": {"w": {"nested": [1]}}}, {"weight_map": "x"}, [1]):
        index.write_text(json.dumps(bad))
        j, log = latest(tmp_path)
        assert j["path"] == str(out / "checkpoint-500"), bad
        assert "model.safetensors.index.json" in log


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
    # --checkpoint-dir is the run directory itself: {run} is still its name (Isaac Lab's
    # --load_run), never "".
    j, _ = latest((tmp_path / rel).parent, "auto", "--resume-arg", "--load_run {run}")
    assert j["resume_args"] == ["--load_run", run]
    r = subprocess.run([BIN, "checkpoint", "latest", "--dir", str(tmp_path), "--resume-arg",
                        "--x={nope}"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 78 and "--resume-arg" in r.stderr and "{nope}" in r.stderr


def test_resume_arg_without_json_prints_the_path_then_what_the_template_becomes(tmp_path):
    """Two lines: the path (what `$(trainvisor checkpoint latest --dir D)` always gave), then the
    arguments as shell words, quoted where a word needs it (`eval set -- "$line"`)."""
    rel, _, _ = ckpt_layouts.rsl_rl(str(tmp_path))
    r = subprocess.run([BIN, "checkpoint", "latest", "--dir", str(tmp_path), "--resume-arg",
                        "--load_run {run} --checkpoint {file} --note=it's"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    path, args = r.stdout.splitlines()
    assert path == str(tmp_path / rel)
    assert args == "--load_run 2025-01-03_09-00-00_resumed --checkpoint model_1550.pt '--note=it'\\''s'"
    words = subprocess.run(["sh", "-c", 'eval set -- "$0"; printf "%s\\n" "$@"', args],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert words == ["--load_run", "2025-01-03_09-00-00_resumed", "--checkpoint", "model_1550.pt",
                     "--note=it's"]


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


def latest_fails(root, fmt="auto"):
    r = subprocess.run([BIN, "checkpoint", "latest", "--dir", str(root), "--format", fmt],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == "", (r.stdout, r.stderr)
    return r.stderr


def equalize(root, when=1_700_000_000):
    for d, dirs, files in os.walk(root):
        for n in files + dirs:
            os.utime(os.path.join(d, n), (when, when), follow_symlinks=False)
    os.utime(root, (when, when))


@pytest.mark.parametrize("row", sorted(ckpt_layouts.ROWS))
def test_an_mtime_equalized_copy_is_picked_by_names_or_called_ambiguous(tmp_path, row):
    """A restore that gives every file the same mtime (aws s3 sync to /opt/ml/checkpoints):
    runs stamped in their names are still ordered; runs only mtimes ordered are ambiguous, said
    in one line, never decided by the order the walk met them."""
    rel, step, fmt = ckpt_layouts.build(row, tmp_path / "src")
    shutil.copytree(tmp_path / "src", tmp_path / "copy", symlinks=True)
    equalize(tmp_path / "copy")
    if row in ckpt_layouts.AMBIGUOUS_WHEN_EQUALIZED:
        assert "cannot tell which run is newer" in latest_fails(tmp_path / "copy")
    else:
        j, _ = latest(tmp_path / "copy")
        assert (j["path"], j["step"]) == (str(tmp_path / "copy" / rel), step)


def test_trainer_global_step_orders_unstamped_runs_with_equal_mtimes(tmp_path):
    """Two Trainer output_dirs (no stamp in their names) after a restore that made every mtime
    equal: trainer_state.json's global_step says the resumed run is further on; with equal
    global_steps the runs stay ambiguous."""
    ckpt_layouts.hf_files(f"{tmp_path}/first/checkpoint-900", 900, ckpt_layouts.t(1))
    ckpt_layouts.hf_files(f"{tmp_path}/resumed/checkpoint-500", 1400, ckpt_layouts.t(2))
    equalize(tmp_path)
    j, _ = latest(tmp_path)
    assert j["path"] == str(tmp_path / "resumed/checkpoint-500")
    ckpt_layouts.hf_files(f"{tmp_path}/third/checkpoint-700", 1400, ckpt_layouts.t(3))
    equalize(tmp_path)
    assert "cannot tell which run is newer" in latest_fails(tmp_path)


@pytest.mark.parametrize("stray", ["ema_150.pt", "policy_200.pt", "copy of agent_200.pt",
                                   "ema_900.pt"])
def test_a_file_skrl_did_not_write_never_changes_the_pick(tmp_path, stray):
    d = tmp_path / "logs/skrl/Ant/2025-01-02_10-00-00_ppo_torch/checkpoints"
    for i, s in enumerate((100, 200, 300)):
        ckpt_layouts.save(f"{d}/agent_{s}.pt", {"policy": ckpt_layouts.model(seed=s)},
                          ckpt_layouts.t(i))
    ckpt_layouts.save(f"{d}/{stray}", {"ema": ckpt_layouts.model()}, ckpt_layouts.t(5))
    j, _ = latest(tmp_path)
    assert j["path"] == str(d / "agent_300.pt") and j["step"] == 300


def test_an_unknown_layout_is_named_and_not_called_empty(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    assert "no checkpoint yet under" in latest_fails(ckpt)
    ckpt_layouts.save(f"{ckpt}/snapshots/net_final.pth", {"w": ckpt_layouts.model()})
    err = latest_fails(ckpt)
    assert "snapshots/net_final.pth matches no known layout; name its format (run " in err
    assert err.count("matches no known layout") == 1, err  # once (before: a warning, then again)
    # `run` says it at start, and starts the worker without a resume argument.
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    out = tmp_path / "seen.json"
    r = subprocess.run([BIN, "run", "--preflight", "none", "--nproc-per-node", "1",
                        "--checkpoint-dir", str(ckpt), "--resume-arg", "--resume={}", "--no-python",
                        sys.executable, str(worker), str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "snapshots/net_final.pth matches no known layout" in r.stdout + r.stderr
    assert json.loads(out.read_text())["argv"] == []


def test_a_path_with_a_newline_is_never_printed_raw(tmp_path):
    d = tmp_path / "runs/25-01-02_10-00-00-000000_PPO\nx/checkpoints"
    ckpt_layouts.save(f"{d}/agent_100.pt", {"policy": ckpt_layouts.model()})
    r = subprocess.run([BIN, "checkpoint", "latest", "--dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == ""
    assert "control character" in r.stderr and "\\n" in r.stderr
    j, _ = latest(tmp_path)  # --json escapes it
    assert j["path"] == f"{d}/agent_100.pt"
