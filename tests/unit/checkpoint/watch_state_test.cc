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
  WatchState w("/ckpt", "auto");
  w.baseline(fs);
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
