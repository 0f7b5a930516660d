// The catalog (checkpoint/catalog.h) against docs/checkpoints.md, and the rules issue #22 added:
// the frameworks' own commit rules (Megatron metadata.json and tracker, NeMo -unfinished, Orbax
// tmp names, accelerate registered objects, files beside a DCP .metadata), steps read from the
// right number, files no layout claims, unknown layouts and runs that cannot be ordered.
#include "checkpoint/catalog.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "checkpoint/candidates.h"
#include "checkpoint/names.h"
#include "checkpoint/resume.h"
#include "checkpoint/tree_walk.h"
#include "resume_helpers.h"

namespace tv {
namespace {

using testing::dcp;
using namespace testing;  // NOLINT: the shared fake tree helpers (resume_helpers.h)

Selection lookup(FakeCheckpointFs& fs, const std::string& format = "auto") {
  return lookup_checkpoint(ResumeRequest{kRoot, format, Pick::kLatest}, fs);
}

std::string docs() {
  std::ifstream in(std::string(TV_TESTDATA) + "/../../docs/checkpoints.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Catalog, EntriesAreInLayoutOrderAndEveryNameSelectsThem) {
  std::size_t i = 0;
  for (const auto& e : catalog()) {
    EXPECT_EQ(static_cast<std::size_t>(e.layout), i++) << e.format;
    EXPECT_NE(layouts_of_format(std::string(e.format)) & bit(e.layout), 0u) << e.format;
    EXPECT_EQ(layout_format(e.layout), e.format);
    for (auto f : {e.unit, e.step, e.runs, e.complete, e.source, e.code})
      EXPECT_FALSE(f.empty()) << e.format;
  }
  EXPECT_EQ(i, static_cast<std::size_t>(Layout::kGlob));
}

// The table docs/checkpoints.md holds between its catalog markers: one row per entry.
std::string catalog_markdown() {
  std::string out =
      "| `--format` | unit | step | complete when | source | code |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& e : catalog()) {
    std::string names;
    std::string_view rest = e.selected_by;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      names += (names.empty() ? "`" : ", `") + std::string(rest.substr(0, comma)) + "`";
      rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    }
    out += "| " + names + " | " + std::string(e.unit) + " | " + std::string(e.step) + " | " +
           std::string(e.complete) + " | " + std::string(e.source) + " | " + std::string(e.code) +
           " |\n";
  }
  return out;
}

TEST(Catalog, DocsHoldTheCatalogTable) {
  const std::string text = docs();
  ASSERT_FALSE(text.empty());
  const std::string begin = "<!-- catalog: checked by tests/unit/checkpoint/catalog_test.cc -->\n";
  const auto at = text.find(begin);
  ASSERT_NE(at, std::string::npos) << "docs/checkpoints.md has no catalog marker";
  const std::string want = catalog_markdown();
  EXPECT_EQ(text.substr(at + begin.size(), want.size()), want)
      << "docs/checkpoints.md's catalog table should read:\n"
      << want;
  for (const auto& e : catalog()) {
    std::string_view names = e.selected_by;
    while (!names.empty()) {
      const auto comma = names.find(',');
      const std::string name(names.substr(0, comma));
      EXPECT_NE(std::string(kCheckpointFormats).find(name), std::string::npos) << name;
      names = comma == std::string_view::npos ? "" : names.substr(comma + 1);
    }
  }
}

TEST(Catalog, EveryFormatTheDocsNameIsKnown) {
  const std::string text = docs();
  // Every --format named in the docs' table is a name the catalog knows.
  std::istringstream lines(text);
  std::string line;
  bool table = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("| framework | `--format`")) table = true;
    if (!table) continue;
    if (line.empty()) break;
    const auto a = line.find("| ", 2);
    if (a == std::string::npos || line.starts_with("| ---")) continue;
    const auto b = line.find(" |", a + 2);
    const std::string cell = line.substr(a + 2, b - a - 2);
    for (std::size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
      const auto end = cell.find('`', at + 1);
      const std::string name = cell.substr(at + 1, end - at - 1);
      at = end;
      if (name == "--format" || name.starts_with("glob:")) continue;
      EXPECT_NE(layouts_of_format(name), 0u) << "docs name an unknown format: " << name;
    }
  }
}

