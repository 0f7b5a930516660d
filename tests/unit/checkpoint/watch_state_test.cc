// The watcher's scanning logic, driven scan by scan on an in-memory tree with a fake clock.
#include "checkpoint/watch_state.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "fake_checkpoint_fs.h"
#include "pickle_writer.h"

namespace tv {
namespace {

using testing::FakeCheckpointFs;
using testing::make_zip;
constexpr std::int64_t kS = FakeCheckpointFs::kSecond;
const std::string kDir = "/ckpt/2025-01-02_10-00-00_ppo_torch/checkpoints";

std::vector<std::string> paths(const std::vector<CheckpointEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.checkpoint.path);
  return out;
}

TEST(WatchState, WhatIsThereAtStartIsNotReported) {
  FakeCheckpointFs fs;
  fs.add_file(kDir + "/agent_1.pt", make_zip());
  fs.add_file(kDir + "/agent_2.pt", make_zip().substr(0, 20), fs.now() - 100 * kS);  // broken
  WatchState w("/ckpt", "auto");
  EXPECT_EQ(w.complete(), 0u);
  w.baseline(fs);
  EXPECT_EQ(w.complete(), 1u);  // what `checkpoint watch` says it found there already
  EXPECT_TRUE(w.scan(fs).empty());
}

TEST(WatchState, PollingReportsAFileOnceItsStatIsUnchangedAcrossTwoScans) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  const std::string p = kDir + "/agent_10.pt";
  fs.add_file(p, make_zip().substr(0, 20), fs.now());  // being written
  EXPECT_TRUE(w.scan(fs).empty());
  fs.set_now(fs.now() + kS / 10);
  fs.add_file(p, make_zip(), fs.now());  // finished
  EXPECT_TRUE(w.scan(fs).empty());       // end record intact, but did it stop changing?
  fs.set_now(fs.now() + kS / 10);
  auto events = w.scan(fs);
  ASSERT_EQ(paths(events), std::vector<std::string>{p});
  EXPECT_EQ(events[0].since_previous_seconds, -1);
  EXPECT_EQ(events[0].checkpoint.bytes, make_zip().size());
  EXPECT_TRUE(w.scan(fs).empty());  // once
}

// A save under way is told once, when first seen being written, and again for the next save of
// the same file once the first was complete; never for what was there, incomplete, at start.
TEST(WatchState, ASaveUnderWayIsToldOncePerSave) {
  FakeCheckpointFs fs;
  const std::string stale = kDir + "/agent_5.pt";
  fs.add_file(stale, make_zip().substr(0, 20), fs.now() - 100 * kS);  // a broken leftover
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  EXPECT_TRUE(w.take_started().empty());
  const std::string p = kDir + "/best_agent.pt";
  fs.add_file(p, make_zip().substr(0, 20), fs.now());  // being written
  EXPECT_TRUE(w.scan(fs).empty());
  fs.set_now(fs.now() + kS / 10);
  fs.add_file(p, make_zip().substr(0, 40), fs.now());  // still being written
  EXPECT_TRUE(w.scan(fs).empty());
  auto started = w.take_started();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].path, p);
  fs.set_now(fs.now() + kS / 10);
  fs.add_file(p, make_zip(), fs.now());
  w.note_closed(fs, p);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{p});
  EXPECT_TRUE(w.take_started().empty());
  fs.set_now(fs.now() + kS);
  fs.add_file(p, make_zip().substr(0, 30), fs.now());  // rewritten: the next save
  w.scan(fs);
  EXPECT_EQ(w.take_started().size(), 1u);
}

TEST(WatchState, CloseAfterWriteCountsAsStoppedChanging) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  const std::string p = kDir + "/agent_10.pt";
  fs.add_file(p, make_zip(), fs.now());
  w.note_closed(fs, p);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{p});
}

TEST(WatchState, OldEnoughFileIsReportedOnFirstSight) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "auto", 2 * kS);
  w.baseline(fs);
  fs.add_file(kDir + "/agent_10.pt", make_zip(),
              fs.now() - 3 * kS);  // e.g. another node, synced late
  EXPECT_EQ(w.scan(fs).size(), 1u);
}

TEST(WatchState, PartialFileIsNeverReported) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  fs.add_file(kDir + "/agent_10.pt", make_zip().substr(0, 30), fs.now() - 10 * kS);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(w.scan(fs).empty());
}

TEST(WatchState, WriteTimeAndIntervalComeFromTheFiles) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "auto", 0);
  w.baseline(fs);
  const std::int64_t t = fs.now();
  fs.add_file(kDir + "/agent_10.pt", make_zip(), t - 30 * kS);
  fs.add_file(kDir + "/agent_20.pt", make_zip(), t - 10 * kS);
  auto events = w.scan(fs);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].checkpoint.step, 10);  // oldest first
  EXPECT_EQ(events[1].since_previous_seconds, 20.0);
  EXPECT_EQ(events[1].write_seconds, 0.0);  // the fake's birth time = mtime
}

