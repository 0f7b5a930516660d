// `run`'s rules, table by table: each row the options' values and the node's facts, and what the
// rule decides (launcher/plan/run_rules.h).
#include "launcher/plan/run_rules.h"

#include <gtest/gtest.h>

#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

using testing::FakeFileSystem;
using namespace std::chrono_literals;

FakeFileSystem sagemaker() {
  FakeFileSystem fs;
  fs.add_file("/opt/ml/checkpoints/step_1/model.pt", "x");
  fs.add_file("/opt/ml/input/config/resourceconfig.json", "{}");
  fs.add_node("/dev/termination-log");
  return fs;
}

TEST(RunRules, CheckpointDir) {
  const FakeFileSystem none, sm = sagemaker();
  struct Row {
    std::optional<std::string> given;
    const FileSystem& fs;
    std::optional<std::string> want;
  };
  for (const Row& r : std::initializer_list<Row>{
           {std::nullopt, none, std::nullopt},
           {std::nullopt, sm, "/opt/ml/checkpoints"},
           {"/data/ckpt", sm, "/data/ckpt"},  // the flag wins over SageMaker's directory
           {"/data/ckpt", none, "/data/ckpt"},
       })
    EXPECT_EQ(checkpoint_dir_rule(r.given, r.fs), r.want) << r.given.value_or("(none)");
}

TEST(RunRules, ExportDir) {
  const FakeFileSystem none, sm = sagemaker();
  const OptionValue what{"/work/out", "--export"};
  const std::string rc = "/opt/ml/input/config/resourceconfig.json";
  struct Row {
    std::optional<std::string> dir;
    Environment env;
    const FileSystem& fs;
    std::string want;  // "" = refused
  };
  for (const Row& r : std::initializer_list<Row>{
           {"/x", {{"SM_MODEL_DIR", "/sm"}}, sm, "/x"},
           {std::nullopt, {{"SM_MODEL_DIR", "/sm"}}, none, "/sm"},
           {std::nullopt, {{"SM_MODEL_DIR", ""}}, sm, "/opt/ml/model"},  // BYOC: no SM_*
           {std::nullopt, {}, sm, "/opt/ml/model"},
           {std::nullopt, {}, none, ""},
       }) {
    auto got = export_dir_rule({what, r.dir, rc}, r.env, r.fs);
    if (r.want.empty()) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.error().exit_code(), 78);
      EXPECT_NE(got.error().message.find("--export=\"/work/out\": no export directory"),
                std::string::npos)
          << got.error().message;
    } else {
      ASSERT_TRUE(got.ok()) << got.error().message;
      EXPECT_EQ(*got, r.want);
    }
  }
  // No resource config named: never "exists".
  EXPECT_FALSE(export_dir_rule({what, std::nullopt, ""}, {}, sm).ok());
}

TEST(RunRules, RendezvousPort) {
  struct Row {
    PortsAsked asked;
    int want;  // 0 = refused
  };
  for (const Row& r : std::initializer_list<Row>{
           {{std::nullopt, 29500, "--master-port", 2}, 29501},
           {{40000, 29500, "--master-port", 2}, 40000},
           {{std::nullopt, 65535, "PET_MASTER_PORT", 2}, 0},
           {{std::nullopt, 65535, "PET_MASTER_PORT", 1}, 65536},  // one node: no coordinator
           {{1234, 65535, "PET_MASTER_PORT", 2}, 1234},
       }) {
    auto got = rendezvous_port_rule(r.asked);
    if (r.want == 0) {
      ASSERT_FALSE(got.ok());
      EXPECT_NE(got.error().message.find("master port 65535 from PET_MASTER_PORT"),
                std::string::npos)
          << got.error().message;
    } else {
      ASSERT_TRUE(got.ok());
      EXPECT_EQ(*got, r.want);
    }
  }
}

TEST(RunRules, SignalsReachWorkersOnlyInsideASlurmStep) {
  EXPECT_TRUE(signals_reach_workers_rule({{"SLURM_JOB_ID", "7"}, {"SLURM_STEP_ID", "0"}}));
  EXPECT_FALSE(signals_reach_workers_rule({{"SLURM_JOB_ID", "7"}}));  // the batch script itself
  EXPECT_FALSE(signals_reach_workers_rule({}));
}

TEST(RunRules, TerminationLog) {
  const FakeFileSystem none, k8s = sagemaker();
  EXPECT_EQ(termination_log_rule(OptionValue{"/dev/termination-log", "default"}, k8s),
            "/dev/termination-log");
  EXPECT_EQ(termination_log_rule(OptionValue{"/dev/termination-log", "default"}, none), "");
  EXPECT_EQ(termination_log_rule(OptionValue{"/x/log", "--termination-log"}, none), "/x/log");
  EXPECT_EQ(termination_log_rule(std::nullopt, k8s), "");
}

TEST(RunRules, GraceUnderEachPlatformsStopWindow) {
  EXPECT_EQ(grace_rule(3s, Platform::kSageMaker, false), 3s);
  EXPECT_EQ(grace_rule(std::nullopt, Platform::kSageMaker, false), 110s);
  EXPECT_EQ(grace_rule(std::nullopt, Platform::kBatch, false), 25s);
  EXPECT_EQ(grace_rule(std::nullopt, Platform::kSlurm, false), 25s);
  EXPECT_GT(grace_rule(std::nullopt, Platform::kLocal, false), 0s);
}

TEST(RunRules, Resume) {
  const std::vector<std::string> isaac = {
      "python3", "-u", "train.py", "--task", "Isaac-Cartpole-v0", "--experiment_name", "cartpole"};
  struct Row {
    ResumeAsked asked;
    bool want;  // a lookup at all
    std::string experiment, task;
  };
  for (const Row& r : std::initializer_list<Row>{
           // no directory; --resume none
           {{std::nullopt, "auto", Pick::kLatest, isaac, std::nullopt}, false, "", ""},
           {{"/ckpt", "auto", std::nullopt, isaac, std::nullopt}, false, "", ""},
           {{"/ckpt", "auto", Pick::kLatest, isaac, std::nullopt},
            true,
            "cartpole",
            "Isaac-Cartpole-v0"},
           {{"/ckpt", "auto", Pick::kBest, isaac, "mine"}, true, "mine", "Isaac-Cartpole-v0"},
           {{"/ckpt", "auto", Pick::kLatest, {"/bin/true"}, std::nullopt}, true, "", ""},
       }) {
    const auto got = resume_rule(r.asked);
    ASSERT_EQ(got.has_value(), r.want) << r.asked.checkpoint_dir.value_or("(none)");
    if (!got) continue;
    EXPECT_EQ(got->dir, *r.asked.checkpoint_dir);
    EXPECT_EQ(got->format, r.asked.format);
    EXPECT_EQ(got->mode, *r.asked.pick);
    EXPECT_EQ(got->settle.count(), 0);  // no worker alive anywhere: nothing still writing
    EXPECT_EQ(got->experiment, r.experiment);
    EXPECT_EQ(got->task, r.task);
  }
}

}  // namespace
}  // namespace tv