TEST(Names, StampsAnywhereInTheName) {
  EXPECT_EQ(*run_stamp_ns("Jan03_09-00-00_flat"), *run_stamp_ns("2000-01-03_09-00-00"));
  EXPECT_LT(*run_stamp_ns("Jan03_09-00-00_a"), *run_stamp_ns("Feb01_00-00-00_b"));
  EXPECT_EQ(*run_stamp_ns("predict2_job_20250103_090000"), *run_stamp_ns("2025-01-03_09-00-00"));
  EXPECT_EQ(*run_stamp_ns("exp-2025-01-03_09-00-00"), *run_stamp_ns("2025-01-03_09-00-00"));
  EXPECT_FALSE(run_stamp_ns("iter_20250103_0900001"));  // a digit right after: not a stamp
  EXPECT_EQ(step_in_name("megatron_gpt--val_loss=1.23-step=100-consumed_samples=800.0"), 100);
}

TEST(Skrl, FilesBesideAgentFilesThatSkrlDidNotWriteNeverChangeThePick) {
  const std::string run = kRoot + "/logs/skrl/Ant/2025-01-02_10-00-00_ppo_torch/checkpoints";
  for (const char* stray : {"ema_150.pt", "policy_200.pt", "copy of agent_200.pt", "ema_400.pt"}) {
    FakeCheckpointFs fs;
    for (int s : {100, 200, 300})
      fs.add_file(run + "/agent_" + std::to_string(s) + ".pt", make_zip());
    fs.add_file(run + "/" + stray, make_zip());
    auto c = latest(fs);
    EXPECT_EQ(path_of(c), run + "/agent_300.pt") << stray;
    if (c) {
      EXPECT_EQ(c->files.size(), 1u) << stray;
    }
  }
}

TEST(RlGames, TheFinalMaxEpochsSaveAndConfigNamesHoldingEp) {
  FakeCheckpointFs fs;
  const std::string nn = kRoot + "/logs/rl_games/ant/2025-01-02_10-00-00/nn";
  fs.add_file(nn + "/last_run_ep_5_ep_100_rew_12.5.pth", make_zip());
  fs.add_file(nn + "/last_run_ep_5_ep_200_rew_13.0.pth", make_zip());
  fs.add_file(nn + "/run_ep_5.pth", make_zip());                     // best
  fs.add_file(nn + "/last_run_ep_5ep300rew[14.2].pth", make_zip());  // max_epochs
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), nn + "/last_run_ep_5ep300rew[14.2].pth");
  EXPECT_EQ(c->step, 300);
  EXPECT_EQ(path_of(latest(fs, "rl_games", Pick::kBest)), nn + "/run_ep_5.pth");
}

TEST(Lightning, CustomFilenamesOrderByStepNotByString) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/lightning_logs/version_0/checkpoints";
  auto ckpt = [](std::int64_t step) {
    PickleWriter w;
    w.empty_dict().mark().str("global_step").integer(step).setitems();
    return make_zip(w.stop());
  };
  fs.add_file(d + "/ckpt-900.ckpt", ckpt(900));
  fs.add_file(d + "/ckpt-1100.ckpt", ckpt(1100));
  auto c = latest(fs, "lightning");
  EXPECT_EQ(path_of(c), d + "/ckpt-1100.ckpt");
  EXPECT_EQ(c->step, 1100);
}

