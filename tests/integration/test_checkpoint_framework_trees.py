"""Checkpoint trees written as each framework's saving code writes them (issue 33's classes),
with the real binary (real torch.save files; the source file is cited in each test): `trainvisor
checkpoint latest` must pick the checkpoint the framework itself resumes from, with --format auto
and with the framework's own format name, and say why it skips a cut-off one."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import ckpt_layouts as L  # noqa: E402
import tvtest  # noqa: E402
from test_checkpoint_frameworks import equalize, latest  # noqa: E402


def picks(root, rel, step, fmt):
    for f in ("auto", fmt):
        j, log = latest(root, f)
        assert (j["path"], j["step"], j["format"]) == (str(root / rel), step, fmt), (f, j, log)
    return log


def test_verl_rank_shards_are_one_checkpoint(tmp_path):
    """verl/utils/checkpoint/fsdp_checkpoint_manager.py save_checkpoint (one shard per rank and
    kind), verl/trainer/ppo/ray_trainer.py _save_checkpoint (global_step_<N>/actor, then
    latest_checkpointed_iteration.txt)."""
    exp = tmp_path / "checkpoints/gsm8k/qwen2_grpo"

    def save(step, ranks, mtime):
        for r in ranks:
            for kind in ("model", "optim", "extra_state"):
                L.save(f"{exp}/global_step_{step}/actor/{kind}_world_size_2_rank_{r}.pt",
                       {"rank": r, "kind": kind}, mtime)
        L.write(f"{exp}/global_step_{step}/actor/fsdp_config.json",
                b'{"FSDP_version": 1, "world_size": 2}', mtime)

    save(100, (0, 1), L.t(1))
    save(150, (0, 1), L.t(2))
    (exp / "latest_checkpointed_iteration.txt").write_text("150")
    save(200, (0,), L.t(3))  # rank 1 died before its shards
    log = picks(tmp_path, "checkpoints/gsm8k/qwen2_grpo/global_step_150", 150, "verl")
    assert "_world_size_2_rank_1.pt" in log and "every rank writes its own shard" in log
    assert "--checkpoint-experiment" not in log


def test_accelerate_save_state_in_checkpoint_dash_n(tmp_path):
    """accelerate src/accelerate/accelerator.py save_state, src/accelerate/checkpointing.py
    save_accelerator_state (random_states_<p>.pkl last); Diffusers
    examples/text_to_image/train_text_to_image.py saves it as output_dir/checkpoint-<N>."""
    out = tmp_path / "sd-pokemon-model"
    for n, m in ((500, 1), (1000, 2), (1500, 3)):
        d = f"{out}/checkpoint-{n}"
        L.safetensors(f"{d}/unet/diffusion_pytorch_model.safetensors", L.model(seed=n), L.t(m))
        L.save(f"{d}/optimizer.bin", {"state": {}}, L.t(m))
        L.save(f"{d}/scheduler.bin", {"last_epoch": n}, L.t(m))
        if n != 1500:  # 1500: stopped before the random states
            L.save(f"{d}/random_states_0.pkl", {"step": n}, L.t(m))
    log = picks(tmp_path, "sd-pokemon-model/checkpoint-1000", 1000, "hf")
    assert "no random_states_0.pkl" in log and "trainer_state.json" not in log


def test_ms_swift_runs_order_by_their_stamp_with_equal_mtimes(tmp_path):
    """ms-swift swift/utils/utils.py add_version_to_work_dir: output/v<N>-%Y%m%d-%H%M%S; HF
    Trainer checkpoint-<N> inside. Every mtime equal (an S3 restore)."""
    L.hf_files(f"{tmp_path}/output/v0-20250101-100000/checkpoint-900", 900, L.t(1))
    L.hf_files(f"{tmp_path}/output/v1-20250102-090000/checkpoint-100", 100, L.t(1))
    equalize(tmp_path)
    j, _ = latest(tmp_path)
    assert j["path"] == str(tmp_path / "output/v1-20250102-090000/checkpoint-100"), j
    assert j["run"] == "v1-20250102-090000"


def test_rl_games_current_final_saves(tmp_path):
    """rl_games 262cf20 rl_games/common/a2c_common.py train: last_<name>_frame_<f>_rew__<r>_
    (max_frames) and last_<name>_custom_stop_ep_<e> (stop_fn) after the periodic saves."""
    nn = tmp_path / "logs/rl_games/ant/2025-01-03_09-00-00/nn"
    L.save(f"{nn}/last_ant_ep_100_rew_5.0.pth", {"epoch": 100}, L.t(1))
    L.save(f"{nn}/ant.pth", {"epoch": 100}, L.t(1))
    L.save(f"{nn}/last_ant_frame_3276800_rew__5.5_.pth", {"epoch": 120}, L.t(2))
    picks(tmp_path, "logs/rl_games/ant/2025-01-03_09-00-00/nn/last_ant_frame_3276800_rew__5.5_.pth",
          100, "rl_games")
    stop = tmp_path / "logs/rl_games/ant/2025-01-04_09-00-00/nn"
    L.save(f"{stop}/last_ant_ep_50_rew_1.0.pth", {"epoch": 50}, L.t(3))
    L.save(f"{stop}/last_ant_custom_stop_ep_60.pth", {"epoch": 60}, L.t(4), fraction=0.5)
    log = picks(tmp_path, "logs/rl_games/ant/2025-01-04_09-00-00/nn/last_ant_ep_50_rew_1.0.pth",
                50, "rl_games")
    assert "last_ant_custom_stop_ep_60.pth" in log


def test_timm_pth_tar(tmp_path):
    """pytorch-image-models timm/utils/checkpoint_saver.py CheckpointSaver.save_checkpoint
    (tmp.pth.tar renamed to last.pth.tar, then checkpoint-<E>.pth.tar, model_best.pth.tar);
    train.py: output/train/%Y%m%d-%H%M%S-<model>-<img_size>."""
    run = tmp_path / "output/train/20250102-100000-resnet50-224"
    for e in (8, 9):
        L.save(f"{run}/checkpoint-{e}.pth.tar", {"epoch": e, "version": 2}, L.t(e))
    L.save(f"{run}/model_best.pth.tar", {"epoch": 9, "version": 2}, L.t(9))
    L.save(f"{run}/last.pth.tar", {"epoch": 9, "version": 2, "arch": "resnet50"}, L.t(9))
    picks(tmp_path, "output/train/20250102-100000-resnet50-224/last.pth.tar", 9, "timm")
    j, _ = latest(tmp_path, "timm", "--resume", "best")
    assert j["path"] == str(run / "model_best.pth.tar")
    # A copy cut off (timm itself renames): its epoch cannot be read, the epoch's own file is next.
    L.save(f"{run}/last.pth.tar", {"epoch": 10, "version": 2}, L.t(10), fraction=0.4)
    picks(tmp_path, "output/train/20250102-100000-resnet50-224/checkpoint-9.pth.tar", 9, "timm")


def test_fairseq_epoch_and_update_names(tmp_path):
    """fairseq fairseq/checkpoint_utils.py save_checkpoint: checkpoint<E>.pt,
    checkpoint_<E>_<U>.pt, then copies to checkpoint_best.pt and checkpoint_last.pt."""
    d = tmp_path / "checkpoints/wmt16_en_de"
    L.save(f"{d}/checkpoint_1_1000.pt", {"num_updates": 1000}, L.t(1))
    L.save(f"{d}/checkpoint1.pt", {"num_updates": 1200}, L.t(2))
    L.save(f"{d}/checkpoint_2_2000.pt", {"num_updates": 2000}, L.t(3))
    L.save(f"{d}/checkpoint_best.pt", {"num_updates": 2000}, L.t(3))
    L.save(f"{d}/checkpoint_last.pt", {"num_updates": 2000}, L.t(3))
    picks(tmp_path, "checkpoints/wmt16_en_de/checkpoint_last.pt", 2000, "fairseq")
    L.save(f"{d}/checkpoint_last.pt", {"num_updates": 2000}, L.t(4), fraction=0.5)
    log = picks(tmp_path, "checkpoints/wmt16_en_de/checkpoint_2_2000.pt", 2000, "fairseq")
    assert "checkpoint_last.pt" in log and "module files missing" not in log


def test_lerobot_last_link_is_not_a_link_loop(tmp_path):
    """LeRobot src/lerobot/common/train_utils.py update_last_checkpoint: checkpoints/last, a
    relative link to the newest checkpoints/<step:06d>."""
    ck = tmp_path / "outputs/train/act_aloha/checkpoints"
    for step in ("000100", "000200"):
        L.safetensors(f"{ck}/{step}/pretrained_model/model.safetensors", L.model(), L.t(1))
    os.symlink("000200", ck / "last")
    r = subprocess.run([str(tvtest.BIN), "checkpoint", "latest", "--dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    assert "link loop" not in r.stderr and "already visited" not in r.stderr, r.stderr
