// Each framework layout on an in-memory tree (fake clock): recognition, completeness rules, run
// ordering by name stamps and by time, resume-arg placeholders, zip CRC verification.
#include <gtest/gtest.h>

#include "checkpoint/names.h"
#include "checkpoint/resume.h"
#include "checkpoint/zip_verify.h"
#include "resume_helpers.h"

namespace tv {
namespace {

using testing::dcp;
using testing::FakeCheckpointFs;
using testing::kRoot;
using testing::kS;
using testing::latest;
using testing::make_dcp_metadata;
using testing::make_zip;
using testing::path_of;

TEST(Names, RunStamps) {
  EXPECT_EQ(*run_stamp_ns("1970-01-01_00-00-01_ppo_torch"), 1'000'000'000);
  EXPECT_EQ(
      *run_stamp_ns("25-01-02_10-00-00-000002_PPO") - *run_stamp_ns("25-01-02_10-00-00-000000_X"),
      2000);
  EXPECT_EQ(*run_stamp_ns("2025-01-02_10-00-00_a"), *run_stamp_ns("25-01-02_10-00-00-000000_PPO"));
  EXPECT_LT(*run_stamp_ns("25-01-02_10-00-00-123456_PPO"),
            *run_stamp_ns("25-01-03_09-00-00-000001_PPO"));
  EXPECT_EQ(*run_stamp_ns("19700101000003"), 3 * kS);
  for (const char* no : {"2025-13-01_00-00-00", "2025-01-02", "202501010000", "checkpoints", ""})
    EXPECT_FALSE(run_stamp_ns(no)) << no;
  EXPECT_EQ(step_in_name("iter_000001000"), 1000);
  EXPECT_EQ(number_after("epoch=3-step=1200", "step="), 1200);
  EXPECT_EQ(*number_between("global_step12", "global_step", ""), 12);
}

// ms-swift names each run output/v<N>-%Y%m%d-%H%M%S (swift/utils/utils.py
// add_version_to_work_dir) and saves HF Trainer checkpoint-<N> directories in it: restored with
// every mtime equal, the run's stamp orders the runs, not the older run's higher step.
TEST(MsSwift, RunDirectoriesOrderByTheirStamp) {
  EXPECT_EQ(*run_stamp_ns("v1-19700101-000003"), 3 * kS);
  EXPECT_EQ(*run_stamp_ns("19700101-000003-resnet50-224"), 3 * kS);  // timm's train.py
  EXPECT_FALSE(run_stamp_ns("v1-19700101-0000031"));
  FakeCheckpointFs fs;
  const std::int64_t synced = fs.now() - 100 * kS;
  auto save = [&](const std::string& d, int step) {
    fs.add_file(d + "/pytorch_model.bin", make_zip(), synced);
    fs.add_file(d + "/trainer_state.json", R"({"global_step": )" + std::to_string(step) + "}",
                synced);
  };
  save(kRoot + "/output/v0-20250101-100000/checkpoint-900", 900);
  save(kRoot + "/output/v1-20250102-090000/checkpoint-100", 100);
  const auto c = latest(fs);
  EXPECT_EQ(path_of(c), kRoot + "/output/v1-20250102-090000/checkpoint-100");
  EXPECT_EQ(c->run, "v1-20250102-090000");
}

TEST(Skrl, PlainSkrlRunsWithTwoDigitYearsOrderByName) {
  FakeCheckpointFs fs;
  const std::string old_run = kRoot + "/runs/25-01-02_10-00-00-123456_PPO/checkpoints";
  const std::string new_run = kRoot + "/runs/25-01-03_09-00-00-000001_PPO/checkpoints";
  fs.add_file(old_run + "/agent_48000.pt", make_zip(), fs.now() - 10 * kS);  // synced: newer
  fs.add_file(new_run + "/agent_800.pt", make_zip(), fs.now() - 100 * kS);
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), new_run + "/agent_800.pt");
  EXPECT_EQ(c->run, "25-01-03_09-00-00-000001_PPO");
  EXPECT_EQ(c->run_dir, kRoot + "/runs/25-01-03_09-00-00-000001_PPO");
}

TEST(Skrl, FirstPartialSetOfAResumedRunIsNotTaken) {
  FakeCheckpointFs fs;
  const std::string old_run = kRoot + "/runs/25-01-02_10-00-00-000000_MAPPO/checkpoints";
  const std::string new_run = kRoot + "/runs/25-01-03_09-00-00-000000_MAPPO/checkpoints";
  for (const char* m : {"a_policy", "a_value", "b_policy", "b_value"})
    fs.add_file(old_run + "/" + m + "_200.pt", make_zip());
  fs.add_file(new_run + "/a_policy_100.pt", make_zip());  // crashed before a_value_100.pt
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), old_run + "/a_policy_200.pt");
  EXPECT_EQ(c->files.size(), 4u);
  for (const char* m : {"a_value", "b_policy", "b_value"})
    fs.add_file(new_run + "/" + m + "_100.pt", make_zip());
  EXPECT_EQ(path_of(latest(fs)), new_run + "/a_policy_100.pt");
}