TEST(Nemo, StepComesFromStepAndTheUnfinishedMarkerMeansIncomplete) {
  FakeCheckpointFs fs;
  const std::string ck = kRoot + "/nemo_experiments/gpt/2025-01-02_10-00-00/checkpoints";
  auto save = [&](int step, bool marker) {
    const std::string name = "gpt--val_loss=1.00-step=" + std::to_string(step) +
                             "-consumed_samples=" + std::to_string(step * 8) + ".0";
    dcp(fs, ck + "/" + name + "/weights", fs.now() - 100 * kS);
    fs.add_file(ck + "/" + name + "/weights/common.pt", make_zip());
    fs.add_file(ck + "/" + name + "/weights/metadata.json",
                "{\"sharded_backend\": \"torch_dist\"}");
    fs.add_file(ck + "/" + name + "/context/io.json", "{}");
    if (marker) fs.add_file(ck + "/" + name + "-unfinished", "");
    return ck + "/" + name;
  };
  save(100, false);
  const std::string s200 = save(200, false);
  const std::string s300 = save(300, true);
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), s200);
  EXPECT_EQ(c->step, 200);
  EXPECT_EQ(c->format, "nemo");
  fs.remove(s300 + "-unfinished");
  EXPECT_EQ(path_of(latest(fs, "nemo")), s300);
  fs.remove(s300 + "/weights/metadata.json");
  EXPECT_EQ(path_of(latest(fs)), s200);
}

TEST(Nemo, OneXCkptDirectoriesAndFilesHonourTheMarkerToo) {
  FakeCheckpointFs fs;
  const std::string ck = kRoot + "/nemo_experiments/gpt/2025-01-02_10-00-00/checkpoints";
  auto dir = [&](int step) {
    const std::string d = ck + "/megatron_gpt--val_loss=1.23-step=" + std::to_string(step) +
                          "-consumed_samples=" + std::to_string(step * 8) + ".0";
    dcp(fs, d + ".ckpt", fs.now() - 100 * kS);
    fs.add_file(d + ".ckpt/common.pt", make_zip());
    fs.add_file(d + ".ckpt/metadata.json", "{}");
    return d;
  };
  dir(100);
  const std::string d200 = dir(200);
  fs.add_file(d200 + "-unfinished", "");
  auto c = latest(fs, "nemo");
  EXPECT_EQ(path_of(c), ck + "/megatron_gpt--val_loss=1.23-step=100-consumed_samples=800.0.ckpt");
  EXPECT_EQ(c->step, 100);
  // A Lightning .ckpt file NeMo is still writing (non-distributed): the same marker.
  FakeCheckpointFs files;
  const std::string v = kRoot + "/lightning_logs/version_0/checkpoints";
  files.add_file(v + "/gpt--step=100-consumed_samples=800.0.ckpt", make_zip());
  files.add_file(v + "/gpt--step=200-consumed_samples=1600.0.ckpt", make_zip());
  files.add_file(v + "/gpt--step=200-consumed_samples=1600.0-unfinished", "");
  EXPECT_EQ(path_of(latest(files, "nemo")), v + "/gpt--step=100-consumed_samples=800.0.ckpt");
}

TEST(Megatron, TorchDistNeedsMetadataJsonAndCommonPtAndTheTracker) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/gpt";
  for (int it : {100, 200, 300}) {
    const std::string iter =
        d + "/iter_" + std::string(7 - std::to_string(it).size(), '0') + std::to_string(it);
    dcp(fs, iter, fs.now() - 100 * kS);
    fs.add_file(iter + "/common.pt", make_zip());
    if (it != 300) fs.add_file(iter + "/metadata.json", "{}");
  }
  fs.add_file(d + "/latest_checkpointed_iteration.txt", "200");
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), d + "/iter_0000200");
  EXPECT_EQ(c->format, "megatron");
  fs.add_file(d + "/iter_0000300/metadata.json", "{}");
  EXPECT_EQ(path_of(latest(fs)), d + "/iter_0000200");  // the tracker still names 200
  fs.add_file(d + "/latest_checkpointed_iteration.txt", "300");
  EXPECT_EQ(path_of(latest(fs, "megatron")), d + "/iter_0000300");
  fs.add_file(d + "/iter_0000300/common.pt", make_zip().substr(0, 10));  // cut off
  EXPECT_EQ(path_of(latest(fs)), d + "/iter_0000200");
}

