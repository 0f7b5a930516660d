// Discovery and resume selection on in-memory trees with a fake clock.
#include "checkpoint/discovery.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "checkpoint/resume.h"
#include "resume_helpers.h"

namespace tv {
namespace {

using testing::FakeCheckpointFs;
using testing::kRoot;
using testing::kS;
using testing::latest;
using testing::make_dcp_metadata;
using testing::make_zip;
using testing::path_of;

const std::string kRun1 = kRoot + "/Isaac-Ant-v0/2025-01-02_10-00-00_ppo_torch/checkpoints";
const std::string kRun2 = kRoot + "/Isaac-Ant-v0/2025-01-02_12-30-00_ppo_torch/checkpoints";

TEST(SkrlDiscovery, NewestStepOfOneRun) {
  FakeCheckpointFs fs;
  for (int step : {1000, 2000, 10000, 3000})
    fs.add_file(kRun1 + "/agent_" + std::to_string(step) + ".pt", make_zip());
  fs.add_file(kRun1 + "/best_agent.pt", make_zip());
  auto c = latest(fs);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->path, kRun1 + "/agent_10000.pt");  // numeric, not lexical, and not best_agent
  EXPECT_EQ(c->format, "skrl");
  EXPECT_EQ(c->step, 10000);
  EXPECT_EQ(c->bytes, make_zip().size());
  EXPECT_EQ(c->run, "2025-01-02_10-00-00_ppo_torch");
}

TEST(SkrlDiscovery, ResumedIsaacLabRunWinsOverHigherStepsOfTheOlderRun) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_48000.pt", make_zip());
  fs.add_file(kRun2 + "/agent_800.pt", make_zip());  // step counter back near 0 after resume
  EXPECT_EQ(path_of(latest(fs)), kRun2 + "/agent_800.pt");
}

TEST(SkrlDiscovery, TruncatedNewestFileIsSkippedForThePreviousOne) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_1000.pt", make_zip());
  const std::string whole = make_zip(std::string(5000, 'w'));
  fs.add_file(kRun1 + "/agent_2000.pt", whole.substr(0, 3000));  // writer killed mid-save
  EXPECT_EQ(path_of(latest(fs)), kRun1 + "/agent_1000.pt");
}

TEST(SkrlDiscovery, FileStillInsideTheSettleWindowIsWaitedForOnce) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_1000.pt", make_zip());
  fs.add_file(kRun1 + "/agent_2000.pt", make_zip(), fs.now() - kS / 2);
  EXPECT_EQ(path_of(latest(fs)), kRun1 + "/agent_2000.pt");
  EXPECT_EQ(fs.sleeps, 1);
  EXPECT_GE(fs.now() - (fs.now() - kS / 2), 0);
}

TEST(SkrlDiscovery, FileThatKeepsChangingIsGivenUpOn) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_1000.pt", make_zip());
  const std::string path = kRun1 + "/agent_2000.pt";
  fs.add_file(path, make_zip(), fs.now());
  fs.on_sleep = [&] { fs.add_file(path, make_zip("more"), fs.now()); };  // rewritten each time
  EXPECT_EQ(path_of(latest(fs)), kRun1 + "/agent_1000.pt");
  EXPECT_EQ(fs.sleeps, 3);
}

TEST(SkrlDiscovery, ZeroSettleWindowNeverWaits) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_2000.pt", make_zip(), fs.now());
  auto c = find_resume_checkpoint(
      ResumeRequest{kRoot, "skrl", Pick::kLatest, std::chrono::milliseconds(0)}, fs);
  EXPECT_EQ(path_of(c), kRun1 + "/agent_2000.pt");
  EXPECT_EQ(fs.sleeps, 0);
}

// The warnings logged while `fn` runs, captured.
template <class Fn>
std::string warnings_of(Fn fn) {
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "warnings", std::make_shared<spdlog::sinks::ostream_sink_mt>(out)));
  spdlog::set_level(spdlog::level::warn);
  fn();
  spdlog::set_default_logger(previous);
  spdlog::set_level(spdlog::level::info);
  return out.str();
}

