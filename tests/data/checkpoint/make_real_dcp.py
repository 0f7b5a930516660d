"""Writes real PyTorch Distributed Checkpoint saves (torch.distributed.checkpoint.save, default
FileSystemWriter). Debian 12's python3-torch (1.13) has no torch.distributed.checkpoint, so the
saves under tests/data/checkpoint/dcp_real/ were made once with this script and torch 2.11 on the
project's GPU machine, and committed.

  python3 make_real_dcp.py OUT_DIR

OUT_DIR/two_ranks: a 2-process (gloo) save, one shard file per rank (what torchtitan writes into
  each checkpoint/step-<N>): __0_0.distcp, __1_0.distcp, .metadata.
OUT_DIR/one_rank: a single-process save (accelerate's pytorch_model_fsdp_0, a cosmos part).
"""
import os, sys, torch, torch.distributed as dist, torch.distributed.checkpoint as dcp, torch.multiprocessing as mp


def state(rank, world):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    o = torch.optim.Adam(m.parameters())
    m(torch.randn(2, 16)).sum().backward()
    o.step()
    sd = {f"model.{k}": v for k, v in m.state_dict().items()}
    mine = {k: sd[k] for i, k in enumerate(sorted(sd)) if i % world == rank}
    mine["step"] = torch.tensor(10)
    return mine


def w(rank, world, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    dcp.save({f"r{rank}": state(rank, world)}, checkpoint_id=os.path.join(out, "two_ranks"))
    dist.destroy_process_group()


if __name__ == "__main__":
    out = sys.argv[1]
    mp.spawn(w, args=(2, out), nprocs=2)
    dcp.save(state(0, 1), checkpoint_id=os.path.join(out, "one_rank"))
    print(torch.__version__)