TEST(Megatron, LegacyNeedsEveryRankDirectory) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/gpt";
  for (const char* r : {"mp_rank_00", "mp_rank_01"}) {
    fs.add_file(d + "/iter_0000100/" + r + "/model_optim_rng.pt", make_zip());
    fs.add_file(d + "/iter_0000200/" + r + "/model_optim_rng.pt", make_zip());
  }
  fs.add_file(d + "/iter_0000300/mp_rank_00/model_optim_rng.pt", make_zip());
  EXPECT_EQ(path_of(latest(fs)), d + "/iter_0000200");
}

// The rank directories a save is held to are those of the saves beside it (its save
// directory), not of another save directory's: an older 4-rank job leaves 2-rank saves complete.
TEST(Megatron, LegacyRankDirectoriesAreCountedAmongTheSavesBesideThem) {
  FakeCheckpointFs fs;
  const std::string old = kRoot + "/old", d = kRoot + "/gpt";
  for (const char* r : {"mp_rank_00", "mp_rank_01", "mp_rank_02", "mp_rank_03"})
    fs.add_file(old + "/iter_0005000/" + r + "/model_optim_rng.pt", make_zip());
  fs.set_mtime(old + "/iter_0005000", fs.now() - 7200 * kS);
  for (const char* r : {"mp_rank_00", "mp_rank_01"})
    fs.add_file(d + "/iter_0000200/" + r + "/model_optim_rng.pt", make_zip());
  fs.add_file(d + "/iter_0000300/mp_rank_00/model_optim_rng.pt", make_zip());
  EXPECT_EQ(path_of(latest(fs)), d + "/iter_0000200");
  fs.add_file(d + "/iter_0000300/mp_rank_01/model_optim_rng.pt", make_zip());
  EXPECT_EQ(path_of(latest(fs)), d + "/iter_0000300");
}

TEST(Orbax, TmpDirectoriesAreSavesInProgress) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/orbax";
  for (const char* s : {"1000", "2000", "3000.orbax-checkpoint-tmp-0"}) {
    fs.add_file(d + "/" + s + "/_CHECKPOINT_METADATA", "{\"init_timestamp_nsecs\": 1}");
    fs.add_file(d + "/" + s + "/default/_METADATA", "{}");
    fs.add_file(d + "/" + s + "/default/manifest.ocdbt", "x");
  }
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), d + "/2000");
  EXPECT_EQ(c->format, "orbax");
  EXPECT_EQ(c->step, 2000);
}

TEST(Accelerate, RegisteredObjectsAreWrittenAfterRandomStates) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/proj/checkpoints";
  for (int i : {0, 1, 2}) {
    const std::string c = d + "/checkpoint_" + std::to_string(i);
    fs.add_file(c + "/model.safetensors", std::string("\x02\0\0\0\0\0\0\0{}", 10));
    fs.add_file(c + "/optimizer.bin", make_zip());
    fs.add_file(c + "/random_states_0.pkl", make_zip());
    if (i < 2) fs.add_file(c + "/custom_checkpoint_0.pkl", make_zip());
  }
  EXPECT_EQ(path_of(latest(fs)), d + "/checkpoint_1");
}

TEST(Dcp, FilesBesideMetadataAreChecked) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/outputs/checkpoint";
  dcp(fs, d + "/step-100", fs.now() - 100 * kS);
  dcp(fs, d + "/step-200", fs.now() - 100 * kS);
  fs.add_file(d + "/step-200/common.pt", "not a zip");
  EXPECT_EQ(path_of(latest(fs)), d + "/step-100");
}

TEST(Torchtune, EpochDirectoriesWithShardedSafetensors) {
  FakeCheckpointFs fs;
  const std::string out = kRoot + "/tune_out";
  const std::string st = std::string("\x02\0\0\0\0\0\0\0{}", 10);
  for (int e : {0, 1, 2}) {
    const std::string d = out + "/epoch_" + std::to_string(e);
    fs.add_file(d + "/model-00001-of-00002.safetensors", st);
    if (e != 2) fs.add_file(d + "/model-00002-of-00002.safetensors", st);
    fs.add_file(d + "/model.safetensors.index.json",
                R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
                                   "b": "model-00002-of-00002.safetensors"}})");
  }
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), out + "/epoch_1");
  EXPECT_EQ(c->format, "torchtune");
}

