"""#20 item 6 with seed 001's layout (`tests/data/seeds/isaac-lab-batch-mnp`): the job
definition links Isaac Lab's logs/skrl to /efs/models, where every task's runs sit side by side,
and is re-submitted with another TASK. A Rough-H1 job must not resume a newer Flat-H1 checkpoint;
when nothing says which experiment the job trains, nothing is resumed and one line says why."""
import os
import shutil
import subprocess

import tvtest

BIN = str(tvtest.BIN)
SRC = str(tvtest.SOURCE_DIR)
PT = os.path.join(SRC, "tests/data/checkpoint/agent_1000.pt")  # a real torch.save file
SEED = os.path.join(SRC, "tests/data/seeds/isaac-lab-batch-mnp/register-job-definition.json")


def models(root):
    """/efs/models after a Rough-H1 job and then a Flat-H1 job (skrl: logs/skrl/<experiment
    directory of the task's agent cfg>/<%Y-%m-%d_%H-%M-%S>_ppo_torch/checkpoints/agent_<t>.pt)."""
    rough = root / "h1_rough/2025-01-02_10-00-00_ppo_torch/checkpoints"
    flat = root / "h1_flat/2025-01-05_10-00-00_ppo_torch/checkpoints"
    for d, steps in ((rough, (200, 400)), (flat, (800, 1600))):
        d.mkdir(parents=True)
        for s in steps:
            shutil.copyfile(PT, d / f"agent_{s}.pt")
    return rough, flat


def run(root, tmp_path, *worker_args, extra=()):
    out = tmp_path / "argv"
    r = subprocess.run([BIN, "run", "--preflight", "none", "--checkpoint-dir", str(root),
                        "--resume-arg", "--checkpoint {}", *extra, "--no-python", "--",
                        "/bin/sh", "-c", f'echo "$@" > {out}', "sh", *worker_args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return out.read_text().split(), r.stderr


def test_a_rough_h1_job_does_not_resume_the_newer_flat_h1_checkpoint(tmp_path):
    assert '"Isaac-Velocity-Rough-H1-v0"' in open(SEED).read()  # the seed's TASK
    rough, flat = models(tmp_path / "models")
    argv, _ = run(tmp_path / "models", tmp_path, "--task", "Isaac-Velocity-Rough-H1-v0")
    assert argv[-2:] == ["--checkpoint", str(rough / "agent_400.pt")], argv
    argv, _ = run(tmp_path / "models", tmp_path, "--task=Isaac-Velocity-Flat-H1-v0")
    assert argv[-2:] == ["--checkpoint", str(flat / "agent_1600.pt")], argv


def test_an_explicit_experiment_wins_over_the_task(tmp_path):
    rough, _ = models(tmp_path / "models")
    argv, _ = run(tmp_path / "models", tmp_path, "--task", "Isaac-Velocity-Flat-H1-v0",
                  extra=("--checkpoint-experiment", "h1_rough"))
    assert argv[-2:] == ["--checkpoint", str(rough / "agent_400.pt")], argv


def test_when_nothing_names_the_experiment_nothing_is_resumed_and_one_line_says_why(tmp_path):
    models(tmp_path / "models")
    argv, err = run(tmp_path / "models", tmp_path, "--task", "Isaac-Ant-v0")
    assert "--checkpoint" not in argv, argv
    lines = [l for l in err.splitlines() if "experiment(s) under" in l]
    assert lines, err[-2000:]
    assert "h1_flat, h1_rough" in lines[0] and "--checkpoint-experiment NAME" in lines[0]
