"""Every path `run` gives a worker is absolute, whatever the options said (docs/supervision.md,
"Files trainvisor creates"): a relative --log-dir and --checkpoint-dir, and a worker that changes
directory first (Hydra does: hydra.job.chdir), still write their error file and heartbeat where
trainvisor reads them and find the checkpoint they resume from.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON."""
import json
import os
import subprocess

from tvtest import BIN, PYTHON, base_env

# Changes directory, records every path variable it was given, beats its heartbeat, writes its
# error file as torch's @record does, fails with 3.
WORKER = f"""#!{PYTHON}
import json, os, sys, time
os.makedirs("elsewhere", exist_ok=True)
os.chdir("elsewhere")
names = ("TORCHELASTIC_ERROR_FILE", "TRAINVISOR_HEARTBEAT_FILE", "TRAINVISOR_RESUME_CHECKPOINT",
         "TRAINVISOR_STACKS_FILE", "TORCH_FR_DUMP_TEMP_FILE")
paths = {{n: os.environ[n] for n in names if n in os.environ}}
with open(os.environ["TV_RECORD"], "w") as f:
    resume = paths["TRAINVISOR_RESUME_CHECKPOINT"]
    json.dump({{"paths": paths, "resume_exists": os.path.isdir(resume)}}, f)
open(os.environ["TRAINVISOR_HEARTBEAT_FILE"], "a").close()
info = {{"py_callstack": "tb", "timestamp": str(int(time.time()))}}
with open(os.environ["TORCHELASTIC_ERROR_FILE"], "w") as f:
    json.dump({{"message": {{"message": "ValueError: raised after chdir", "extraInfo": info}}}}, f)
sys.exit(3)
"""


def test_relative_dirs_become_absolute_for_a_worker_that_changes_directory(tmp_path):
    (tmp_path / "worker.py").write_text(WORKER)
    ckpt = tmp_path / "ckpt" / "checkpoint-5"
    ckpt.mkdir(parents=True)
    (ckpt / "trainer_state.json").write_text('{"global_step": 5}')
    record, failure = tmp_path / "record.json", tmp_path / "failure"
    r = subprocess.run(
        [str(BIN), "run", "--preflight", "none", "--warm-standby", "off", "--max-restarts", "0",
         "--log-dir", "logs", "--checkpoint-dir", "ckpt", "--checkpoint-format", "hf",
         "--failure-file", failure, "--termination-log", tmp_path / "tlog",
         "--nproc-per-node", "1", "worker.py"],
        cwd=tmp_path, env=base_env(TV_RECORD=record), capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stderr[-3000:]
    rec = json.loads(record.read_text())
    for name, path in rec["paths"].items():
        assert os.path.isabs(path), (name, path)
    rank_dir = tmp_path / "logs" / "attempt_0" / "rank_0"
    assert rec["paths"]["TORCHELASTIC_ERROR_FILE"] == str(rank_dir / "error.json")
    assert rec["paths"]["TRAINVISOR_RESUME_CHECKPOINT"] == str(ckpt)
    assert rec["resume_exists"]
    assert (rank_dir / "heartbeat").exists()
    assert not (tmp_path / "elsewhere" / "logs").exists()  # nothing landed beside the worker
    assert "ValueError: raised after chdir" in failure.read_text()
