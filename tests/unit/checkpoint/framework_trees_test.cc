// Issue 33's classes, each tree built as the framework's saving code writes it (the file is cited
// in each test): verl's per-rank shards, accelerate's save_state under Trainer's directory name,
// rl_games' current final-save names, timm's .pth.tar files, fairseq's epoch/update names.
#include <gtest/gtest.h>

#include <algorithm>

#include "checkpoint/resume.h"
#include "resume_helpers.h"

namespace tv {
namespace {

using testing::FakeCheckpointFs;
using testing::kRoot;
using testing::kS;
using testing::latest;
using testing::make_zip;
using testing::path_of;

// verl verl/trainer/ppo/ray_trainer.py _save_checkpoint: <default_local_dir>/global_step_<N>/
// actor/ (and critic/), each rank writing {model,optim,extra_state}_world_size_<W>_rank_<R>.pt
// (verl/utils/checkpoint/fsdp_checkpoint_manager.py save_checkpoint), then
// latest_checkpointed_iteration.txt beside the global_step_ directories.
void verl_save(FakeCheckpointFs& fs, const std::string& exp, int step, int ranks_done) {
  const std::string d = exp + "/global_step_" + std::to_string(step);
  fs.add_file(d + "/actor/fsdp_config.json", R"({"FSDP_version": 1, "world_size": 2})");
  for (int r = 0; r < ranks_done; ++r)
    for (const char* kind : {"model", "optim", "extra_state"})
      fs.add_file(d + "/actor/" + kind + "_world_size_2_rank_" + std::to_string(r) + ".pt",
                  make_zip());
  fs.add_file(d + "/data.pt", make_zip());
}

TEST(Verl, TheGlobalStepDirectoryIsOneCheckpointOfEveryRanksShards) {
  FakeCheckpointFs fs;
  const std::string exp = kRoot + "/checkpoints/gsm8k/qwen_grpo";
  verl_save(fs, exp, 100, 2);
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), exp + "/global_step_100");  // not extra_state_world_size_2_rank_1.pt
  EXPECT_EQ(c->format, "verl");
  EXPECT_EQ(c->step, 100);
  EXPECT_TRUE(c->directory);
  EXPECT_EQ(c->files.size(), 7u);  // 3 kinds x 2 ranks + data.pt
  fs.add_file(exp + "/latest_checkpointed_iteration.txt", "100");
  verl_save(fs, exp, 150, 2);
  verl_save(fs, exp, 200, 1);                                        // rank 1 cut off
  EXPECT_EQ(path_of(latest(fs, "verl")), exp + "/global_step_100");  // the tracker says 100
  fs.add_file(exp + "/latest_checkpointed_iteration.txt", "150");
  EXPECT_EQ(path_of(latest(fs)), exp + "/global_step_150");
  fs.add_file(exp + "/latest_checkpointed_iteration.txt", "200");  // and rank 1's shards missing
  EXPECT_EQ(path_of(latest(fs)), exp + "/global_step_150");
  // One experiment: no --checkpoint-experiment suggested (it was once read as skrl runs).
  const Selection s = lookup_checkpoint(ResumeRequest{kRoot, "auto", Pick::kLatest}, fs);
  EXPECT_EQ(s.none, Selection::None::kFound) << s.why_none;
}

// accelerate src/accelerate/accelerator.py save_state(output_dir) writes model.safetensors (or
// pytorch_model.bin), optimizer.bin, scheduler.bin, then random_states_<p>.pkl
// (src/accelerate/checkpointing.py save_accelerator_state); Diffusers' examples call it with
// output_dir/checkpoint-<N> (examples/text_to_image/train_text_to_image.py), Trainer's name.
TEST(Accelerate, SaveStateInACheckpointDashDirectoryIsAccelerates) {
  FakeCheckpointFs fs;
  const std::string out = kRoot + "/sd-model";
  for (int n : {500, 1000, 1500}) {
    const std::string d = out + "/checkpoint-" + std::to_string(n);
    fs.add_file(d + "/unet/diffusion_pytorch_model.bin", make_zip());
    fs.add_file(d + "/optimizer.bin", make_zip());
    fs.add_file(d + "/scheduler.bin", make_zip());
    if (n != 1500) fs.add_file(d + "/random_states_0.pkl", make_zip());  // 1500: cut off
  }
  const Selection s = lookup_checkpoint(ResumeRequest{kRoot, "auto", Pick::kLatest}, fs);
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_EQ(s.checkpoint->path, out + "/checkpoint-1000");
  EXPECT_EQ(s.checkpoint->step, 1000);
  EXPECT_EQ(path_of(latest(fs, "accelerate")), out + "/checkpoint-1000");
  // A Trainer save beside it is still judged by trainer_state.json.
  fs.add_file(out + "/checkpoint-2000/training_args.bin", make_zip());
  fs.add_file(out + "/checkpoint-2000/random_states_0.pkl", make_zip());
  EXPECT_EQ(path_of(latest(fs)), out + "/checkpoint-1000");
}