TEST(Skrl, JaxPickleMustParseToTheEnd) {
  FakeCheckpointFs fs;
  const std::string run = kRoot + "/runs/25-01-02_10-00-00-000000_PPO/checkpoints";
  const std::string p = make_dcp_metadata({{"x", 0, 1}});  // any complete pickle
  fs.add_file(run + "/agent_100.pickle", p);
  fs.add_file(run + "/agent_200.pickle", p.substr(0, p.size() - 4));
  EXPECT_EQ(path_of(latest(fs, "skrl")), run + "/agent_100.pickle");
}

TEST(RlGames, LastEpochFilesAndBest) {
  FakeCheckpointFs fs;
  const std::string nn = kRoot + "/logs/rl_games/ant/2025-01-02_10-00-00/nn";
  fs.add_file(nn + "/last_ant_ep_100_rew_12.5.pth", make_zip());
  fs.add_file(nn + "/last_ant_ep_200_rew_-3.0.pth", make_zip());
  fs.add_file(nn + "/ant.pth", make_zip());
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), nn + "/last_ant_ep_200_rew_-3.0.pth");
  EXPECT_EQ(c->step, 200);
  EXPECT_EQ(c->format, "rl_games");
  EXPECT_EQ(path_of(latest(fs, "rl_games", Pick::kBest)), nn + "/ant.pth");
}

TEST(CosmosPredict2, PartsInSiblingFoldersAreGrouped) {
  FakeCheckpointFs fs;
  const std::string ck = kRoot + "/job/checkpoints";
  for (const char* part : {"model", "optim", "scheduler", "trainer"})
    fs.add_file(ck + "/" + part + "/iter_000001000.pt", make_zip());
  fs.add_file(ck + "/model/iter_000002000.pt", make_zip());
  fs.add_file(ck + "/optim/iter_000002000.pt", make_zip());
  fs.add_file(ck + "/latest_checkpoint.txt", "iter_000002000.pt\n");  // rewritten per part
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), ck + "/model/iter_000001000.pt");
  EXPECT_EQ(c->format, "cosmos-predict2");
  EXPECT_EQ(c->files.size(), 4u);
}

TEST(CosmosPolicy, EveryRankNeedsItsFilesAndMarker) {
  FakeCheckpointFs fs;
  const std::string ck = kRoot + "/out/20250101100000/checkpoints";
  auto step = [&](int n, bool broken) {
    const std::string d = ck + "/step_" + std::to_string(n) + "/policy";
    fs.add_file(d + "/cosmos_config", "{}");
    for (int r = 0; r < 2; ++r) {
      for (const char* k : {"model", "optimizer"})
        fs.add_file(d + "/" + k + "_rank_" + std::to_string(r) + ".pth", make_zip());
      if (!(broken && r == 1)) fs.add_file(d + "/.rank_" + std::to_string(r) + "_complete", "");
    }
  };
  step(100, false);
  step(200, true);
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), ck + "/step_100/policy");
  EXPECT_EQ(c->step, 100);
  EXPECT_EQ(c->format, "cosmos-rl");
  EXPECT_EQ(c->run, "20250101100000");
}