// Issue 58: a save dated 15 s ahead (its writer's clock runs ahead, on a shared file system) is
// looked at twice, one settle window apart by this node's clock, not waited for until the clock
// catches up; one warning says so.
TEST(SkrlDiscovery, FileDatedInTheFutureSettlesAfterOneWindowOfLooks) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_1000.pt", make_zip());
  fs.add_file(kRun1 + "/agent_2000.pt", make_zip(), fs.now() + 15 * kS);
  const std::int64_t start = fs.now();
  std::optional<Checkpoint> c;
  const std::string warned = warnings_of([&] { c = latest(fs); });
  EXPECT_EQ(path_of(c), kRun1 + "/agent_2000.pt");
  EXPECT_EQ(fs.sleeps, 1);
  EXPECT_LE(fs.now() - start, 2 * kS + kS / 100);  // one 2 s window, not the 17 s to catch up
  EXPECT_NE(warned.find("agent_2000.pt is modified 15.0 s in the future by this node's clock"),
            std::string::npos)
      << warned;
  EXPECT_EQ(std::count(warned.begin(), warned.end(), '\n'), 1) << warned;
}

TEST(SkrlDiscovery, FileDatedInTheFutureThatGrowsBetweenLooksIsNotTaken) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_1000.pt", make_zip());
  const std::string path = kRun1 + "/agent_2000.pt";
  const std::int64_t ahead = fs.now() + 15 * kS;
  fs.add_file(path, make_zip(), ahead);
  std::string body = "x";
  fs.on_sleep = [&] { fs.add_file(path, make_zip(body += "x"), ahead); };  // still being written
  EXPECT_EQ(path_of(latest(fs)), kRun1 + "/agent_1000.pt");
  EXPECT_EQ(fs.sleeps, 3);
  EXPECT_LE(fs.now() - (ahead - 15 * kS), 6 * kS + kS / 100);  // three windows of 2 s at most
}

TEST(SkrlDiscovery, ZeroSettleWindowTakesAFileDatedInTheFutureAtOnce) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_2000.pt", make_zip(), fs.now() + 15 * kS);
  std::optional<Checkpoint> c;
  const std::string warned = warnings_of([&] {
    c = find_resume_checkpoint(
        ResumeRequest{kRoot, "skrl", Pick::kLatest, std::chrono::milliseconds(0)}, fs);
  });
  EXPECT_EQ(path_of(c), kRun1 + "/agent_2000.pt");
  EXPECT_EQ(fs.sleeps, 0);
  EXPECT_NE(warned.find("decided by its content alone"), std::string::npos) << warned;
}

TEST(SkrlDiscovery, BestIsBestAgentOfTheNewestRunAndFallsBackToLatest) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/best_agent.pt", make_zip());
  fs.add_file(kRun2 + "/best_agent.pt", make_zip().substr(0, 10));  // cut off
  fs.add_file(kRun2 + "/agent_100.pt", make_zip());
  EXPECT_EQ(path_of(latest(fs, "skrl", Pick::kBest)), kRun1 + "/best_agent.pt");
  fs.remove(kRun1 + "/best_agent.pt");
  EXPECT_EQ(path_of(latest(fs, "skrl", Pick::kBest)), kRun2 + "/agent_100.pt");
}

TEST(SkrlDiscovery, SeparatelyStoredModulesNeedEveryModule) {
  FakeCheckpointFs fs;
  for (const char* m : {"policy", "value", "optimizer"}) {
    fs.add_file(kRun1 + "/" + m + "_100.pt", make_zip());
  }
  fs.add_file(kRun1 + "/policy_200.pt", make_zip());  // crash before value_200 was written
  auto c = latest(fs);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->path, kRun1 + "/policy_100.pt");
  EXPECT_EQ(c->files.size(), 3u);
  EXPECT_EQ(c->bytes, 3 * make_zip().size());
}

TEST(SkrlDiscovery, ASetWhoseFilesWriteTheStepDifferentlyIsStillOneSet) {
  // The set is put together from the modules recognition saw and the newest file's own step text
  // ("_100"); policy_0100.pt is not found that way, so every name is read and it still counts.
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/policy_50.pt", make_zip());
  fs.add_file(kRun1 + "/value_50.pt", make_zip());
  fs.add_file(kRun1 + "/policy_0100.pt", make_zip());
  fs.add_file(kRun1 + "/value_100.pt", make_zip());
  auto c = latest(fs);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->step, 100);
  EXPECT_EQ(c->path, kRun1 + "/policy_0100.pt");
  EXPECT_EQ(c->files.size(), 2u);
}

