"""Checkpoint trees in the layouts real frameworks write (docs/checkpoints.md cites the sources),
each with an older run, a resumed run and a half-written newest checkpoint. Torch files are real
torch.save output from Debian's python3-torch. DCP directories are real torch 2.11 saves
(tests/data/checkpoint/dcp_real/, made by make_real_dcp.py: Debian's torch 1.13 has no
torch.distributed.checkpoint), copied into place; dcp_save_by_hand() can still write one from
Python (shards of torch.save blobs and a `.metadata` pickled by Python's own pickler from
dataclasses with torch 2.x's names and fields), used for the fuzz corpus and by nothing else.

build(row, root) -> (expected path relative to root, expected step, explicit format name).
"""
import dataclasses
import io
import json
import os
import pickle
import struct
import sys
import time
import types
from typing import Any, Dict, List, Optional

import torch

# --- DCP .metadata, pickled with the classes' real module paths --------------------------------
_META = types.ModuleType("torch.distributed.checkpoint.metadata")
_FS = types.ModuleType("torch.distributed.checkpoint.filesystem")


def _register(module, cls):
    cls.__module__ = module.__name__
    setattr(module, cls.__name__, cls)
    return cls


@dataclasses.dataclass
class ChunkStorageMetadata:
    offsets: Any
    sizes: Any


@dataclasses.dataclass
class TensorProperties:
    dtype: Any = torch.float32
    layout: Any = torch.strided
    requires_grad: bool = False
    memory_format: Any = torch.contiguous_format
    pin_memory: bool = False


@dataclasses.dataclass
class TensorStorageMetadata:
    properties: TensorProperties
    size: Any
    chunks: List[ChunkStorageMetadata]


@dataclasses.dataclass(frozen=True)
class MetadataIndex:
    fqn: str
    offset: Optional[Any] = None
    index: Optional[int] = dataclasses.field(hash=False, compare=False, default=None)


@dataclasses.dataclass
class Metadata:
    state_dict_metadata: Dict[str, Any]
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: Any = None
    version: Optional[str] = "1.0.0"


@dataclasses.dataclass
class _StorageInfo:
    relative_path: str
    offset: int
    length: int
    transform_descriptors: Any = None


for c in (ChunkStorageMetadata, TensorProperties, TensorStorageMetadata, MetadataIndex, Metadata):
    _register(_META, c)
_register(_FS, _StorageInfo)
sys.modules.setdefault("torch.distributed.checkpoint", types.ModuleType("torch.distributed.checkpoint"))
sys.modules["torch.distributed.checkpoint.metadata"] = _META
sys.modules["torch.distributed.checkpoint.filesystem"] = _FS


def torch_bytes(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def write(path, data, mtime=None, fraction=1.0):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data[: int(len(data) * fraction)])
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def save(path, obj, mtime=None, fraction=1.0):
    write(path, torch_bytes(obj), mtime, fraction)


REAL_DCP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "checkpoint",
                        "dcp_real")


def dcp_save(directory, _tensors=None, mtime=None, ranks=2, truncate=None, metadata=True):
    """A real DCP save (torch 2.11, `ranks` 1 or 2) copied to `directory`, files given `mtime`.
    truncate: a shard cut to half its length; metadata=False: the save died before .metadata."""
    src = os.path.join(REAL_DCP, "two_ranks" if ranks == 2 else "one_rank")
    os.makedirs(directory, exist_ok=True)
    for name in sorted(os.listdir(src)):
        if name == ".metadata" and not metadata:
            continue
        with open(os.path.join(src, name), "rb") as f:
            data = f.read()
        write(os.path.join(directory, name), data, mtime, 0.5 if name == truncate else 1.0)
    return directory


