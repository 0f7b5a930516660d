"""The DDP job of bench/standby_restart.sh: the same script under every launcher.

Prints `READY rank=R rc=N t0=T ready=T` once the rank is usable (process group up and a first
all-reduce done: NCCL on GPUs, gloo on CPU); t0 is when this file started running (for a warm
standby: when the standby was handed the rank). On the first attempt the last rank (rank 1 of 2; rank 0 of 1) SIGKILLs itself
(`KILL t=...`) at the first step after OUT/go exists (the driver creates it once every launcher
is in the same state); the restarted attempt trains a few steps and ends.
"""
import os
import sys
import time

T0 = time.time()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def main():
    out = sys.argv[1]
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    rc = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    gpu = torch.cuda.is_available()
    if gpu:
        torch.cuda.set_device(local)
    dev = torch.device("cuda", local) if gpu else torch.device("cpu")
    dist.init_process_group("nccl" if gpu else "gloo")
    t = torch.ones(1, device=dev)
    dist.all_reduce(t)
    if gpu:
        torch.cuda.synchronize()
    print(f"READY rank={rank} rc={rc} t0={T0:.6f} ready={time.time():.6f}", flush=True)
    net = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 256))
    model = DDP(net.to(dev), device_ids=[local] if gpu else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = 0
    while True:
        loss = model(torch.randn(64, 256, device=dev)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if rc == 0 and rank == world - 1 and os.path.exists(os.path.join(out, "go")):
            print(f"KILL t={time.time():.6f} step={step}", flush=True)
            os.kill(os.getpid(), 9)
        if rc > 0 and step >= 20:
            break
        time.sleep(0.02)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