TEST(WatchState, RewrittenBestAgentIsReportedAgain) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "auto", 0);
  const std::string p = kDir + "/best_agent.pt";
  fs.add_file(p, make_zip(), fs.now() - 10 * kS);
  w.baseline(fs);
  EXPECT_TRUE(w.scan(fs).empty());
  fs.add_file(p, make_zip("better"), fs.now() - kS);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{p});
}

TEST(WatchState, DcpDirectoryIsReportedWhenItsMetadataLands) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "dcp");
  w.baseline(fs);
  const std::string d = "/ckpt/iter_000000100";
  fs.add_file(d + "/__0_0.distcp", "s", fs.now());
  fs.add_file(d + "/.metadata.tmp", "m", fs.now());
  EXPECT_TRUE(w.scan(fs).empty());
  fs.remove(d + "/.metadata.tmp");
  fs.add_file(d + "/.metadata", testing::make_dcp_metadata({{"__0_0.distcp", 0, 1}}), fs.now());
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{d});
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

TEST(WatchState, FileJustWrittenBeforeStartIsNotNews) {
  FakeCheckpointFs fs;
  fs.add_file(kDir + "/agent_1.pt", make_zip(), fs.now());  // inside the settle window
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  fs.set_now(fs.now() + 10 * kS);
  EXPECT_TRUE(w.scan(fs).empty());
}

TEST(WatchState, FileBeingWrittenAtStartIsReportedWhenDone) {
  FakeCheckpointFs fs;
  const std::string p = kDir + "/agent_1.pt";
  fs.add_file(p, make_zip().substr(0, 25), fs.now());
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  fs.add_file(p, make_zip(), fs.now());
  w.note_closed(fs, p);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{p});
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

TEST(WatchState, AskForASecondLookWhileAFileIsSettling) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  EXPECT_FALSE(w.settling());
  fs.add_file(kDir + "/agent_5.pt", make_zip(), fs.now());
  EXPECT_TRUE(w.scan(fs).empty());
  EXPECT_TRUE(w.settling());
  EXPECT_EQ(w.scan(fs).size(), 1u);
  EXPECT_FALSE(w.settling());
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// Counts what a scan touches of the checkpoint files themselves.
class CountingFs final : public CheckpointFs {
 public:
  FakeCheckpointFs inner;
  int touched = 0;
  Status list_each(const std::string& dir, const EachEntry& each) override {
    return inner.list_each(dir, each);
  }
  Result<FileStat> stat(const std::string& path) override {
    touched += path.ends_with(".pt");
    return inner.stat(path);
  }
  Result<std::string> read_range(const std::string& path, std::uint64_t offset,
                                 std::uint64_t length) override {
    touched += path.ends_with(".pt");
    return inner.read_range(path, offset, length);
  }
  std::int64_t now_ns() override { return inner.now_ns(); }
  void sleep_for(std::chrono::milliseconds d) override { inner.sleep_for(d); }
};

TEST(WatchState, CheckpointsAlreadyReportedAreNotReadAgain) {
  CountingFs fs;
  FakeCheckpointFs& tree = fs.inner;
  for (int t = 1; t <= 300; ++t)  // skrl store_separately: a set of two modules per step
    for (const char* module : {"policy", "value"})
      tree.add_file(kDir + "/" + module + "_" + std::to_string(t * 10) + ".pt", make_zip(),
                    tree.now());
  tree.set_now(tree.now() + 10 * kS);
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  EXPECT_GT(fs.touched, 0);
  fs.touched = 0;
  EXPECT_TRUE(w.scan(fs).empty());
  EXPECT_EQ(fs.touched, 0);  // 300 sets, none stat'ed or read again
  const std::string next = kDir + "/policy_3010.pt";
  tree.add_file(next, make_zip(), tree.now() - 10 * kS);
  tree.add_file(kDir + "/value_3010.pt", make_zip(), tree.now() - 10 * kS);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{next});
  fs.touched = 0;
  EXPECT_TRUE(w.scan(fs).empty());
  EXPECT_EQ(fs.touched, 0);
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// A real torch.save file (tests/data) whose second entry's local header is still zeros: what a
// tail-first writer has left before its body is all there.
std::pair<std::string, std::string> tail_first_file() {
  std::ifstream in(std::string(TV_TESTDATA) + "/checkpoint/agent_1000.pt", std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto second = whole.find(std::string("PK\x03\x04", 4), 4);
  std::string partial = whole;
  if (second != std::string::npos) std::fill_n(partial.begin() + second, 30, '\0');
  return {whole, partial};
}

TEST(WatchState, AFileWrittenTailFirstIsReportedOnceItsBodyIsThere) {
  const auto [whole, partial] = tail_first_file();
  ASSERT_NE(whole, partial);
  const std::int64_t old = FakeCheckpointFs().now() - 3600 * kS;  // a downloader's remote mtime
  for (const bool at_start : {false, true}) {
    FakeCheckpointFs fs;
    WatchState w("/ckpt", "auto");
    const std::string p = kDir + "/agent_20.pt";
    if (at_start) fs.add_file(p, partial, fs.now());  // being written when the watcher starts
    w.baseline(fs);                                   // at start: not taken as there already
    if (!at_start) fs.add_file(p, partial, old);
    EXPECT_TRUE(w.scan(fs).empty()) << at_start;
    EXPECT_TRUE(w.scan(fs).empty()) << at_start;
    fs.add_file(p, whole, old);  // the body arrives
    EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{p}) << at_start;
    EXPECT_TRUE(w.scan(fs).empty()) << at_start;
  }
}

