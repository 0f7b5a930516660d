// #20 item 6: a checkpoint directory holding the runs of several experiments (Isaac Lab's
// logs/<framework>/<experiment>/<run>/...) is resumed only within this job's experiment.
#include "checkpoint/experiments.h"

#include <gtest/gtest.h>

#include "checkpoint/resume.h"
#include "resume_helpers.h"

namespace tv {
namespace {

using testing::FakeCheckpointFs;
using testing::kRoot;
using testing::make_zip;

Selection pick(FakeCheckpointFs& fs, const std::string& experiment, const std::string& task) {
  ResumeRequest r{kRoot, "auto", Pick::kLatest};
  r.settle = std::chrono::milliseconds(0);
  r.experiment = experiment;
  r.task = task;
  return lookup_checkpoint(r, fs);
}

// Seed 001's /efs/models: skrl's logs/skrl is a link to it, one directory per task's experiment.
void skrl_two_experiments(FakeCheckpointFs& fs) {
  fs.add_file(kRoot + "/h1_rough/2025-01-02_10-00-00_ppo_torch/checkpoints/agent_400.pt",
              make_zip());
  fs.add_file(kRoot + "/h1_flat/2025-01-03_10-00-00_ppo_torch/checkpoints/agent_900.pt",
              make_zip());  // newer, another task's
}

TEST(Experiments, TheTaskPicksItsOwnExperimentNotTheNewerOne) {
  FakeCheckpointFs fs;
  skrl_two_experiments(fs);
  Selection s = pick(fs, "", "Isaac-Velocity-Rough-H1-v0");
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_EQ(s.checkpoint->path,
            kRoot + "/h1_rough/2025-01-02_10-00-00_ppo_torch/checkpoints/agent_400.pt");
  s = pick(fs, "", "Isaac-Velocity-Flat-H1-v0");
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_NE(s.checkpoint->path.find("h1_flat"), std::string::npos);
}

TEST(Experiments, WhenNothingTellsNothingIsResumedAndOneLineSaysWhy) {
  FakeCheckpointFs fs;
  skrl_two_experiments(fs);
  for (const std::string task : {"", "Isaac-Ant-v0"}) {
    const Selection s = pick(fs, "", task);
    EXPECT_FALSE(s.checkpoint) << task;
    EXPECT_EQ(s.none, Selection::None::kOtherExperiments);
    EXPECT_NE(s.why_none.find("h1_flat, h1_rough"), std::string::npos) << s.why_none;
    EXPECT_NE(s.why_none.find("--checkpoint-experiment"), std::string::npos) << s.why_none;
    EXPECT_EQ(s.why_none.find('\n'), std::string::npos);
  }
}

TEST(Experiments, AnExplicitNameWinsAndMustExist) {
  FakeCheckpointFs fs;
  skrl_two_experiments(fs);
  Selection s = pick(fs, "h1_rough", "Isaac-Velocity-Flat-H1-v0");
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_NE(s.checkpoint->path.find("h1_rough"), std::string::npos);
  s = pick(fs, "h1_stairs", "");
  EXPECT_FALSE(s.checkpoint);
  EXPECT_NE(s.why_none.find("none is h1_stairs"), std::string::npos) << s.why_none;
  // One experiment only, another one's: an explicit name still refuses it.
  FakeCheckpointFs flat_only;
  flat_only.add_file(kRoot + "/h1_flat/2025-01-03_10-00-00_ppo_torch/checkpoints/agent_9.pt",
                     make_zip());
  EXPECT_FALSE(pick(flat_only, "h1_rough", "").checkpoint);
}

TEST(Experiments, OneExperimentOrTheExperimentDirectoryItselfIsNotScoped) {
  FakeCheckpointFs fs;  // --checkpoint-dir logs/rsl_rl/h1_rough: runs directly in it
  fs.add_file(kRoot + "/2025-01-02_10-00-00/model_50.pt", make_zip());
  fs.add_file(kRoot + "/2025-01-03_10-00-00/model_10.pt", make_zip());
  Selection s = pick(fs, "h1_rough", "Isaac-Velocity-Rough-H1-v0");
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_EQ(s.checkpoint->path, kRoot + "/2025-01-03_10-00-00/model_10.pt");
}

TEST(Experiments, RslRlAndRlGamesExperimentsComeFromTheirPaths) {
  FakeCheckpointFs fs;
  fs.add_file(kRoot + "/anymal_c_rough/2025-01-02_10-00-00/model_50.pt", make_zip());
  fs.add_file(kRoot + "/anymal_c_flat/2025-01-05_10-00-00/model_80.pt", make_zip());
  Selection s = pick(fs, "", "Isaac-Velocity-Rough-Anymal-C-v0");
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_NE(s.checkpoint->path.find("anymal_c_rough"), std::string::npos);
  // Plain rl_games: runs/<name>_<%d-%H-%M-%S>/nn/ (rl_games a2c_common.py A2CBase.__init__).
  FakeCheckpointFs g;
  g.add_file(kRoot + "/Ant_02-10-00-00/nn/last_Ant_ep_100_rew_5.0.pth", make_zip());
  g.add_file(kRoot + "/Humanoid_03-10-00-00/nn/last_Humanoid_ep_300_rew_9.0.pth", make_zip());
  s = pick(g, "Ant", "");
  ASSERT_TRUE(s.checkpoint) << s.why_none;
  EXPECT_NE(s.checkpoint->path.find("Ant_02"), std::string::npos);
  EXPECT_FALSE(pick(g, "", "").checkpoint);
}

TEST(Experiments, TheTaskRuleTakesTheMostSpecificAndRefusesTies) {
  EXPECT_EQ(experiment_for_task("Isaac-Ant-Direct-v0", {"ant", "ant_direct"}), "ant_direct");
  EXPECT_EQ(experiment_for_task("Isaac-Ant-v0", {"ant", "ant_direct"}), "ant");
  EXPECT_EQ(experiment_for_task("Isaac-Velocity-Rough-H1-v0", {"h1_flat", "h1_rough"}), "h1_rough");
  EXPECT_EQ(experiment_for_task("Isaac-Velocity-Rough-H1-v0", {"h1", "rough"}), "");  // a tie
  EXPECT_EQ(experiment_for_task("Isaac-Velocity-Rough-H1-v0", {"g1_rough"}), "");
}

TEST(Experiments, TheWorkerArgumentsNameTheExperimentAsTheFrameworksReadThem) {
  auto w = experiment_from_worker_argv(
      {"/isaac-sim/python.sh", "train.py", "--task=Isaac-Velocity-Rough-H1-v0", "--headless"});
  EXPECT_EQ(w.task, "Isaac-Velocity-Rough-H1-v0");
  EXPECT_EQ(w.name, "");
  w = experiment_from_worker_argv({"train.py", "--task", "T", "--experiment_name", "mine"});
  EXPECT_EQ(w.name, "mine");
  EXPECT_EQ(w.task, "T");
  EXPECT_EQ(experiment_from_worker_argv({"train.py", "agent.agent.experiment.directory=x"}).name,
            "x");
  EXPECT_EQ(experiment_from_worker_argv({"train.py", "agent.params.config.name=y"}).name, "y");
  EXPECT_EQ(experiment_from_worker_argv({"train.py", "--task"}).task, "");  // no value
}

}  // namespace
}  // namespace tv