def dcp_save_by_hand(directory, tensors, mtime=None, ranks=2, truncate=None, metadata=True):
    """FileSystemWriter's layout: __<rank>_0.distcp per rank, then .metadata (via .metadata.tmp).
    truncate: a shard name cut to half its length (a restore that lost a part)."""
    os.makedirs(directory, exist_ok=True)
    storage, state = {}, {}
    blobs = {r: b"" for r in range(ranks)}
    for i, (fqn, t) in enumerate(sorted(tensors.items())):
        r = i % ranks
        name = f"__{r}_0.distcp"
        data = torch_bytes(t)
        storage[MetadataIndex(fqn, torch.Size([0] * t.dim()), 0)] = _StorageInfo(
            name, len(blobs[r]), len(data))
        blobs[r] += data
        state[fqn] = TensorStorageMetadata(TensorProperties(t.dtype), t.size(),
                                           [ChunkStorageMetadata(torch.Size([0] * t.dim()), t.size())])
    for r, blob in blobs.items():
        name = f"__{r}_0.distcp"
        write(os.path.join(directory, name), blob, mtime, 0.5 if name == truncate else 1.0)
    if metadata:
        meta = pickle.dumps(Metadata(state, None, storage))
        write(os.path.join(directory, ".metadata"), meta, mtime)
    return directory