TEST(WatchState, AStopRequestEndsTheWalkAndThePass) {
  FakeCheckpointFs fs;
  for (int s = 1; s <= 50; ++s)
    fs.add_file(kDir + "/agent_" + std::to_string(s) + ".pt", make_zip());
  std::atomic<bool> stop{true};
  fs.set_stop(&stop);
  EXPECT_TRUE(walk_tree(fs, "/ckpt").dirs.empty());
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  EXPECT_TRUE(w.scan(fs).empty());
  stop = false;
  fs.add_file(kDir + "/agent_51.pt", make_zip(), fs.now() - 3600 * kS);
  EXPECT_EQ(paths(w.scan(fs)).size(), 51u);  // nothing was seen while stopping
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// #22: between changes a scan stats the directories that can change, and walks nothing.
void add_dcp(FakeCheckpointFs& fs, const std::string& d, const std::string& payload = "s") {
  fs.add_file(d + "/__0_0.distcp", payload, fs.now() - 3600 * kS);
  fs.add_file(d + "/.metadata", testing::make_dcp_metadata({{"__0_0.distcp", 0, 1}}),
              fs.now() - 3600 * kS);
}

TEST(WatchState, ASteadyTreeCostsAStatPerDirectoryThatCanChangeAndNoListing) {
  FakeCheckpointFs fs;
  for (int s = 1; s <= 1000; ++s) add_dcp(fs, "/ckpt/outputs/checkpoint/step-" + std::to_string(s));
  fs.set_now(fs.now() + 10 * kS);
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  fs.stats = fs.lists = 0;
  for (int i = 0; i < 10; ++i) {
    fs.set_now(fs.now() + 2 * kS);
    EXPECT_TRUE(w.scan(fs).empty());
  }
  EXPECT_EQ(fs.lists, 0);
  // The root, outputs/, outputs/checkpoint/ and the kHotUnits newest step dirs every scan, and a
  // 1/kColdRounds slice of the other 996: 7 + 8 stats a scan, not 2,000.
  EXPECT_EQ(fs.stats, 10 * (3 + static_cast<int>(kHotUnits) + 8));
}

TEST(WatchState, ANewCheckpointBesideOldOnesIsFoundAtTheNextScan) {
  FakeCheckpointFs fs;
  for (int s = 1; s <= 100; ++s) add_dcp(fs, "/ckpt/step-" + std::to_string(s));
  for (int t = 1; t <= 100; ++t)
    fs.add_file(kDir + "/agent_" + std::to_string(t) + ".pt", make_zip());
  fs.set_now(fs.now() + 10 * kS);
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  fs.set_now(fs.now() + 2 * kS);
  EXPECT_TRUE(w.scan(fs).empty());
  // Another host's writes: old mtimes (its clock), and no inotify event here.
  add_dcp(fs, "/ckpt/step-101");
  fs.set_now(fs.now() + 2 * kS);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{"/ckpt/step-101"});
  fs.set_now(fs.now() + 2 * kS);
  fs.add_file(kDir + "/agent_101.pt", make_zip(), fs.now() - 3600 * kS);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{kDir + "/agent_101.pt"});
}