TEST(SkrlDiscovery, AModuleOnlyASiblingRunHasIsStillExpected) {
  // The resumed run (kRun2) has saved only policy_* so far; the older run shows the set is
  // policy + value, so kRun2's lone policy file is incomplete and kRun1's last set is chosen.
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/policy_100.pt", make_zip());
  fs.add_file(kRun1 + "/value_100.pt", make_zip());
  fs.add_file(kRun2 + "/policy_200.pt", make_zip());
  auto c = latest(fs);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->path, kRun1 + "/policy_100.pt");
}

TEST(SkrlDiscovery, NamesThatAreNotCheckpointsAreIgnored) {
  FakeCheckpointFs fs;
  for (const char* n :
       {"agent.pt", "agent_.pt", "_100.pt", "agent_12a.pt", "agent_100.pth", "notes.txt"})
    fs.add_file(kRun1 + "/" + n, make_zip());
  EXPECT_FALSE(latest(fs));
}

// --resume none makes no request at all (cli: kResumeWords); a request without a directory finds
// nothing.
TEST(Discovery, MissingDirectoryAndNoDirectoryGiveNothing) {
  FakeCheckpointFs fs;
  EXPECT_FALSE(latest(fs));
  fs.add_file(kRun1 + "/agent_1.pt", make_zip());
  EXPECT_FALSE(find_resume_checkpoint(ResumeRequest{"", "auto", Pick::kLatest}, fs));
  EXPECT_TRUE(latest(fs));
}

TEST(Discovery, UnreadableDirectoriesAreSkipped) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_1.pt", make_zip());
  fs.add_file(kRun2 + "/agent_5.pt", make_zip());
  fs.deny(kRoot + "/Isaac-Ant-v0/2025-01-02_12-30-00_ppo_torch");
  EXPECT_EQ(path_of(latest(fs)), kRun1 + "/agent_1.pt");
}

TEST(Discovery, UnreadableNewestFileIsSkipped) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_1.pt", make_zip());
  fs.add_file(kRun1 + "/locked/agent_9.pt", make_zip());
  fs.deny(kRun1 + "/locked/agent_9.pt");
  EXPECT_EQ(path_of(latest(fs)), kRun1 + "/agent_1.pt");
}

TEST(Discovery, SymlinkLoopsEnd) {
  FakeCheckpointFs fs;
  fs.add_file(kRun1 + "/agent_7.pt", make_zip());
  fs.add_symlink(kRun1 + "/loop", kRoot);            // back to the root
  fs.add_symlink(kRoot + "/self", kRoot + "/self");  // ELOOP
  fs.add_symlink(kRoot + "/dangling", "/nowhere");
  EXPECT_EQ(path_of(latest(fs)), kRun1 + "/agent_7.pt");
}

// The warnings a walk logs, captured.
std::string warnings_of_walk(FakeCheckpointFs& fs) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("walk", sink));
  spdlog::set_level(spdlog::level::warn);
  walk_tree(fs, kRoot);
  spdlog::set_default_logger(previous);
  spdlog::set_level(spdlog::level::info);
  return out.str();
}

// LeRobot (src/lerobot/common/train_utils.py update_last_checkpoint) points checkpoints/last at
// the newest checkpoints/<step> after every save: a second name of a directory, not a link loop.
TEST(Discovery, ALastLinkBesideItsTargetIsNoLinkLoop) {
  FakeCheckpointFs fs;
  const std::string ckpts = kRoot + "/outputs/train/act/checkpoints";
  for (const char* step : {"000100", "000200"}) {
    fs.add_file(ckpts + "/" + step + "/pretrained_model/model.safetensors", "w");
    fs.add_file(ckpts + "/" + step + "/training_state/training_step.json", "{}");
  }
  fs.add_symlink(ckpts + "/last", ckpts + "/000200");
  fs.add_symlink(ckpts + "/0_last", ckpts + "/000200");  // a link listed before its target
  fs.add_symlink(kRun1 + "/loop", kRoot);                // a real loop is still one
  const std::string log = warnings_of_walk(fs);
  EXPECT_EQ(log.find("last"), std::string::npos) << log;
  EXPECT_NE(log.find(kRun1 + "/loop: it links to a directory above it"), std::string::npos) << log;
  // The directory is walked under its own name.
  const Tree tree = walk_tree(fs, kRoot);
  EXPECT_NE(tree.find(ckpts + "/000200/pretrained_model"), kNoDir);
  EXPECT_EQ(tree.find(ckpts + "/0_last"), kNoDir);
}

