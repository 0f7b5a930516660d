"""Real PyTorch: a training script saves with torch.save every N steps in Isaac Lab's layout (a
new timestamped run directory per start, step counter back at 0), cuts its own save off and dies
mid-run; `trainvisor run` restarts it and must resume it from the newest COMPLETE file, passed
through --resume-arg and TRAINVISOR_RESUME_CHECKPOINT."""
import json
import subprocess
import textwrap

import pytest

import tvtest

BIN = str(tvtest.BIN)
TORCH_PY = tvtest.PYTHON

SCRIPT = textwrap.dedent("""
    import io, json, os, signal, sys, torch
    ckpt_dir, log = sys.argv[1], sys.argv[2]
    resume = next((a.split("=", 1)[1] for a in sys.argv[3:] if a.startswith("--resume=")), None)
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    run = os.path.join(ckpt_dir, "Isaac-Ant-v0", f"2025-01-01_00-00-{attempt:02d}_ppo_torch",
                       "checkpoints")
    os.makedirs(run, exist_ok=True)
    model = torch.nn.Linear(4, 4)
    global_step = 0
    if resume:
        state = torch.load(resume)          # raises on a cut-off file
        model.load_state_dict(state["policy"])
        global_step = state["global_step"]
    with open(log, "a") as f:
        f.write(json.dumps({"attempt": attempt, "resume": resume, "global_step": global_step,
                            "env": os.environ.get("TRAINVISOR_RESUME_CHECKPOINT")}) + "\\n")
    for local_step in range(1, 31):         # Isaac Lab: the counter restarts at 0 on resume
        global_step += 1
        with torch.no_grad():
            model.weight.add_(0.01)
        if local_step % 5 == 0:
            state = {"policy": model.state_dict(), "global_step": global_step}
            path = os.path.join(run, f"agent_{local_step}.pt")
            if attempt == 0 and local_step == 20:   # die in the middle of writing this save
                buf = io.BytesIO(); torch.save(state, buf)
                with open(path, "wb") as out:
                    out.write(buf.getvalue()[:len(buf.getvalue()) // 2]); out.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            torch.save(state, path)
""")


def run_works():
    try:
        r = subprocess.run([BIN, "run", "--preflight", "none", "--nproc-per-node", "1", "--no-python", "/bin/true"],
                           capture_output=True, text=True, timeout=60)
        h = subprocess.run([BIN, "run", "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and "--resume-arg" in (h.stdout + h.stderr)


@pytest.mark.skipif(not run_works(),
                    reason="`trainvisor run` cannot run a worker yet (run --no-python /bin/true "
                           "does not exit 0, or run --help lacks --resume-arg)")
def test_restart_resumes_from_newest_complete_torch_save(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    ckpt, log = tmp_path / "ckpt", tmp_path / "attempts.jsonl"
    r = subprocess.run([BIN, "run", "--preflight", "none", "--nproc-per-node", "1", "--max-restarts", "2",
                        "--checkpoint-dir", str(ckpt), "--resume-arg", "--resume={}",
                        "--no-python", TORCH_PY, str(script), str(ckpt), str(log)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    attempts = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(attempts) == 2, attempts
    assert attempts[0]["resume"] is None and attempts[0]["env"] is None
    first_run = ckpt / "Isaac-Ant-v0" / "2025-01-01_00-00-00_ppo_torch" / "checkpoints"
    expected = str(first_run / "agent_15.pt")       # agent_20.pt is the cut-off one
    assert attempts[1]["resume"] == expected, attempts
    assert attempts[1]["env"] == expected
    assert attempts[1]["global_step"] == 15
    # And afterwards the newest complete checkpoint is the second run's last save, at step 30.
    q = subprocess.run([BIN, "checkpoint", "latest", "--dir", str(ckpt), "--json"],
                       capture_output=True, text=True, timeout=120)
    j = json.loads(q.stdout)
    assert j["path"].endswith("2025-01-01_00-00-01_ppo_torch/checkpoints/agent_30.pt")