// An HF save's parts are its own directories, found from it (not by a path prefix over the whole
// tree): the files of the directories below it are parts (unet/ema/ here), a sibling whose name extends its name
// is not, from any root above it.
TEST(Accelerate, ASavesPartsAreItsOwnDirectoriesFromAnyRootAboveIt) {
  FakeCheckpointFs fs;
  const std::string out = kRoot + "/sd-model";
  for (const char* name : {"checkpoint-500", "checkpoint-5000"}) {
    const std::string d = out + "/" + name;
    fs.add_file(d + "/unet/ema/diffusion_pytorch_model.bin", make_zip());
    fs.add_file(d + "/optimizer.bin", make_zip());
  }
  fs.add_file(out + "/checkpoint-500/random_states_0.pkl", make_zip());  // 5000: cut off
  for (const std::string& root : {kRoot, out}) {
    const Selection s = lookup_checkpoint(ResumeRequest{root, "accelerate", Pick::kLatest}, fs);
    ASSERT_TRUE(s.checkpoint) << root << ": " << s.why_none;
    EXPECT_EQ(s.checkpoint->step, 500) << root;
    const auto& files = s.checkpoint->files;
    EXPECT_EQ(files.size(), 3u) << root;
    for (const auto& f : files) EXPECT_EQ(f.find("checkpoint-5000"), std::string::npos) << f;
    EXPECT_TRUE(std::any_of(files.begin(), files.end(), [](const std::string& f) {
      return f.ends_with("/unet/ema/diffusion_pytorch_model.bin");
    })) << root;
  }
}

// rl_games 262cf20 rl_games/common/a2c_common.py train: periodic last_<name>_ep_<e>_rew_<r>,
// and at the end last_<name>_frame_<f>_rew__<r>_ (max_frames) or last_<name>_custom_stop_ep_<e>
// (stop_fn), written after the last epoch's periodic save.
TEST(RlGames, TheCurrentFinalSaveNamesAreTheNewest) {
  FakeCheckpointFs fs;
  const std::string nn = kRoot + "/logs/rl_games/ant/2025-01-03_09-00-00/nn";
  fs.add_file(nn + "/last_ant_ep_100_rew_5.0.pth", make_zip());
  fs.add_file(nn + "/last_ant_ep_200_rew_6.0.pth", make_zip());
  fs.add_file(nn + "/ant.pth", make_zip());
  fs.add_file(nn + "/last_ant_frame_6553600_rew__6.5_.pth", make_zip());
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), nn + "/last_ant_frame_6553600_rew__6.5_.pth");
  EXPECT_EQ(c->step, 200);  // the epoch it was written at
  fs.add_file(nn + "/last_ant_frame_6553600_rew__6.5_.pth", make_zip().substr(0, 30));
  EXPECT_EQ(path_of(latest(fs)), nn + "/last_ant_ep_200_rew_6.0.pth");

  const std::string stop = kRoot + "/logs/rl_games/ant/2025-01-04_09-00-00/nn";
  fs.add_file(stop + "/last_ant_ep_300_rew_7.0.pth", make_zip());
  fs.add_file(stop + "/last_ant_custom_stop_ep_300.pth", make_zip());
  c = latest(fs);
  EXPECT_EQ(path_of(c), stop + "/last_ant_custom_stop_ep_300.pth");
  EXPECT_EQ(c->step, 300);
  // max_epochs: last_<name>_ep_<e>_rew__<r>_ after the periodic save of that epoch.
  fs.add_file(stop + "/last_ant_ep_400_rew_8.0.pth", make_zip());
  fs.add_file(stop + "/last_ant_ep_400_rew__8.0_.pth", make_zip());
  EXPECT_EQ(path_of(latest(fs)), stop + "/last_ant_ep_400_rew__8.0_.pth");
}