TEST(Discovery, VeryDeepTree) {
  FakeCheckpointFs fs;
  std::string dir = kRoot;
  for (int i = 0; i < 400; ++i) dir += "/d";
  fs.add_file(dir + "/agent_3.pt", make_zip());
  EXPECT_EQ(path_of(latest(fs)), dir + "/agent_3.pt");
}

const std::string kIters = kRoot + "/cosmos/job/checkpoints";

// A DCP directory the way FileSystemWriter leaves it: two shards and a .metadata that refers to
// every byte of them (meta_t 0: no .metadata yet).
void add_dcp(FakeCheckpointFs& fs, const std::string& dir, std::int64_t shard_t,
             std::int64_t meta_t) {
  const std::int64_t now = fs.now();
  fs.set_now(std::max(shard_t, meta_t));  // directories get the time they were made
  fs.add_file(dir + "/__0_0.distcp", "shard0", shard_t);
  fs.add_file(dir + "/__1_0.distcp", "shard1", shard_t);
  if (meta_t > 0)
    fs.add_file(
        dir + "/.metadata",
        make_dcp_metadata({{"__0_0.distcp", 0, 4}, {"__0_0.distcp", 4, 2}, {"__1_0.distcp", 0, 6}}),
        meta_t);
  fs.set_now(now);
}

TEST(DcpDiscovery, CompleteByContent) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  add_dcp(fs, kRoot + "/out/checkpoint/step-1000", t, t + kS);
  add_dcp(fs, kRoot + "/out/checkpoint/step-2000", t + 10 * kS, t + 11 * kS);
  auto c = latest(fs, "dcp");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->path, kRoot + "/out/checkpoint/step-2000");
  EXPECT_EQ(c->step, 2000);
  EXPECT_EQ(c->format, "dcp");
  EXPECT_EQ(c->run_dir, kRoot + "/out");
  EXPECT_TRUE(c->directory);
  EXPECT_EQ(c->bytes, fs.stat(c->path + "/.metadata")->size + 6u + 6u);
}

TEST(DcpDiscovery, CopiedWithNewMtimesInAnyOrderIsComplete) {
  // aws s3 sync / cp -r: every file gets a new mtime, .metadata possibly older than the shards.
  FakeCheckpointFs fs;
  add_dcp(fs, kRoot + "/out/checkpoint/step-500", fs.now() - 5 * kS, fs.now() - 9 * kS);
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/out/checkpoint/step-500");
}

TEST(DcpDiscovery, MissingOrTruncatedShardIsRejected) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  add_dcp(fs, kRoot + "/out/checkpoint/step-100", t, t + kS);
  add_dcp(fs, kRoot + "/out/checkpoint/step-200", t, t + kS);
  fs.add_file(kRoot + "/out/checkpoint/step-200/__1_0.distcp", "shar", t);  // 4 of 6 bytes
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/out/checkpoint/step-100");
  fs.remove(kRoot + "/out/checkpoint/step-200/__1_0.distcp");
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/out/checkpoint/step-100");
}

TEST(DcpDiscovery, BareMetadataTmpAndShardsOnlyArePartial) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  add_dcp(fs, kRoot + "/c/step-1000", t, t + kS);
  add_dcp(fs, kRoot + "/c/step-2000", t + 10 * kS, 0);
  fs.add_file(kRoot + "/c/step-2000/.metadata.tmp", "half", t + 11 * kS);
  add_dcp(fs, kRoot + "/c/step-3000", t + 10 * kS, 0);
  EXPECT_EQ(path_of(latest(fs, "dcp")), kRoot + "/c/step-1000");
}