TEST(WatchState, ACheckpointCompletingInADirectoryThatWasThereIsFound) {
  FakeCheckpointFs fs;
  for (int s = 1; s <= 100; ++s) add_dcp(fs, "/ckpt/step-" + std::to_string(s));
  const std::string d = "/ckpt/step-200";
  fs.add_file(d + "/__0_0.distcp", "s", fs.now());  // shards written, no .metadata yet
  fs.set_now(fs.now() + 10 * kS);
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  for (int i = 0; i < 3; ++i) {
    fs.set_now(fs.now() + 2 * kS);
    EXPECT_TRUE(w.scan(fs).empty());
  }
  fs.add_file(d + "/.metadata", testing::make_dcp_metadata({{"__0_0.distcp", 0, 1}}),
              fs.now() - 3600 * kS);
  fs.set_now(fs.now() + 2 * kS);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{d});
  // A file growing in place (its directory's stat does not move) is found by its own stat.
  const std::string p = kDir + "/agent_7.pt";
  fs.add_file(p, make_zip().substr(0, 20), fs.now());
  fs.set_now(fs.now() + 10 * kS);
  EXPECT_TRUE(w.scan(fs).empty());
  fs.set_now(fs.now() + 10 * kS);
  EXPECT_TRUE(w.scan(fs).empty());
  fs.add_file(p, make_zip(), fs.now() - 5 * kS);
  fs.set_now(fs.now() + 2 * kS);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{p});
}

TEST(WatchState, AChangeInTheTickOfTheListingOrAnMtimeSetBackIsNotMissed) {
  FakeCheckpointFs fs;
  fs.add_file(kDir + "/agent_1.pt", make_zip());
  WatchState w("/ckpt", "auto");
  w.baseline(fs);  // the directory's mtime is this very tick: its listing cannot be trusted
  fs.add_file(kDir + "/agent_2.pt", make_zip());  // same tick: the directory's mtime stays
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{kDir + "/agent_2.pt"});
  fs.set_now(fs.now() + 10 * kS);
  EXPECT_TRUE(w.scan(fs).empty());
  fs.set_now(fs.now() + 10 * kS);
  EXPECT_TRUE(w.scan(fs).empty());  // settled: a stat, no walk
  const int lists = fs.lists;
  fs.set_now(fs.now() + 2 * kS);
  EXPECT_TRUE(w.scan(fs).empty());
  EXPECT_EQ(fs.lists, lists);
  // A sync tool restores the directory's old mtime after adding a file: the ctime moved.
  std::int64_t old = 0;
  {
    auto st = fs.stat(kDir);
    ASSERT_TRUE(st);
    old = st->mtime_ns;
  }
  fs.add_file(kDir + "/agent_3.pt", make_zip());
  fs.set_mtime(kDir, old);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{kDir + "/agent_3.pt"});
}

TEST(WatchState, AnOldDirectoryCheckpointRewrittenIsFoundWithinTheColdRounds) {
  FakeCheckpointFs fs;
  for (int s = 1; s <= 300; ++s) {  // saved one after another: the newest has the newest mtime
    fs.set_now(fs.now() + kS);
    add_dcp(fs, "/ckpt/step-" + std::to_string(s));
  }
  fs.set_now(fs.now() + 10 * kS);
  WatchState w("/ckpt", "dcp");
  w.baseline(fs);
  fs.set_now(fs.now() + 10 * kS);
  fs.remove("/ckpt/step-5/.metadata");  // saved again into the same directory
  fs.add_file("/ckpt/step-5/.metadata", testing::make_dcp_metadata({{"__0_0.distcp", 0, 1}}),
              fs.now() - kS);
  std::size_t scans = 0;
  std::vector<std::string> found;
  while (found.empty() && scans <= kColdRounds) {
    fs.set_now(fs.now() + 2 * kS);
    found = paths(w.scan(fs));
    ++scans;
  }
  EXPECT_EQ(found, std::vector<std::string>{"/ckpt/step-5"});
  EXPECT_LE(scans, kColdRounds);
  // The newest are stat'ed at every scan: one of them rewritten is found at the next.
  fs.set_now(fs.now() + 10 * kS);
  EXPECT_TRUE(w.scan(fs).empty());
  fs.remove("/ckpt/step-300/.metadata");
  fs.add_file("/ckpt/step-300/.metadata", testing::make_dcp_metadata({{"__0_0.distcp", 0, 1}}),
              fs.now() - kS);
  fs.set_now(fs.now() + 2 * kS);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{"/ckpt/step-300"});
}

TEST(WatchState, ADirectoryThatAppearsLaterIsWatched) {
  FakeCheckpointFs fs;
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
  fs.set_now(fs.now() + 10 * kS);
  EXPECT_TRUE(w.scan(fs).empty());
  fs.add_file(kDir + "/agent_1.pt", make_zip());
  fs.set_now(fs.now() + 2 * kS);
  EXPECT_EQ(paths(w.scan(fs)), std::vector<std::string>{kDir + "/agent_1.pt"});
}

}  // namespace
}  // namespace tv
