"""A small DDP job over NCCL for the GPU restart figures (bench/gpu_ddp_restart.sh).

Rank 1 SIGKILLs itself at step KILL_AT on the first attempt; rank 0 saves `agent_<step>.pt` with
torch.save every 50 steps in an Isaac Lab-like tree. The resume checkpoint comes from
`--resume=PATH` (trainvisor's --resume-arg), else the script looks for the newest file itself
(what a torchrun user has to write). Prints START/KILL/DONE lines with wall-clock times, and rank 0
prints rsl_rl's "Learning iteration STEP/TOTAL" every 10 steps (bench/gpu_goodput.sh reads them).
"""
import glob
import os
import sys
import time

T0 = time.time()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

KILL_AT = 230


def newest(ckdir):
    files = glob.glob(os.path.join(ckdir, "*", "*", "checkpoints", "agent_*.pt"))
    return max(files, key=lambda f: int(f.rsplit("_", 1)[1][:-3]), default=None)


def main():
    ckdir, total = sys.argv[1], int(sys.argv[2])
    resume = next((a.split("=", 1)[1] for a in sys.argv[3:] if a.startswith("--resume=")), None)
    if resume is None and "--self-resume" in sys.argv:
        resume = newest(ckdir)
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    rc = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    net = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024))
    model = DDP(net.cuda(), device_ids=[local])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = 0
    if resume:
        state = torch.load(resume, map_location="cuda")
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
    print(f"START rank={rank} rc={rc} t0={T0:.6f} ready={time.time():.6f} resume_step={step}", flush=True)
    run = os.path.join(ckdir, "H1", f"2026-11-29_00-00-{rc:02d}_ppo_torch", "checkpoints")
    os.makedirs(run, exist_ok=True)
    while step < total:
        x = torch.randn(256, 1024, device="cuda")
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 10 == 0 and rank == 0:  # rsl_rl's progress line: `--progress-regex auto` reads it
            print(f"Learning iteration {step}/{total}", flush=True)
        if step % 50 == 0 and rank == 0:
            torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(), "step": step},
                       os.path.join(run, f"agent_{step}.pt"))
        if rc == 0 and rank == 1 and step == KILL_AT:
            print(f"KILL t={time.time():.6f} step={step}", flush=True)
            os.kill(os.getpid(), 9)
        time.sleep(0.01)
    dist.barrier()
    print(f"DONE rank={rank} step={step} t={time.time():.6f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
