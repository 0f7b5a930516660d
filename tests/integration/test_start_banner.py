"""The start banner (cli/start_banner.h): the real binary prints each item once, one line each,
with where its value came from; with --log-format json each line is one JSON record. The
interpreter item names PYTHON_EXEC (the first of the image's interpreters, docs/torchrun.md)."""
import json
import socket
import subprocess

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
    assert f"nothing complete yet in {ckpt}" in msgs[-1]
