"""Shared by test_torchrun_cli.py and test_seed_launchers.py: a stand-in training script that
records its argv and environment, and `trainvisor run` with the side outputs kept in a tmp dir."""
import json
import re
import os
import subprocess

from tvtest import BIN, PYTHON, base_env

# Writes {"argv": sys.argv[1:], "env": os.environ} to $TV_RECORD_DIR/rank_$RANK.json.
RECORDER = f"""#!{PYTHON}
import json, os, sys
path = os.path.join(os.environ["TV_RECORD_DIR"], "rank_%s.json" % os.environ.get("RANK", "x"))
with open(path + ".tmp", "w") as f:
    json.dump({{"argv": sys.argv[1:], "env": dict(os.environ)}}, f)
os.rename(path + ".tmp", path)
"""


def recorder(tmp_path, name="record_worker.py"):
    """The stand-in script (executable, so --no_python runs it too) and its record dir."""
    path = tmp_path / name
    path.write_text(RECORDER)
    path.chmod(0o755)
    out = tmp_path / "records"
    out.mkdir(exist_ok=True)
    return path, out


def run_argv(tmp_path, *opts, tag=""):
    return [str(BIN), "run", "--preflight", "none", "--warm-standby", "off",
            "--failure-file", str(tmp_path / f"failure{tag}"),
            "--termination-log", str(tmp_path / f"termination-log{tag}"), *map(str, opts)]


def records(out):
    return {int(json.loads(f.read_text())["env"]["RANK"]): json.loads(f.read_text())
            for f in sorted(out.glob("rank_*.json"))}


def run(tmp_path, args, env=None, timeout=60):
    return subprocess.run(run_argv(tmp_path, *args), env=env or base_env(),
                          capture_output=True, text=True, timeout=timeout)

def launcher_lines(path, start):
    """Every shell command in `path` that begins with `start`, continuation lines joined, the
    comments after a backslash dropped, envsubst's $$ collapsed to $ (as the seeds' README says)."""
    lines, out, cur = path.read_text().splitlines(), [], None
    for line in lines:
        text = re.sub(r"\\\s+#.*$", "\\\\", line.strip())
        if cur is None and text.startswith(start):
            cur = ""
        if cur is None:
            continue
        cur += text[:-1] + " " if text.endswith("\\") else text
        if not text.endswith("\\"):
            out.append(cur.replace("$$", "$"))
            cur = None
    assert out, f"no line starting with {start!r} in {path}"
    return out