// The ranks a save is held to are those of the other saves of its run (its checkpoints/), not of
// another run's: an older 4-rank run leaves the 2-rank saves of the newer one complete.
TEST(CosmosPolicy, RanksAreCountedAmongTheSavesOfTheirRun) {
  FakeCheckpointFs fs;
  auto step = [&](const std::string& run, int n, int ranks, int markers) {
    const std::string d = kRoot + "/out/" + run + "/checkpoints/step_" + std::to_string(n);
    fs.add_file(d + "/policy/cosmos_config", "{}");
    for (int r = 0; r < ranks; ++r) {
      fs.add_file(d + "/policy/model_rank_" + std::to_string(r) + ".pth", make_zip());
      if (r < markers) fs.add_file(d + "/policy/.rank_" + std::to_string(r) + "_complete", "");
    }
  };
  step("20250101100000", 900, 4, 4);
  step("20250102090000", 100, 2, 2);
  step("20250102090000", 200, 2, 2);
  step("20250102090000", 300, 1, 1);  // rank 1 died before writing anything
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), kRoot + "/out/20250102090000/checkpoints/step_200/policy");
  step("20250102090000", 300, 2, 2);
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/out/20250102090000/checkpoints/step_300/policy");
}

TEST(Hf, TrainerStateIsWrittenLastAndFsdpSubfoldersBelongToTheCheckpoint) {
  FakeCheckpointFs fs;
  const std::string out = kRoot + "/out";
  for (int n : {500, 1000}) {
    const std::string d = out + "/checkpoint-" + std::to_string(n);
    dcp(fs, d + "/pytorch_model_fsdp_0", fs.now() - 100 * kS);
    dcp(fs, d + "/optimizer_0", fs.now() - 100 * kS);
    fs.add_file(d + "/scheduler.pt", make_zip());
    fs.add_file(d + "/trainer_state.json", "{\"global_step\": " + std::to_string(n) + "}");
  }
  const std::string d = out + "/checkpoint-1500";
  dcp(fs, d + "/pytorch_model_fsdp_0", fs.now() - 10 * kS);
  fs.add_file(d + "/scheduler.pt", make_zip());
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), out + "/checkpoint-1000");
  EXPECT_EQ(c->step, 1000);
  EXPECT_EQ(c->format, "hf");
  EXPECT_TRUE(c->directory);
  fs.add_file(d + "/trainer_state.json", "{\"global_st");  // cut off
  EXPECT_EQ(path_of(latest(fs, "hf")), out + "/checkpoint-1000");
}

TEST(Hf, SafetensorsMustHoldEveryTensor) {
  FakeCheckpointFs fs;
  auto st = [](std::size_t data_bytes, std::size_t end) {
    const std::string h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0," +
                          std::to_string(end) + "]}}";
    std::string out(8, '\0');
    out[0] = static_cast<char>(h.size());
    return out + h + std::string(data_bytes, 'x');
  };
  for (int n : {1, 2}) {
    const std::string d = kRoot + "/o/checkpoint-" + std::to_string(n);
    fs.add_file(d + "/model.safetensors", n == 1 ? st(8, 8) : st(4, 8));
    fs.add_file(d + "/trainer_state.json", "{}");
  }
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/o/checkpoint-1");
}

