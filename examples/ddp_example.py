#!/usr/bin/python3
"""A small PyTorch DDP job (gloo on CPU, torch >= 1.13) for smoke-testing a launcher.

Reads the torchrun worker environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
through init_method="env://", trains a tiny regression model on synthetic data for a few seconds
(each rank its own shard), all-reduces, and on rank 0 prints the final loss and whether every
rank ends with identical parameters. Exits 0 on success, 1 when the ranks disagree or the loss
did not go down.

    trainvisor run --nproc-per-node 2 examples/ddp_example.py [--seconds S] [--steps N]
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0, help="train at most this long")
    p.add_argument("--steps", type=int, default=2000, help="train at most this many steps")
    p.add_argument("--batch", type=int, default=64)
    return p.parse_args()


def synthetic_batch(gen, true_w, batch):
    x = torch.randn(batch, true_w.numel(), generator=gen)
    y = x @ true_w + 0.01 * torch.randn(batch, 1, generator=gen)
    return x, y


def train(model, rank, args):
    """Trains until the time or step budget runs out; every rank stops at the same step."""
    true_w = torch.arange(1.0, 9.0).reshape(8, 1)
    gen = torch.Generator().manual_seed(1000 + rank)  # each rank its own data shard
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = torch.nn.MSELoss()
    deadline = time.monotonic() + args.seconds
    first = loss = None
    for step in range(args.steps):
        x, y = synthetic_batch(gen, true_w, args.batch)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()  # DDP all-reduces the gradients here
        opt.step()
        first = loss.item() if first is None else first
        if step % 50 == 0 and agree_to_stop(time.monotonic() > deadline):
            break
    return first, loss.item(), step + 1


def agree_to_stop(mine):
    """All ranks stop together: stop when any rank's clock ran out."""
    flag = torch.tensor([1.0 if mine else 0.0])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return flag.item() > 0


def mean_loss(loss):
    t = torch.tensor([loss])
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def parameters_identical(model):
    """Each rank's flattened parameters equal rank 0's (broadcast and compare)."""
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    ref = flat.clone()
    dist.broadcast(ref, src=0)
    same = torch.tensor([1.0 if torch.equal(flat, ref) else 0.0])
    dist.all_reduce(same, op=dist.ReduceOp.MIN)
    return same.item() == 1.0


def main():
    args = parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # same initial weights; DDP also broadcasts rank 0's at construction
    model = DDP(torch.nn.Linear(8, 1))
    first, last, steps = train(model, rank, args)
    avg = mean_loss(last)
    same = parameters_identical(model)
    ok = same and last < first
    if rank == 0:
        print(f"ddp_example: world_size={world} steps={steps} first_loss={first:.4f} "
              f"final_loss={avg:.6f} params_identical={same} result={'OK' if ok else 'FAIL'}",
              flush=True)
    dist.barrier()  # leave together, every rank's result known
    return 0 if ok else 1


def leave(code):
    """Exits without tearing gloo down: torch 1.13's ProcessGroupGloo destructor was seen to hang
    after result=OK (2 of 8 runs on a busy machine), and nothing is left to release once every
    rank has passed the barrier. os._exit skips the destructors; flush what was printed first."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    leave(main())