TEST(Sb3, StepsZipAndItsReplayBuffer) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/logs";
  const std::string pkl = make_dcp_metadata({{"x", 0, 1}});
  for (int s : {1000, 2000, 3000}) {
    fs.add_file(d + "/rl_model_" + std::to_string(s) + "_steps.zip", make_zip());
    if (s != 3000)
      fs.add_file(d + "/rl_model_replay_buffer_" + std::to_string(s) + "_steps.pkl", pkl);
  }
  auto c = latest(fs);
  EXPECT_EQ(path_of(c), d + "/rl_model_2000_steps.zip");
  EXPECT_EQ(c->format, "sb3");
  EXPECT_EQ(c->files.size(), 2u);
}

TEST(Honesty, AnUnknownLayoutIsNotAnEmptyDirectory) {
  FakeCheckpointFs fs;
  fs.add_dir(kRoot);
  Selection s = lookup(fs);
  EXPECT_EQ(s.none, Selection::None::kEmpty);
  EXPECT_EQ(s.why_none, "no checkpoint yet under " + kRoot);
  fs.add_file(kRoot + "/save/net_final.pth", make_zip());
  fs.add_file(kRoot + "/save/net_best.pth", make_zip());
  s = lookup(fs);
  EXPECT_EQ(s.none, Selection::None::kUnrecognized);
  EXPECT_EQ(s.why_none, kRoot +
                            ": save/net_best.pth (and 1 more such files) matches no known layout; "
                            "name its format (run --checkpoint-format, checkpoint latest "
                            "--format; docs/checkpoints.md lists the layouts, glob: writes one)");
  s = lookup(fs, "deepspeed");
  EXPECT_NE(s.why_none.find("matches no layout of format deepspeed"), std::string::npos);
}

TEST(Honesty, RunsThatNothingOrdersAreAmbiguous) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  dcp(fs, kRoot + "/outputs/a/checkpoint/step-1000", t);
  dcp(fs, kRoot + "/outputs/b/checkpoint/step-100", t);
  Selection s = lookup(fs);
  EXPECT_FALSE(s.checkpoint);
  EXPECT_EQ(s.none, Selection::None::kAmbiguous);
  EXPECT_NE(s.why_none.find("cannot tell which run is newer"), std::string::npos) << s.why_none;
  fs.set_now(fs.now() + 10 * kS);  // a third run, written later: its mtime tells
  dcp(fs, kRoot + "/outputs/c/checkpoint/step-50", t + 10 * kS);
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/outputs/c/checkpoint/step-50");
}

// Two Trainer output dirs whose names carry no stamp and whose checkpoints have the same mtime:
// trainer_state.json's global_step orders them (the resumed run is further on), and only when
// every run has one and one is highest.
TEST(Honesty, TrainerGlobalStepOrdersRunsThatTheTimeDoesNot) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  auto trainer = [&](const std::string& d, const std::string& state) {
    fs.add_file(d + "/scheduler.pt", make_zip(), t);
    fs.add_file(d + "/trainer_state.json", state, t);
  };
  trainer(kRoot + "/first/checkpoint-900", "{\"global_step\": 900, \"log_history\": []}");
  trainer(kRoot + "/resumed/checkpoint-500", "{\"global_step\": 1400}");
  Selection s = lookup(fs);
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_EQ(s.checkpoint->path, kRoot + "/resumed/checkpoint-500");
  trainer(kRoot + "/third/checkpoint-700", "{\"global_step\": 1400}");  // tied again
  s = lookup(fs);
  EXPECT_EQ(s.none, Selection::None::kAmbiguous);
  EXPECT_NE(s.why_none.find("no trainer_state.json global_step tells them apart"),
            std::string::npos)
      << s.why_none;
  trainer(kRoot + "/third/checkpoint-700", "{\"epoch\": 3.0}");  // no global_step: no order
  EXPECT_EQ(lookup(fs).none, Selection::None::kAmbiguous);
}