// A torch.save zip of {"epoch": e, ...}, as timm's CheckpointSaver._save writes.
std::string epoch_zip(std::int64_t epoch) {
  testing::PickleWriter w;
  w.empty_dict().mark().str("epoch").integer(epoch).str("version").integer(2).setitems();
  return make_zip(w.stop());
}

// pytorch-image-models timm/utils/checkpoint_saver.py CheckpointSaver.save_checkpoint: tmp.pth.tar
// renamed to last.pth.tar, then checkpoint-<E>.pth.tar (a hard link of it, kept for the top-N
// metrics) and model_best.pth.tar; save_recovery: recovery-<E>-<B>.pth.tar; train.py names the
// run output/train/%Y%m%d-%H%M%S-<model>-<size>.
TEST(Timm, PthTarSavesAreCheckpoints) {
  FakeCheckpointFs fs;
  const std::string run = kRoot + "/output/train/20250102-100000-resnet50-224";
  fs.add_file(run + "/checkpoint-7.pth.tar", epoch_zip(7));
  fs.add_file(run + "/checkpoint-9.pth.tar", epoch_zip(9));  // top-N by metric: not always 12
  fs.add_file(run + "/model_best.pth.tar", epoch_zip(9));
  fs.add_file(run + "/recovery-12-500.pth.tar", epoch_zip(12));
  fs.add_file(run + "/last.pth.tar", epoch_zip(11));
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), run + "/recovery-12-500.pth.tar");
  fs.remove(run + "/recovery-12-500.pth.tar");
  c = latest(fs);
  EXPECT_EQ(path_of(c), run + "/last.pth.tar");
  EXPECT_EQ(c->step, 11);
  EXPECT_EQ(c->format, "timm");
  EXPECT_EQ(path_of(latest(fs, "timm", Pick::kBest)), run + "/model_best.pth.tar");
  fs.add_file(run + "/tmp.pth.tar", epoch_zip(12).substr(0, 20));  // a save in progress
  EXPECT_EQ(path_of(latest(fs)), run + "/last.pth.tar");
}

// fairseq fairseq/checkpoint_utils.py save_checkpoint: checkpoint<E>.pt at the end of epoch E,
// checkpoint_<E>_<U>.pt every --save-interval-updates, then copies to checkpoint_best.pt and
// checkpoint_last.pt (what --restore-file resumes by default).
TEST(Fairseq, EpochAndUpdateNamesInOrderAndTheLastCopy) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/checkpoints/transformer_wmt";
  fs.add_file(d + "/checkpoint_1_1000.pt", make_zip());
  fs.add_file(d + "/checkpoint1.pt", make_zip());  // end of epoch 1, after update 1000
  fs.add_file(d + "/checkpoint_2_1500.pt", make_zip());
  fs.add_file(d + "/checkpoint_2_2000.pt", make_zip());
  fs.add_file(d + "/checkpoint_best.pt", make_zip());
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), d + "/checkpoint_2_2000.pt");  // not skrl, not incomplete
  EXPECT_EQ(c->format, "fairseq");
  EXPECT_EQ(c->step, 2000);
  fs.add_file(d + "/checkpoint_last.pt", make_zip());
  c = latest(fs);
  EXPECT_EQ(path_of(c), d + "/checkpoint_last.pt");
  EXPECT_EQ(c->step, 2000);
  fs.add_file(d + "/checkpoint2.pt", make_zip());  // the end of epoch 2, cut off in the copy
  fs.add_file(d + "/checkpoint_last.pt", make_zip().substr(0, 30));
  c = latest(fs);
  EXPECT_EQ(path_of(c), d + "/checkpoint2.pt");
  EXPECT_EQ(c->step, -1);  // an end-of-epoch save names no update count
  EXPECT_EQ(path_of(latest(fs, "fairseq", Pick::kBest)), d + "/checkpoint_best.pt");
}

}  // namespace
}  // namespace tv
