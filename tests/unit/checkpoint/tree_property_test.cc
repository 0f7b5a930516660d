// Property: no checkpoint tree crashes, hangs or costs more than linear work. Thousands of seeded
// random trees from the catalog's own name vocabulary (random_tree.h), every lookup on each; and
// trees of N and 8N entries, whose file system calls must grow by about 8, not 64.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <random>

#include "random_tree.h"

namespace tv {
namespace {

using testing::ByteSource;
using testing::FakeCheckpointFs;
using testing::RandomTree;

const std::string kRoot = "/ckpt";

std::vector<std::uint8_t> seeded_bytes(std::uint32_t seed, std::size_t n) {
  std::mt19937 gen(seed);
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(gen());
  return out;
}

class QuietLog : public ::testing::Test {
 protected:
  void SetUp() override { spdlog::set_level(spdlog::level::off); }
  void TearDown() override { spdlog::set_level(spdlog::level::info); }
};

using TreeProperty = QuietLog;

TEST_F(TreeProperty, TheVocabularyHasEveryLayoutsNames) {
  FakeCheckpointFs fs;
  RandomTree t(fs, kRoot);
  const auto& p = t.patterns();
  for (const char* name :
       {"agent_<t>.pt", "model_<iter>.pt", "last_<name>_ep_<e>_rew_<r>.pth", ".metadata",
        "iter_<09d>", "checkpoint-<N>", "last.ckpt", "global_step<N>", "_CHECKPOINT_METADATA",
        "<prefix>_<N>_steps.zip", "epoch_<N>", "step=<N>", "nn", "latest"})
    EXPECT_NE(std::find(p.begin(), p.end(), name), p.end()) << name;
}

// 1,500 trees in five tests of 300 (each one a ctest of its own: under ASan on 2 cores the whole
// run took CI's 120 s per test).
class RandomTrees : public QuietLog, public ::testing::WithParamInterface<std::uint32_t> {};

TEST_P(RandomTrees, NoRandomTreeCrashesOrAnswersOutsideItself) {
  constexpr std::uint32_t kTrees = 300;
  for (std::uint32_t seed = GetParam() * kTrees; seed < (GetParam() + 1) * kTrees; ++seed) {
    FakeCheckpointFs fs;
    RandomTree tree(fs, kRoot);
    const auto bytes = seeded_bytes(seed, 64 + seed % 512);
    ByteSource in(bytes);
    tree.build(in, 200);
    const std::string bad = testing::run_every_lookup(fs, kRoot);
    ASSERT_EQ(bad, "") << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(TreeProperty, RandomTrees, ::testing::Range(0u, 5u));

// ListedDir::children is every directory whose parent it is, ascending (what a pass over every
// directory of the tree would find).
TEST_F(TreeProperty, EveryDirectoryListsItsChildren) {
  for (std::uint32_t seed = 0; seed < 100; ++seed) {
    FakeCheckpointFs fs;
    RandomTree random(fs, kRoot);
    const auto bytes = seeded_bytes(seed, 64 + seed % 512);
    ByteSource in(bytes);
    random.build(in, 200);
    const Tree tree = walk_tree(fs, kRoot);
    std::vector<std::vector<std::uint32_t>> expected(tree.dirs.size());
    for (std::uint32_t i = 0; i < tree.dirs.size(); ++i)
      if (tree.dirs[i].parent != kNoDir) expected[tree.dirs[i].parent].push_back(i);
    for (std::uint32_t i = 0; i < tree.dirs.size(); ++i)
      ASSERT_EQ(tree.dirs[i].children, expected[i]) << "seed " << seed << ": " << tree.dirs[i].path;
  }
}

// The file system calls of the whole lookup on a tree of `entries` random entries.
long operations(std::uint32_t seed, std::size_t entries) {
  FakeCheckpointFs fs;
  RandomTree tree(fs, kRoot);
  const auto bytes = seeded_bytes(seed, entries * 64);
  ByteSource in(bytes);
  tree.build(in, entries);
  EXPECT_EQ(tree.entries(), entries);
  fs.stats = fs.lists = fs.reads = 0;
  ResumeRequest r{kRoot, "auto", Pick::kLatest};
  lookup_checkpoint(r, fs);
  r.mode = Pick::kBest;
  lookup_checkpoint(r, fs);
  return fs.stats + fs.lists + fs.reads;
}

TEST_F(TreeProperty, EightTimesTheEntriesCostAboutEightTimesTheCalls) {
  constexpr std::size_t kN = 400;
  for (std::uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const long small = operations(seed, kN), large = operations(seed + 100, 8 * kN);
    EXPECT_GT(small, 0) << "seed " << seed;
    std::printf("seed %u: %zu entries: %ld calls; %zu entries: %ld calls\n", seed, kN, small,
                8 * kN, large);
    // Linear: about 8x (each tree is its own draw: up to 2x either way); quadratic would be 64x.
    EXPECT_LE(large, 16 * small) << "seed " << seed << ": " << small << " -> " << large;
  }
}

}  // namespace
}  // namespace tv