TEST(DcpDiscovery, MetadataThatIsNotAPickleIsRejected) {
  FakeCheckpointFs fs;
  add_dcp(fs, kRoot + "/c/step-1", fs.now() - 100 * kS, fs.now() - 99 * kS);
  add_dcp(fs, kRoot + "/c/step-2", fs.now() - 100 * kS, 0);
  fs.add_file(kRoot + "/c/step-2/.metadata", std::string(40, '\0'));
  std::string cut = make_dcp_metadata({{"__0_0.distcp", 0, 6}});
  add_dcp(fs, kRoot + "/c/step-3", fs.now() - 100 * kS, 0);
  fs.add_file(kRoot + "/c/step-3/.metadata", cut.substr(0, cut.size() - 3));
  EXPECT_EQ(path_of(latest(fs, "dcp")), kRoot + "/c/step-1");
}

TEST(DcpDiscovery, MetadataPointingOutsideTheDirectoryIsRejected) {
  FakeCheckpointFs fs;
  fs.add_file(kRoot + "/c/secret", "xxxxxxxx");
  fs.add_file(kRoot + "/c/step-9/.metadata", make_dcp_metadata({{"../secret", 0, 4}}));
  EXPECT_FALSE(latest(fs, "dcp"));
}

TEST(DcpDiscovery, SecondDumpFolderWhoseCounterRestartedWinsByTime) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 1000 * kS;
  add_dcp(fs, kRoot + "/run-a/checkpoint/step-9000", t, t + kS);
  add_dcp(fs, kRoot + "/run-b/checkpoint/step-100", t + 500 * kS, t + 501 * kS);
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/run-b/checkpoint/step-100");
}

TEST(CosmosDiscovery, IterationNeedsEveryPartAndThePointer) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  for (const char* part : {"model", "optim", "scheduler", "trainer"})
    add_dcp(fs, kIters + "/iter_000001000/" + part, t, t + kS);
  fs.add_file(kIters + "/latest_checkpoint.txt", "iter_000001000\n");
  add_dcp(fs, kIters + "/iter_000002000/model", t + 10 * kS, t + 11 * kS);  // crash after model/
  auto c = latest(fs);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->path, kIters + "/iter_000001000");
  EXPECT_EQ(c->format, "cosmos-rl");
  EXPECT_EQ(c->files.size(), 4u);
  // Every part written but the pointer not yet moved: not finished either.
  for (const char* part : {"optim", "scheduler", "trainer"})
    add_dcp(fs, kIters + "/iter_000002000/" + part, t + 10 * kS, t + 11 * kS);
  EXPECT_EQ(path_of(latest(fs)), kIters + "/iter_000001000");
  fs.add_file(kIters + "/latest_checkpoint.txt", "iter_000002000\n");
  EXPECT_EQ(path_of(latest(fs)), kIters + "/iter_000002000");
}

TEST(AutoDiscovery, UnstampedRunsAreOrderedByTheirNewestCheckpoint) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  fs.set_now(t);
  fs.add_file(kRoot + "/a/checkpoints/agent_1.pt", make_zip(), t);
  fs.set_now(t + 100 * kS);
  add_dcp(fs, kRoot + "/b/checkpoint/step-10", t + kS, t + 2 * kS);
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/b/checkpoint/step-10");
  fs.add_file(kRoot + "/a/checkpoints/agent_2.pt", make_zip(), t + 3 * kS);
  EXPECT_EQ(path_of(latest(fs)), kRoot + "/a/checkpoints/agent_2.pt");
}

TEST(GlobDiscovery, MarkerMakesAMatchCompleteAndOrdersByMarkerTime) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  fs.add_file(kRoot + "/run/step_300.bin", "x", t);
  fs.add_file(kRoot + "/run/step_300.bin.done", "", t + 1 * kS);
  fs.add_file(kRoot + "/run/step_100.bin", "x", t);
  fs.add_file(kRoot + "/run/step_100.bin.done", "", t + 5 * kS);  // completed last
  fs.add_file(kRoot + "/run/step_900.bin", "x", t + 9 * kS);      // no marker: partial
  fs.add_file(kRoot + "/run/step_200.bin", "x", t + 9 * kS);
  fs.add_file(kRoot + "/run/step_200.bin.done", "", t + 2 * kS);  // marker older than the data
  auto c = latest(fs, "glob:run/step_*.bin");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->path, kRoot + "/run/step_100.bin");
  EXPECT_EQ(c->format, "glob");
  EXPECT_EQ(c->step, 100);
  EXPECT_FALSE(latest(fs, "glob:*.bin"));  // FNM_PATHNAME: * does not cross '/'
}

