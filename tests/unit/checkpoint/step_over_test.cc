// ResumeRequest::step_over (--resume-fallback): a save the job's ledger marks poisoned is never
// picked; the lookup goes on to the newest complete checkpoint before it, in every kind of pass
// (the newest of the one-pass recognition, the heap over every key, glob), and a save written
// again at the same path later is a new one.
#include <gtest/gtest.h>

#include "resume_helpers.h"

namespace tv::testing {
namespace {

const std::string kCk = kRoot + "/logs/skrl/Ant/2025-01-01_00-00-00_ppo_torch/checkpoints";

std::optional<Checkpoint> stepping_over(FakeCheckpointFs& fs, std::vector<CheckpointSave> saves,
                                        const std::string& format = "auto") {
  ResumeRequest r{kRoot, format, Pick::kLatest};
  r.step_over = std::move(saves);
  return find_resume_checkpoint(r, fs);
}

TEST(StepOver, TheMarkedNewestGivesTheNewestCompleteBeforeIt) {
  FakeCheckpointFs fs;
  fs.add_file(kCk + "/agent_10.pt", make_zip(), 10 * kS);
  fs.add_file(kCk + "/agent_20.pt", make_zip(), 20 * kS);
  fs.add_file(kCk + "/agent_30.pt", make_zip(), 30 * kS);
  EXPECT_EQ(path_of(latest(fs)), kCk + "/agent_30.pt");
  EXPECT_EQ(path_of(stepping_over(fs, {{kCk + "/agent_30.pt", 0}})), kCk + "/agent_20.pt");
  EXPECT_EQ(path_of(stepping_over(fs, {{kCk + "/agent_30.pt", 30 * kS}})), kCk + "/agent_20.pt");
  // Two marks: the one before both.
  EXPECT_EQ(path_of(stepping_over(fs, {{kCk + "/agent_30.pt", 0}, {kCk + "/agent_20.pt", 0}})),
            kCk + "/agent_10.pt");
  // An older mark changes nothing.
  EXPECT_EQ(path_of(stepping_over(fs, {{kCk + "/agent_10.pt", 0}})), kCk + "/agent_30.pt");
}

TEST(StepOver, AnIncompleteCheckpointBeforeTheMarkIsSkippedToo) {
  FakeCheckpointFs fs;
  fs.add_file(kCk + "/agent_10.pt", make_zip(), 10 * kS);
  fs.add_file(kCk + "/agent_20.pt", make_zip().substr(0, 12), 20 * kS);  // cut off
  fs.add_file(kCk + "/agent_30.pt", make_zip(), 30 * kS);
  EXPECT_EQ(path_of(stepping_over(fs, {{kCk + "/agent_30.pt", 0}})), kCk + "/agent_10.pt");
  EXPECT_EQ(path_of(stepping_over(fs, {{kCk + "/agent_30.pt", 0}, {kCk + "/agent_10.pt", 0}})),
            "<none>");
}

TEST(StepOver, TheSameStepSavedAgainAtThePathIsANewSave) {
  FakeCheckpointFs fs;
  fs.add_file(kCk + "/agent_20.pt", make_zip(), 20 * kS);
  fs.add_file(kCk + "/agent_30.pt", make_zip(), 90 * kS);  // written again after the fallback
  EXPECT_EQ(path_of(stepping_over(fs, {{kCk + "/agent_30.pt", 30 * kS}})), kCk + "/agent_30.pt");
}

TEST(StepOver, DirectoryCheckpointsAndGlobToo) {
  FakeCheckpointFs fs;
  dcp(fs, kRoot + "/checkpoint/step-100", 10 * kS);
  dcp(fs, kRoot + "/checkpoint/step-200", 20 * kS);
  EXPECT_EQ(path_of(stepping_over(fs, {{kRoot + "/checkpoint/step-200", 0}})),
            kRoot + "/checkpoint/step-100");
  EXPECT_EQ(path_of(stepping_over(fs, {{kRoot + "/checkpoint/step-200", 0}},
                                  "glob:checkpoint/step-*,marker=.metadata")),
            kRoot + "/checkpoint/step-100");
}

}  // namespace
}  // namespace tv::testing
