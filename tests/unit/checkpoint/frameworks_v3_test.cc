// Issue 33's classes, each tree built as the framework's saving code writes it (the file is cited
// in each test): verl's per-rank shards, accelerate's save_state under Trainer's directory name,
// rl_games' current final-save names, timm's .pth.tar files, fairseq's epoch/update names.
#include <gtest/gtest.h>

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
  const Selection s = lookup_checkpoint(ResumeRequest{kRoot, "auto", "latest"}, fs);
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_EQ(s.checkpoint->path, out + "/checkpoint-1000");
  EXPECT_EQ(s.checkpoint->step, 1000);
  EXPECT_EQ(path_of(latest(fs, "accelerate")), out + "/checkpoint-1000");
  // A Trainer save beside it is still judged by trainer_state.json.
  fs.add_file(out + "/checkpoint-2000/training_args.bin", make_zip());
  fs.add_file(out + "/checkpoint-2000/random_states_0.pkl", make_zip());
  EXPECT_EQ(path_of(latest(fs)), out + "/checkpoint-1000");
}

}  // namespace
}  // namespace tv
