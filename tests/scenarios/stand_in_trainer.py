"""The stand-in training script of the scenarios: uses torch the way the seeds' scripts do
(`init_process_group("gloo")` from the launcher's env://, so rank 0's TCPStore binds
MASTER_PORT; one all_reduce per step keeps the ranks in lockstep), saves checkpoints in the seed
framework's layout, resumes from what the launcher hands it, and prints progress in the
framework's format on rank 0 only (skrl and rsl_rl print on rank 0 alone).

Copied by the test to where the seed's line expects its script (run_train.py, train.py, the
`-m` module's file). Driven by files under $SCEN_DIR/plan (the test writes them when it wants
an event):
  crash_r<RANK>   that rank raises at its next step (once: the file is taken)
  hang_r<RANK>    that rank sleeps before its next collective (the others wait in it): a hang
  finish          every rank stops cleanly at the same step (agreed through an all_reduce)
Records what it saw at start in $SCEN_DIR/records/c<container>_g<restart>_r<rank>.json.

SCEN_LAYOUT: skrl (Isaac Lab: <root>/skrl/<task>/<time>_ppo_torch/checkpoints/agent_<step>.pt,
  the skrl runner's names; resumes from `--checkpoint PATH` as Isaac Lab's skrl train.py takes
  it) or cosmos (cosmos-rl: <root>/checkpoints/iter_<9 digits>/{model,optim,scheduler,trainer},
  each a DCP directory, then latest_checkpoint.txt; resumes from TRAINVISOR_RESUME_CHECKPOINT).
"""
import datetime
import json
import os
import pathlib
import re
import shutil
import sys
import time
import zipfile

SCEN = os.environ["SCEN_DIR"]
RANK = int(os.environ["RANK"])
GEN = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
CONTAINER = os.environ.get("SCEN_CONTAINER", "0")
LAYOUT = os.environ["SCEN_LAYOUT"]
ROOT = os.environ["SCEN_CKPT_ROOT"]
EVERY = int(os.environ.get("SCEN_CKPT_EVERY", "4"))
STEP_S = float(os.environ.get("SCEN_STEP_S", "0.1"))
HEARTBEAT = os.environ.get("TRAINVISOR_HEARTBEAT_FILE")
DCP = os.environ.get("SCEN_DCP")  # a real DCP save to copy (tests/data/checkpoint/dcp_real)


def resume_point():
    """(path, step) the launcher handed over, (None, 0) for a fresh start."""
    path = None
    if LAYOUT == "skrl":
        args = sys.argv[1:]
        for i, a in enumerate(args):
            if a == "--checkpoint" and i + 1 < len(args):
                path = args[i + 1]
            elif a.startswith("--checkpoint="):
                path = a.split("=", 1)[1]
    else:
        path = os.environ.get("TRAINVISOR_RESUME_CHECKPOINT")
    if not path:
        return None, 0
    m = re.search(r"(?:agent_|iter_)(\d+)", os.path.basename(path.rstrip("/")))
    return path, int(m.group(1)) if m else -1


def newest_on_disk():
    """The newest complete checkpoint's step. skrl's torch.save writes agent_N.pt in place, so a
    rank stopped in the middle of a save (a lost node's SIGTERM, a crash) leaves a torn file: a
    zip without its end record, which the launcher rightly never resumes from."""
    steps = []
    for d, _, files in os.walk(ROOT):
        if LAYOUT == "skrl":
            steps += [int(m.group(1)) for f in files if (m := re.fullmatch(r"agent_(\d+)\.pt", f))
                      and zipfile.is_zipfile(os.path.join(d, f))]
        elif "latest_checkpoint.txt" in files:
            with open(os.path.join(d, "latest_checkpoint.txt")) as f:
                m = re.fullmatch(r"iter_(\d+)\s*", f.read())
            steps += [int(m.group(1))] if m else []
    return max(steps, default=0)


def record(resume_path, resume_step):
    main = sys.modules["__main__"]
    spec = getattr(main, "__spec__", None)
    rec = {"argv": sys.argv, "orig_argv": getattr(sys, "orig_argv", None),
           "env": dict(os.environ), "cwd": os.getcwd(), "pid": os.getpid(),
           "ppid": os.getppid(), "spec": spec.name if spec else None,
           "file": getattr(main, "__file__", None), "path0": sys.path[0],
           "resume_path": resume_path, "resume_step": resume_step,
           "newest_at_start": newest_on_disk(), "torch_preimported": "torch" in sys.modules}
    out = os.path.join(SCEN, "records", f"c{CONTAINER}_g{GEN}_r{RANK}.json")
    with open(out + ".tmp", "w") as f:
        json.dump(rec, f)
    os.rename(out + ".tmp", out)


def save(step, run_dir):
    import torch
    if LAYOUT == "skrl":
        ck = os.path.join(run_dir, "checkpoints")
        os.makedirs(ck, exist_ok=True)
        torch.save({"policy": torch.zeros(4), "step": step}, os.path.join(ck, f"agent_{step}.pt"))
        torch.save({"policy": torch.zeros(4), "step": step}, os.path.join(ck, "best_agent.pt"))
        return
    ck = os.path.join(ROOT, "checkpoints")
    it = os.path.join(ck, f"iter_{step:09d}")
    for part in ("model", "optim", "scheduler", "trainer"):
        shutil.copytree(DCP, os.path.join(it, part))
    with open(os.path.join(ck, "latest_checkpoint.txt.tmp"), "w") as f:
        f.write(f"iter_{step:09d}\n")
    os.rename(os.path.join(ck, "latest_checkpoint.txt.tmp"),
              os.path.join(ck, "latest_checkpoint.txt"))


def taken(name):
    """Whether plan file `name` existed; it is consumed (renamed away) so it acts once."""
    path = os.path.join(SCEN, "plan", name)
    try:
        os.rename(path, path + f".taken.{os.getpid()}")
        return True
    except OSError:
        return False


def beat():
    """What docs/supervision.md asks of a loop whose ranks print nothing: touch the heartbeat."""
    if HEARTBEAT:
        pathlib.Path(HEARTBEAT).touch()


def main():
    resume_path, resume_step = resume_point()
    record(resume_path, resume_step)
    beat()
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    task = os.environ.get("TASK", "Isaac-Velocity-Rough-H1-v0")
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    run_dir = os.path.join(ROOT, "skrl", task, f"{stamp}_ppo_torch")
    step = max(resume_step, 0)
    while True:
        step += 1
        if taken(f"crash_r{RANK}"):
            raise RuntimeError(f"injected crash on rank {RANK} at step {step}")
        if taken(f"hang_r{RANK}"):  # never reaches the collective the others wait in
            time.sleep(3600)
        beat()
        done = torch.tensor([1.0 if os.path.exists(os.path.join(SCEN, "plan", "finish")) else 0.0])
        dist.all_reduce(done, op=dist.ReduceOp.MAX)
        if done.item() > 0:
            break
        if RANK == 0:
            if LAYOUT == "skrl":
                print(f"timestep {step} | reward {0.1 * step:.2f}", flush=True)
            else:
                print(f"[cosmos] iteration {step} loss {1.0 / step:.4f}", flush=True)
            if step % EVERY == 0:
                save(step, run_dir)
        time.sleep(STEP_S)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
