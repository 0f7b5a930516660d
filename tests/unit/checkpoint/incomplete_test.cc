// incomplete_checkpoints: what --export leaves out (docs/export.md), on in-memory trees.
#include "checkpoint/incomplete.h"

#include <gtest/gtest.h>

#include "resume_helpers.h"

namespace tv {
namespace {

using testing::FakeCheckpointFs;
using testing::kRoot;
using testing::make_zip;

const std::string kRun = kRoot + "/skrl/Isaac-Velocity-Rough-H1-v0/2026-12-01_10-00-00_ppo_torch";

TEST(IncompleteCheckpoints, TheCutSaveIsNamedAndTheWholeOnesAreNot) {
  FakeCheckpointFs fs;
  fs.add_file(kRun + "/checkpoints/agent_100.pt", make_zip());
  const std::string whole = make_zip(std::string(5000, 'w'));
  fs.add_file(kRun + "/checkpoints/agent_200.pt", whole.substr(0, 3000));  // SIGTERM mid-save
  fs.add_file(kRun + "/params/agent.yaml", "seed: 42\n");
  const auto cut = incomplete_checkpoints(fs, kRoot);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].path, kRun + "/checkpoints/agent_200.pt");
  EXPECT_FALSE(cut[0].reason.empty());
}

TEST(IncompleteCheckpoints, ASaveInItsSettleWindowIsCompleteOnceItsWriterHasEnded) {
  FakeCheckpointFs fs;
  fs.add_file(kRun + "/checkpoints/agent_100.pt", make_zip(), fs.now());  // written just now
  EXPECT_TRUE(incomplete_checkpoints(fs, kRoot).empty());
}

TEST(IncompleteCheckpoints, NoTreeNoneLeftOut) {
  FakeCheckpointFs fs;
  EXPECT_TRUE(incomplete_checkpoints(fs, kRoot + "/absent").empty());
}

}  // namespace
}  // namespace tv