TEST(Hf, ShardedWeightsNeedEveryShardTheIndexNames) {
  FakeCheckpointFs fs;
  auto shard = [](std::size_t data_bytes) {
    const std::string h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    std::string out(8, '\0');
    out[0] = static_cast<char>(h.size());
    return out + h + std::string(data_bytes, 'x');
  };
  const std::string index =
      R"({"metadata": {"total_size": 16}, "weight_map": {"a.weight": "model-00001-of-00002.safetensors",
          "b.weight": "model-00002-of-00002.safetensors"}})";
  auto save = [&](int n) {
    const std::string d = kRoot + "/o/checkpoint-" + std::to_string(n);
    fs.add_file(d + "/model-00001-of-00002.safetensors", shard(8));
    fs.add_file(d + "/model-00002-of-00002.safetensors", shard(8));
    fs.add_file(d + "/model.safetensors.index.json", index);
    fs.add_file(d + "/trainer_state.json", "{}");
    return d;
  };
  save(1);
  const std::string d2 = save(2);
  EXPECT_EQ(path_of(latest(fs)), d2);
  fs.remove(d2 + "/model-00002-of-00002.safetensors");  // the index names it: not complete
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/o/checkpoint-1");
  fs.add_file(d2 + "/model-00002-of-00002.safetensors", shard(8).substr(0, 20));  // header cut
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/o/checkpoint-1");
  fs.add_file(d2 + "/model-00002-of-00002.safetensors", shard(8));
  EXPECT_EQ(path_of(latest(fs)), d2);
  // Hostile or broken indexes: never complete, never a throw.
  for (const std::string bad :
       {R"({"weight_map": {"a": "../checkpoint-1/model-00001-of-00002.safetensors"}})",
        R"({"weight_map": {"a": {"nested": 1}}})", R"({"weight_map": []})", R"({"weight_map": {}})",
        R"([1, 2])", R"({"weight_map": {"a": ".."}})", R"({"weight_map": {"a": "model-0)"}) {
    fs.add_file(d2 + "/model.safetensors.index.json", bad);
    EXPECT_EQ(path_of(latest(fs)), kRoot + "/o/checkpoint-1") << bad;
  }
  // The torch-bin index has the same shape.
  fs.add_file(d2 + "/model.safetensors.index.json", index);
  fs.add_file(d2 + "/pytorch_model.bin.index.json",
              R"({"weight_map": {"a": "pytorch_model-00001-of-00001.bin"}})");
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/o/checkpoint-1");
  fs.add_file(d2 + "/pytorch_model-00001-of-00001.bin", make_zip());
  EXPECT_EQ(path_of(latest(fs)), d2);
}

// A Lightning checkpoint: a torch.save zip of {"epoch": 1, "global_step": step}.
std::string ckpt(std::int64_t step) {
  testing::PickleWriter w;
  w.empty_dict().mark().str("epoch").integer(1).str("global_step").integer(step).setitems();
  return make_zip(w.stop());
}

TEST(Lightning, LastCkptStepComesFromItsContent) {
  FakeCheckpointFs fs;
  const std::string v0 = kRoot + "/lightning_logs/version_0/checkpoints";
  const std::string v1 = kRoot + "/lightning_logs/version_1/checkpoints";
  fs.add_file(v0 + "/epoch=4-step=500.ckpt", ckpt(500), fs.now() - 100 * kS);
  fs.add_file(v0 + "/last.ckpt", ckpt(500), fs.now() - 100 * kS);
  fs.add_file(v1 + "/epoch=7-step=800.ckpt", ckpt(800), fs.now() - 50 * kS);
  fs.add_file(v1 + "/last.ckpt", ckpt(800).substr(0, 40), fs.now() - 49 * kS);  // cut off
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), v1 + "/epoch=7-step=800.ckpt");
  fs.add_file(v1 + "/last.ckpt", ckpt(800), fs.now() - 49 * kS);
  c = latest(fs);
  EXPECT_EQ(path_of(c), v1 + "/last.ckpt");
  EXPECT_EQ(c->step, 800);
  EXPECT_EQ(c->format, "lightning");
}

// ModelCheckpoint(dirpath=D) writes its files at the top of D: no container directory above them
// (issue 38: the run of a file with none was indexed with kNoDir, SIGSEGV).
TEST(Lightning, FilesAtTheTopOfTheCheckpointDirectory) {
  FakeCheckpointFs fs;
  fs.add_file(kRoot + "/epoch=0-step=5.ckpt", ckpt(5), fs.now() - 300 * kS);
  fs.add_file(kRoot + "/epoch=1-step=10.ckpt", ckpt(10), fs.now() - 200 * kS);
  fs.add_file(kRoot + "/last.ckpt", "1\n", fs.now() - 100 * kS);  // no step in it: not newer
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), kRoot + "/epoch=1-step=10.ckpt");
  EXPECT_EQ(c->step, 10);
  EXPECT_EQ(c->run_dir, kRoot);
  EXPECT_EQ(path_of(latest(fs, "lightning")), kRoot + "/epoch=1-step=10.ckpt");
  fs.add_file(kRoot + "/last.ckpt", ckpt(10), fs.now() - 100 * kS);  // written after step 10's
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/last.ckpt");
  // A DCP directory, an Orbax step and a .metadata at the top: the same (no container above).
  FakeCheckpointFs top;
  testing::dcp(top, kRoot, top.now() - 10 * kS);
  EXPECT_EQ(path_of(latest(top)), kRoot);
}