TEST(GlobDiscovery, DirectoriesMatchToo) {
  FakeCheckpointFs fs;
  fs.add_file(kRoot + "/ckpt-5/weights", "w");
  fs.add_file(kRoot + "/ckpt-5.done", "", fs.now());  // after the directory was filled
  EXPECT_EQ(path_of(latest(fs, "glob:ckpt-*")), kRoot + "/ckpt-5");
}

TEST(GlobDiscovery, FrameworkMarkerPointerAndSettleRules) {
  FakeCheckpointFs fs;
  const std::int64_t t = fs.now() - 100 * kS;
  const std::int64_t now = fs.now();
  fs.set_now(t);  // the directories are made then
  fs.add_file(kRoot + "/save/s-10/weights", "w", t);
  fs.add_file(kRoot + "/save/s-10/done.json", "{}", t);
  fs.add_file(kRoot + "/save/s-20/weights", "w", t);  // no marker yet
  fs.set_now(now);
  EXPECT_EQ(path_of(latest(fs, "glob:save/s-*,marker=done.json")), kRoot + "/save/s-10");
  fs.add_file(kRoot + "/save/LATEST", "s-10\n", t);
  EXPECT_EQ(path_of(latest(fs, "glob:save/s-*,pointer=LATEST")), kRoot + "/save/s-10");
  fs.add_file(kRoot + "/save/s-20/weights", "w", fs.now() - kS);  // changed a second ago
  EXPECT_EQ(path_of(latest(fs, "glob:save/s-*,settle=30")), kRoot + "/save/s-10");
  fs.set_now(fs.now() + 60 * kS);
  EXPECT_EQ(path_of(latest(fs, "glob:save/s-*,settle=30")), kRoot + "/save/s-20");
  // Dated 10 minutes ahead of this node's clock: seen unchanged one 2 s window later (issue 58).
  fs.add_file(kRoot + "/save/s-30/weights", "w", fs.now() + 600 * kS);
  const std::int64_t before = fs.now();
  EXPECT_EQ(path_of(latest(fs, "glob:save/s-*,settle=30")), kRoot + "/save/s-30");
  EXPECT_LE(fs.now() - before, 2 * kS + kS / 100);
}

TEST(Formats, Validation) {
  for (const char* ok : {"auto", "skrl", "rsl_rl", "rl_games", "dcp", "torchtitan", "cosmos-rl",
                         "cosmos-predict2", "hf", "accelerate", "lightning", "deepspeed",
                         "glob:*.pt", "glob:a/b/*", "glob:x/*,marker=trainer_state.json",
                         "glob:x/*,pointer=latest", "glob:x/*,settle=5", "glob:x/*,done=.ok"})
    EXPECT_TRUE(validate_checkpoint_format(ok).ok()) << ok;
  for (const char* bad : {"", "SKRL", "glob:", "glob:/abs/*", "torch", "glob:x,settle=abc",
                          "glob:x,marker=a/b", "glob:x,when=now"}) {
    auto s = validate_checkpoint_format(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().exit_code(), 78);
    EXPECT_NE(s.error().message.find("--checkpoint-format"), std::string::npos);
  }
}

TEST(Formats, TheErrorNamesTheOptionGivenAndTheNearestFormat) {
  auto s = validate_checkpoint_format("skrll", "--format");  // `checkpoint latest --format`
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().exit_code(), 78);
  EXPECT_TRUE(
      s.error().message.starts_with("--format: 'skrll' (did you mean skrl?): expected one "
                                    "of auto, skrl, "))
      << s.error().message;
  EXPECT_EQ(s.error().message.find("--checkpoint-format"), std::string::npos);
  EXPECT_NE(validate_checkpoint_format("torchtitn")
                .error()
                .message.find("(did you mean "
                              "torchtitan?)"),
            std::string::npos);
}

}  // namespace
}  // namespace tv