def model(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return {"w": torch.randn(n, 8, generator=g), "b": torch.randn(8, generator=g)}


def safetensors(path, tensors, mtime=None, fraction=1.0):
    header, data = {}, b""
    for name, t in tensors.items():
        raw = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    write(path, struct.pack("<Q", len(h)) + h + data, mtime, fraction)


# --- one builder per row of the table ---------------------------------------------------------
T0 = time.time() - 30 * 86400


def t(i):  # an mtime i minutes after T0
    return T0 + 60 * i


def isaaclab_skrl(root):
    old = f"{root}/logs/skrl/Isaac-Ant-v0/2025-01-02_10-00-00_ppo_torch/checkpoints"
    new = f"{root}/logs/skrl/Isaac-Ant-v0/2025-01-03_09-00-00_ppo_torch/checkpoints"
    for i, s in enumerate((16000, 32000, 48000)):
        save(f"{old}/agent_{s}.pt", {"policy": model(seed=s)}, t(100 + i))  # synced: newer mtimes
    save(f"{old}/best_agent.pt", {"policy": model()}, t(103))
    save(f"{new}/agent_800.pt", {"policy": model(seed=1)}, t(10))
    save(f"{new}/agent_1600.pt", {"policy": model(seed=2)}, t(11), fraction=0.5)
    return "logs/skrl/Isaac-Ant-v0/2025-01-03_09-00-00_ppo_torch/checkpoints/agent_800.pt", 800, "skrl"


def plain_skrl(root):
    old = f"{root}/runs/25-01-02_10-00-00-123456_PPO/checkpoints"
    new = f"{root}/runs/25-01-03_09-00-00-000001_PPO/checkpoints"
    save(f"{old}/agent_48000.pt", {"policy": model()}, t(100))
    save(f"{new}/agent_800.pt", {"policy": model(seed=1)}, t(10))
    save(f"{new}/agent_1600.pt", {"policy": model(seed=2)}, t(11), fraction=0.5)
    return "runs/25-01-03_09-00-00-000001_PPO/checkpoints/agent_800.pt", 800, "skrl"


def skrl_separate(root):
    """Multi-agent, store_separately: <uid>_<module>_<t>.pt; the resumed run's first set is cut
    off after one module, so the old run's last complete set is the answer."""
    old = f"{root}/runs/25-01-02_10-00-00-000000_MAPPO/checkpoints"
    new = f"{root}/runs/25-01-03_09-00-00-000000_MAPPO/checkpoints"
    mods = ("agent_0_policy", "agent_0_value", "agent_1_policy", "agent_1_value")
    for s in (100, 200):
        for i, m in enumerate(mods):
            save(f"{old}/{m}_{s}.pt", model(seed=s + i), t(s // 100))
    for m in mods:
        save(f"{old}/best_{m}.pt", model(), t(3))
    save(f"{new}/agent_0_policy_100.pt", model(), t(10))
    save(f"{new}/agent_0_value_100.pt", model(), t(11), fraction=0.5)
    return "runs/25-01-02_10-00-00-000000_MAPPO/checkpoints/agent_0_policy_200.pt", 200, "skrl"


def skrl_jax(root):
    import numpy as np
    old = f"{root}/runs/25-01-02_10-00-00-000000_PPO/checkpoints"
    new = f"{root}/runs/25-01-03_09-00-00-000000_PPO/checkpoints"

    def pkl(path, seed, mtime, fraction=1.0):
        rng = np.random.default_rng(seed)
        modules = {"policy": {"params": {"w": rng.standard_normal((64, 8)).astype("float32")}},
                   "value": {"params": {"w": rng.standard_normal((64, 1)).astype("float32")}}}
        write(path, pickle.dumps(modules), mtime, fraction)

    pkl(f"{old}/agent_5000.pickle", 1, t(100))
    pkl(f"{new}/agent_100.pickle", 2, t(10))
    pkl(f"{new}/agent_200.pickle", 3, t(11), fraction=0.5)
    return "runs/25-01-03_09-00-00-000000_PPO/checkpoints/agent_100.pickle", 100, "skrl"


def rsl_rl(root):
    old = f"{root}/logs/rsl_rl/anymal_c_rough/2025-01-02_10-00-00"
    new = f"{root}/logs/rsl_rl/anymal_c_rough/2025-01-03_09-00-00_resumed"
    for s in (0, 500, 1000, 1500):
        save(f"{old}/model_{s}.pt", {"model_state_dict": model(seed=s), "iter": s}, t(100 + s // 500))
    save(f"{new}/model_1550.pt", {"model_state_dict": model(), "iter": 1550}, t(10))
    save(f"{new}/model_1600.pt", {"model_state_dict": model(), "iter": 1600}, t(11), fraction=0.5)
    return "logs/rsl_rl/anymal_c_rough/2025-01-03_09-00-00_resumed/model_1550.pt", 1550, "rsl_rl"


def rl_games(root):
    old = f"{root}/logs/rl_games/ant/2025-01-02_10-00-00/nn"
    new = f"{root}/logs/rl_games/ant/2025-01-03_09-00-00/nn"
    save(f"{old}/last_ant_ep_100_rew_12.5.pth", {"model": model()}, t(100))
    save(f"{old}/last_ant_ep_200_rew_20.1.pth", {"model": model()}, t(101))
    save(f"{old}/ant.pth", {"model": model()}, t(101))
    save(f"{new}/last_ant_ep_50_rew_-3.0.pth", {"model": model()}, t(10))
    save(f"{new}/ant.pth", {"model": model()}, t(10))
    save(f"{new}/last_ant_ep_100_rew_5.2.pth", {"model": model()}, t(11), fraction=0.5)
    return "logs/rl_games/ant/2025-01-03_09-00-00/nn/last_ant_ep_50_rew_-3.0.pth", 50, "rl_games"


def torchtitan(root):
    """Two dump folders; the second one's step counter started again (a new run)."""
    for s, m in ((1000, 1), (2000, 2)):
        dcp_save(f"{root}/outputs/llama3_a/checkpoint/step-{s}", model(seed=s), t(m))
    dcp_save(f"{root}/outputs/llama3_b/checkpoint/step-100", model(seed=3), t(50))
    dcp_save(f"{root}/outputs/llama3_b/checkpoint/step-200", model(seed=4), t(51),
             truncate="__1_0.distcp")
    return "outputs/llama3_b/checkpoint/step-100", 100, "dcp"


COSMOS_PARTS = ("model", "optim", "scheduler", "trainer")


def cosmos_rl_dcp(root):
    ck = f"{root}/cosmos/job/checkpoints"
    for it, m in ((1000, 1), (2000, 2)):
        for part in COSMOS_PARTS:
            dcp_save(f"{ck}/iter_{it:09d}/{part}", model(seed=it), t(m))
        write(f"{ck}/latest_checkpoint.txt", f"iter_{it:09d}\n".encode(), t(m))
    # The resumed job saves iter 3000: model/ is written, then it dies in optim/.
    dcp_save(f"{ck}/iter_000003000/model", model(seed=5), t(10))
    dcp_save(f"{ck}/iter_000003000/optim", model(seed=6), t(11), metadata=False)
    return "cosmos/job/checkpoints/iter_000002000", 2000, "cosmos-rl"


def cosmos_predict2(root):
    ck = f"{root}/imaginaire/job/checkpoints"
    for it, m in ((1000, 1), (2000, 2)):
        for part in COSMOS_PARTS:
            save(f"{ck}/{part}/iter_{it:09d}.pt", {part: model(seed=it)}, t(m))
            write(f"{ck}/latest_checkpoint.txt", f"iter_{it:09d}.pt\n".encode(), t(m))
    # Resumed job, iter 3000: model and optim written (the pointer already names it), scheduler
    # cut off, trainer never written.
    for part in ("model", "optim"):
        save(f"{ck}/{part}/iter_000003000.pt", {part: model()}, t(10))
        write(f"{ck}/latest_checkpoint.txt", b"iter_000003000.pt\n", t(10))
    save(f"{ck}/scheduler/iter_000003000.pt", {"s": model()}, t(11), fraction=0.5)
    return "imaginaire/job/checkpoints/model/iter_000002000.pt", 2000, "cosmos-predict2"


def cosmos_policy(root, ranks=2):
    def step(out, n, mtime, broken=False):
        d = f"{root}/outputs/sft/{out}/checkpoints/step_{n}/policy"
        write(f"{d}/cosmos_config", b"{}", mtime)
        for r in range(ranks):
            for kind in ("model", "optimizer", "scheduler", "extra_info"):
                half = broken and r == 1 and kind == "optimizer"
                save(f"{d}/{kind}_rank_{r}.pth", {kind: model(seed=n + r)}, mtime, 0.5 if half else 1)
            if not (broken and r == 1):
                write(f"{d}/.rank_{r}_complete", b"", mtime)

    step("20250101100000", 100, t(100))
    step("20250101100000", 200, t(101))
    step("20250102090000", 250, t(10))
    step("20250102090000", 300, t(11), broken=True)
    return "outputs/sft/20250102090000/checkpoints/step_250/policy", 250, "cosmos-rl"


def hf_files(d, n, mtime, trainer_state=True, cut=False):
    safetensors(f"{d}/model.safetensors", model(seed=n), mtime, 0.6 if cut else 1.0)
    write(f"{d}/config.json", b'{"model_type": "llama"}', mtime)
    save(f"{d}/optimizer.pt", {"state": model(seed=n)}, mtime)
    save(f"{d}/scheduler.pt", {"last_epoch": n}, mtime)
    save(f"{d}/rng_state.pth", {"python": 1}, mtime)
    save(f"{d}/training_args.bin", {"output_dir": "out"}, mtime)
    if trainer_state:
        write(f"{d}/trainer_state.json", json.dumps({"global_step": n}).encode(), mtime)


def hf_sharded_files(d, n, mtime):
    """save_pretrained with max_shard_size (transformers SAFE_WEIGHTS_INDEX_NAME): one
    model-0000<i>-of-00002.safetensors per tensor here, and model.safetensors.index.json whose
    weight_map names the shard of every tensor. Shards written by hand with safetensors() above:
    Debian has no python3-safetensors; the format is an 8-byte little-endian header length, the
    JSON header, then the data."""
    tensors = model(seed=n)
    weight_map, total = {}, 0
    for i, name in enumerate(sorted(tensors)):
        shard = f"model-{i + 1:05d}-of-{len(tensors):05d}.safetensors"
        safetensors(f"{d}/{shard}", {name: tensors[name]}, mtime)
        weight_map[name] = shard
        total += tensors[name].numel() * 4
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    write(f"{d}/model.safetensors.index.json", json.dumps(index).encode(), mtime)
    write(f"{d}/config.json", b'{"model_type": "llama"}', mtime)
    save(f"{d}/optimizer.pt", {"state": model(seed=n)}, mtime)
    save(f"{d}/scheduler.pt", {"last_epoch": n}, mtime)
    write(f"{d}/trainer_state.json", json.dumps({"global_step": n}).encode(), mtime)


def hf_trainer(root):
    for n, m in ((500, 1), (1000, 2)):
        hf_files(f"{root}/out/checkpoint-{n}", n, t(m))
    # Resumed run writes into the same output_dir; checkpoint-1500 dies in model.safetensors.
    hf_files(f"{root}/out/checkpoint-1500", 1500, t(10), trainer_state=False, cut=True)
    return "out/checkpoint-1000", 1000, "hf"


def hf_fsdp(root):
    def ck(n, mtime, broken=False):
        d = f"{root}/out/checkpoint-{n}"
        dcp_save(f"{d}/pytorch_model_fsdp_0", model(seed=n), mtime)
        dcp_save(f"{d}/optimizer_0", model(seed=n + 1), mtime, metadata=not broken)
        save(f"{d}/scheduler.pt", {"last_epoch": n}, mtime)
        save(f"{d}/rng_state_0.pth", {"python": 1}, mtime)
        if not broken:
            write(f"{d}/trainer_state.json", json.dumps({"global_step": n}).encode(), mtime)

    ck(500, t(1))
    ck(1000, t(2))
    ck(1500, t(10), broken=True)
    return "out/checkpoint-1000", 1000, "hf"


def lightning(root):
    def ckpt(path, epoch, step, mtime, fraction=1.0):
        save(path, {"epoch": epoch, "global_step": step, "pytorch-lightning_version": "2.4.0",
                    "state_dict": model(seed=step)}, mtime, fraction)

    v0 = f"{root}/lightning_logs/version_0/checkpoints"
    v1 = f"{root}/lightning_logs/version_1/checkpoints"
    ckpt(f"{v0}/epoch=4-step=500.ckpt", 4, 500, t(1))
    ckpt(f"{v0}/last.ckpt", 4, 500, t(1))
    ckpt(f"{v1}/epoch=7-step=800.ckpt", 7, 800, t(10))
    os.symlink("epoch=7-step=800.ckpt", f"{v1}/last.ckpt")  # save_last="link"
    ckpt(f"{v1}/epoch=9-step=1000.ckpt", 9, 1000, t(11), fraction=0.5)
    return "lightning_logs/version_1/checkpoints/last.ckpt", 800, "lightning"


def deepspeed(root):
    d = f"{root}/ds"

    def tag(n, mtime, broken=False):
        save(f"{d}/global_step{n}/mp_rank_00_model_states.pt", {"module": model(seed=n)}, mtime)
        for r in range(2):
            save(f"{d}/global_step{n}/zero_pp_rank_{r}_mp_rank_00_optim_states.pt",
                 {"optimizer_state_dict": model(seed=r)}, mtime, 0.5 if broken and r == 1 else 1)
        if not broken:
            write(f"{d}/latest", f"global_step{n}".encode(), mtime)

    tag(100, t(1))
    tag(200, t(2))
    tag(300, t(10), broken=True)  # resumed job dies while rank 1 writes; `latest` not moved
    return "ds/global_step200", 200, "deepspeed"


def megatron_files(d, it, mtime, metadata_json=True, truncate=None):
    """Megatron-Core torch_dist (megatron/core/dist_checkpointing/serialization.py save): the
    DCP shards and .metadata, common.pt (save_common, torch.save), then metadata.json."""
    dcp_save(d, None, mtime, truncate=truncate)
    save(f"{d}/common.pt", {"iteration": it, "args": {"tp": 1}}, mtime)
    if metadata_json:
        write(f"{d}/metadata.json", json.dumps({"sharded_backend": "torch_dist",
                                                "sharded_backend_version": 1,
                                                "common_backend": "torch",
                                                "common_backend_version": 1}).encode(), mtime)


def megatron_torch_dist(root):
    old = f"{root}/megatron/gpt_old"
    megatron_files(f"{old}/iter_0000900", 900, t(1))
    write(f"{old}/latest_checkpointed_iteration.txt", b"900", t(1))
    d = f"{root}/megatron/gpt"
    for it, m in ((100, 10), (200, 11)):
        megatron_files(f"{d}/iter_{it:07d}", it, t(m))
        write(f"{d}/latest_checkpointed_iteration.txt", str(it).encode(), t(m))
    # The resumed job dies before metadata.json (written last); the tracker still names 200.
    megatron_files(f"{d}/iter_0000300", 300, t(12), metadata_json=False)
    return "megatron/gpt/iter_0000200", 200, "megatron"


def megatron_legacy(root):
    """megatron/training/checkpointing.py get_checkpoint_name: iter_<07d>/mp_rank_<tp:02d>/
    model_optim_rng.pt; the tracker written by rank 0 after every rank saved."""
    def it(d, n, mtime, ranks=2, cut=False):
        for r in range(ranks):
            save(f"{d}/iter_{n:07d}/mp_rank_{r:02d}/model_optim_rng.pt",
                 {"iteration": n, "model": model(seed=n + r)}, mtime, 0.5 if cut and r == 1 else 1)

    old = f"{root}/megatron/old"
    it(old, 5000, t(1))
    d = f"{root}/megatron/gpt"
    it(d, 100, t(10))
    it(d, 200, t(11))
    write(f"{d}/latest_checkpointed_iteration.txt", b"200", t(11))
    it(d, 300, t(12), ranks=1)  # the resumed job died before rank 1 wrote its directory
    return "megatron/gpt/iter_0000200", 200, "megatron"


def nemo2(root):
    """NeMo 2.0 (nemo/lightning/pytorch/callbacks/model_checkpoint.py): <name>--val_loss=..-
    step=N-consumed_samples=M.0/{weights,context}/ under <exp>/<%Y-%m-%d_%H-%M-%S>/checkpoints;
    `<dir>-unfinished` exists while a save is in progress."""
    def ck(version, step, mtime, unfinished=False):
        ck_dir = f"{root}/nemo_experiments/gpt/{version}/checkpoints"
        name = f"gpt--val_loss=2.00-step={step}-consumed_samples={step * 8}.0"
        megatron_files(f"{ck_dir}/{name}/weights", step, mtime, metadata_json=not unfinished)
        write(f"{ck_dir}/{name}/context/io.json", b"{}", mtime)
        if unfinished:
            write(f"{ck_dir}/{name}-unfinished", b"", mtime)
        return f"nemo_experiments/gpt/{version}/checkpoints/{name}"

    ck("2025-01-02_10-00-00", 900, t(100))  # older run, synced later: newer mtime
    ck("2025-01-03_09-00-00", 100, t(10))
    want = ck("2025-01-03_09-00-00", 150, t(11))
    ck("2025-01-03_09-00-00", 200, t(12), unfinished=True)
    return want, 150, "nemo"


def torchtune(root):
    """torchtune FullModelHFCheckpointer.save_checkpoint: <output_dir>/epoch_<N>/ with
    model-0000<i>-of-0000<n>.safetensors and model.safetensors.index.json."""
    hf_like = lambda d, n, mtime: hf_sharded_files(d, n, mtime)
    hf_like(f"{root}/tune_old/epoch_7", 7, t(1))
    out = f"{root}/tune_out"
    hf_like(f"{out}/epoch_0", 0, t(10))
    hf_like(f"{out}/epoch_1", 1, t(11))
    hf_like(f"{out}/epoch_2", 2, t(12))
    shard = f"{out}/epoch_2/model-00002-of-00002.safetensors"
    with open(shard, "rb") as f:
        data = f.read()
    write(shard, data, t(12), fraction=0.5)  # cut off mid-shard
    return "tune_out/epoch_1", 1, "torchtune"


def orbax(root):
    """Orbax CheckpointManager: <dir>/<step>/_CHECKPOINT_METADATA + items; a save in progress is
    <step>.orbax-checkpoint-tmp-<n> (renamed when complete)."""
    def step(d, name, mtime):
        write(f"{d}/{name}/_CHECKPOINT_METADATA",
              json.dumps({"item_handlers": {"default": "PyTreeCheckpointHandler"},
                          "init_timestamp_nsecs": int(mtime * 1e9)}).encode(), mtime)
        write(f"{d}/{name}/default/_METADATA", json.dumps({"tree_metadata": {}}).encode(), mtime)
        write(f"{d}/{name}/default/manifest.ocdbt", b"\x00" * 64, mtime)

    step(f"{root}/orbax/old", "9000", t(1))
    d = f"{root}/orbax/run"
    step(d, "1000", t(10))
    step(d, "2000", t(11))
    step(d, "3000.orbax-checkpoint-tmp-0", t(12))
    return "orbax/run/2000", 2000, "orbax"


def sb3_zip(path, steps, mtime, fraction=1.0):
    """What BaseAlgorithm.save writes (save_util.save_to_zip_file): a deflated zip."""
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("data", json.dumps({"num_timesteps": steps}))
        z.writestr("policy.pth", torch_bytes(model(seed=steps)))
        z.writestr("pytorch_variables.pth", torch_bytes({}))
        z.writestr("_stable_baselines3_version", "2.3.0")
    write(path, buf.getvalue(), mtime, fraction)


def sb3(root):
    sb3_zip(f"{root}/sb3/old/rl_model_50000_steps.zip", 50000, t(1))
    d = f"{root}/sb3/logs"
    sb3_zip(f"{d}/rl_model_1000_steps.zip", 1000, t(10))
    sb3_zip(f"{d}/rl_model_2000_steps.zip", 2000, t(11))
    sb3_zip(f"{d}/rl_model_3000_steps.zip", 3000, t(12), fraction=0.5)
    return "sb3/logs/rl_model_2000_steps.zip", 2000, "sb3"


# Rows whose runs nothing but mtimes orders: with every mtime made equal they are ambiguous.
AMBIGUOUS_WHEN_EQUALIZED = {"torchtitan_dcp", "lightning", "megatron_torch_dist",
                            "megatron_legacy", "torchtune", "orbax", "sb3"}

ROWS = {
    "isaaclab_skrl": isaaclab_skrl,
    "plain_skrl": plain_skrl,
    "skrl_store_separately_multi_agent": skrl_separate,
    "skrl_jax": skrl_jax,
    "isaaclab_rsl_rl": rsl_rl,
    "isaaclab_rl_games": rl_games,
    "torchtitan_dcp": torchtitan,
    "cosmos_rl_dcp": cosmos_rl_dcp,
    "cosmos_predict2": cosmos_predict2,
    "cosmos_rl_policy": cosmos_policy,
    "hf_trainer": hf_trainer,
    "hf_accelerate_fsdp": hf_fsdp,
    "lightning": lightning,
    "deepspeed": deepspeed,
    "megatron_torch_dist": megatron_torch_dist,
    "megatron_legacy": megatron_legacy,
    "nemo2": nemo2,
    "torchtune": torchtune,
    "orbax": orbax,
    "sb3": sb3,
}


def build(row, root):
    return ROWS[row](str(root))


if __name__ == "__main__":  # python3 ckpt_layouts.py ROW DIR: build one tree, print the answer
    print(json.dumps(build(sys.argv[1], sys.argv[2])))