TEST(DeepSpeed, LatestIsWrittenAfterEveryRank) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/ds";
  for (int n : {100, 200, 300}) {
    const std::string tag = d + "/global_step" + std::to_string(n);
    fs.add_file(tag + "/mp_rank_00_model_states.pt", make_zip());
    fs.add_file(tag + "/zero_pp_rank_0_mp_rank_00_optim_states.pt", make_zip());
  }
  fs.add_file(d + "/latest", "global_step200");
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), d + "/global_step200");
  EXPECT_EQ(c->format, "deepspeed");
  EXPECT_EQ(c->step, 200);
  fs.remove(d + "/latest");
  EXPECT_FALSE(latest(fs, "deepspeed"));
}

TEST(ZipVerify, CrcOfStoredEntriesAndLocalHeaders) {
  FakeCheckpointFs fs;
  const std::string good = make_zip(std::string(3000, 'w'));
  fs.add_file("/f/good.pt", good);
  auto v = verify_zip(fs, "/f/good.pt", good.size());
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->entries, 1u);
  EXPECT_EQ(v->bytes_hashed, 3000u);
  std::string zeroed = good;  // tail intact, body still zeros (written out of order)
  std::fill(zeroed.begin() + 30 + 16, zeroed.begin() + 30 + 16 + 3000, '\0');
  fs.add_file("/f/zeroed.pt", zeroed);
  auto z = verify_zip(fs, "/f/zeroed.pt", zeroed.size());
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.error().message.find("CRC-32 mismatch"), std::string::npos);
  std::string moved = good;
  moved[0] = 'X';  // local header signature gone
  fs.add_file("/f/moved.pt", moved);
  EXPECT_FALSE(verify_zip(fs, "/f/moved.pt", moved.size()).ok());
}

TEST(ZipVerify, ResumeSkipsAZeroFilledNewestFile) {
  FakeCheckpointFs fs;
  const std::string run = kRoot + "/r/2025-01-02_10-00-00_ppo_torch/checkpoints";
  const std::string good = make_zip(std::string(3000, 'w'));
  std::string zeroed = good;
  std::fill(zeroed.begin() + 46, zeroed.begin() + 3046, '\0');
  fs.add_file(run + "/agent_100.pt", good);
  fs.add_file(run + "/agent_200.pt", zeroed);
  EXPECT_EQ(path_of(latest(fs)), run + "/agent_100.pt");
}

TEST(ResumeArg, Placeholders) {
  Checkpoint c;
  c.path = "/c/logs/rsl_rl/anymal/2025-01-03_09-00-00_x/model_1550.pt";
  c.run = "2025-01-03_09-00-00_x";
  c.run_dir = "/c/logs/rsl_rl/anymal/2025-01-03_09-00-00_x";
  c.step = 1550;
  EXPECT_EQ(expand_resume_arg("--resume --load_run {run} --checkpoint {file}", c),
            (std::vector<std::string>{"--resume", "--load_run", "2025-01-03_09-00-00_x",
                                      "--checkpoint", "model_1550.pt"}));
  EXPECT_EQ(expand_resume_arg("--checkpoint={}", c),
            std::vector<std::string>{"--checkpoint=" + c.path});
  EXPECT_EQ(expand_resume_arg("--resume", c), (std::vector<std::string>{"--resume", c.path}));
  EXPECT_EQ(expand_resume_arg("--d={dir} --s={step} --r={run_dir} {{x}}", c),
            (std::vector<std::string>{"--d=" + c.run_dir, "--s=1550", "--r=" + c.run_dir, "{x}"}));
  c.directory = true;
  c.path = "/c/out/checkpoint-1000";
  EXPECT_EQ(expand_resume_arg("--resume_from_checkpoint {dir}", c),
            (std::vector<std::string>{"--resume_from_checkpoint", c.path}));
  for (const char* bad : {"--x={nope}", "--x={", "{file"}) {
    auto s = validate_resume_arg(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().exit_code(), 78);
    EXPECT_NE(s.error().message.find("--resume-arg"), std::string::npos);
  }
  EXPECT_TRUE(validate_resume_arg("--a {} {path} {file} {dir} {run} {run_dir} {step} {{}}").ok());
}

}  // namespace
}  // namespace tv