TEST(Speed, ALargeFamilyIsWalkedByItsNewestAndAgainWhenTheyAreIncomplete) {
  FakeCheckpointFs fs;
  const std::string d = kRoot + "/gpt";
  auto iter = [&](int it) {
    return d + "/iter_" + std::string(7 - std::to_string(it).size(), '0') + std::to_string(it);
  };
  for (int it = 1; it <= 300; ++it) {
    dcp(fs, iter(it), fs.now() - 100 * kS);
    fs.add_file(iter(it) + "/common.pt", make_zip());
    fs.add_file(iter(it) + "/metadata.json", "{}");
  }
  const Tree cut = walk_tree(fs, kRoot, true);
  EXPECT_EQ(cut.dirs.size(), 2 + kNewestOfFamily);  // the root, gpt, the 16 newest iter_*
  ASSERT_EQ(cut.cut_families.size(), 1u);
  EXPECT_EQ(walk_tree(fs, kRoot).dirs.size(), 302u);
  EXPECT_EQ(path_of(latest(fs)), iter(300));
  for (int it = 300 - static_cast<int>(kNewestOfFamily); it <= 300; ++it)
    fs.remove(iter(it) + "/metadata.json");  // every walked one incomplete: walked again
  EXPECT_EQ(path_of(latest(fs)), iter(299 - static_cast<int>(kNewestOfFamily)));
}

TEST(ResumeArg, RunIsTheDirectoryNameWhenTheCheckpointDirIsTheRunItself) {
  FakeCheckpointFs fs;
  const std::string run = kRoot + "/2025-01-03_09-00-00_resumed";
  fs.add_file(run + "/model_1550.pt", make_zip());
  auto c = find_resume_checkpoint(ResumeRequest{run, "auto", Pick::kLatest}, fs);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->run, "2025-01-03_09-00-00_resumed");  // Isaac Lab's --load_run, never ""
}

TEST(Glob, OneEntryOnTheCommandLineWithTheCatalogsPowers) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  // Orbax by hand: a marker inside, tmp names excluded; runs ordered before steps.
  fs.set_now(t);
  fs.add_file(kRoot + "/old/9000/_CHECKPOINT_METADATA", "{}", t);
  fs.set_now(t + 10 * kS);
  fs.add_file(kRoot + "/new/100/_CHECKPOINT_METADATA", "{}", t + 10 * kS);
  fs.add_file(kRoot + "/new/200.orbax-checkpoint-tmp-0/_CHECKPOINT_METADATA", "{}", t + 11 * kS);
  fs.set_now(t + 100 * kS);
  EXPECT_EQ(
      path_of(latest(fs, "glob:*/*,marker=_CHECKPOINT_METADATA,exclude=*.orbax-checkpoint-tmp-*")),
      kRoot + "/new/100");
  // NeMo by hand: complete = the marker absent; content checked.
  fs.add_file(kRoot + "/nemo/s-1.ckpt", make_zip(), t);
  fs.add_file(kRoot + "/nemo/s-2.ckpt", make_zip(), t + kS);
  fs.add_file(kRoot + "/nemo/s-3.ckpt", make_zip(), t + 2 * kS);
  fs.add_file(kRoot + "/nemo/s-3.ckpt-unfinished", "", t + 2 * kS);  // <match>SUFFIX
  fs.add_file(kRoot + "/nemo/s-4.ckpt", "PK cut off", t + 3 * kS);
  EXPECT_EQ(path_of(latest(fs, "glob:nemo/*.ckpt,absent=-unfinished,check=torch")),
            kRoot + "/nemo/s-2.ckpt");
  EXPECT_EQ(path_of(latest(fs, "glob:nemo/*.ckpt,check=torch")), kRoot + "/nemo/s-3.ckpt");
  std::string why;
  EXPECT_FALSE(valid_glob_spec("x/*,done=.ok,marker=a", &why));
  EXPECT_FALSE(valid_glob_spec("x/*,check=zip", &why));
  EXPECT_TRUE(valid_glob_spec("x/*,absent=-unfinished,exclude=*.tmp", &why)) << why;
}

}  // namespace
}  // namespace tv
