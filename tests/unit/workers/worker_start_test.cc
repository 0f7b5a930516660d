#include "launcher/workers/worker_start.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <vector>

#include "common/exit_codes.h"
#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/fakes/temp_dir.h"
#include "tests/unit/workers/fake_rank_dirs.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv {
namespace {

using testing::FakeFileSystem;
using testing::FakeRankDirs;
using testing::FakeSpawner;
using testing::SimLoopTime;
using testing::TempDir;

class WorkerStartTest : public ::testing::Test {
 protected:
  WorkerStartSetup setup() const {
    WorkerStartSetup s;
    s.layout.node_rank = 1;
    s.layout.nnodes = 2;
    s.layout.nproc_per_node = 2;
    s.executable = "/opt/train/worker";
    s.argv = {"worker", "--lr", "0.1"};
    s.base_env = Environment({{"PATH", "/usr/bin:/bin"}, {"ISAAC_PATH", "/isaac-sim"}});
    s.work_dir = tmp_.path();
    return s;
  }
  EvidenceSetup evidence_setup() const {
    EvidenceSetup e;
    e.stacks = false;
    e.work_dir = tmp_.path();
    return e;
  }

  boost::asio::io_context io_;
  SimLoopTime time_;
  FakeSpawner spawner_{io_};
  FakeFileSystem fs_;
  FakeRankDirs dirs_;
  TempDir tmp_{"tv-worker-start"};
  EvidenceFiles evidence_{evidence_setup(), fs_};
  std::vector<pid_t> exits_;
  WorkerStart start_{io_,
                     time_,
                     spawner_,
                     dirs_,
                     evidence_,
                     setup(),
                     [this](pid_t p, int) { exits_.push_back(p); }};
};

TEST_F(WorkerStartTest, AWorkerGetsItsRanksFilesEnvironmentAndTheResumeArguments) {
  ASSERT_TRUE(start_.open_rank_dirs(2));
  GenerationPlan plan;
  plan.generation = 2;
  plan.master_port = 29517;
  const ResumeTarget resume{"/ck/step_10", {"--resume", "/ck/step_10"}};
  auto started = start_.start(1, plan, resume, nullptr);
  ASSERT_TRUE(started) << started.error().message;
  ASSERT_TRUE(started->worker);
  EXPECT_EQ(started->worker->id().rank, 3);  // node 1's local rank 1 of 2 per node
  const std::string dir = tmp_.path().string() + "/attempt_2/rank_3";
  EXPECT_EQ(started->worker->id().error_file, dir + "/error.json");
  EXPECT_TRUE(std::filesystem::is_directory(dir));

  const auto& req = spawner_.child(started->pid).req;
  EXPECT_EQ(req.executable, "/opt/train/worker");
  EXPECT_EQ(req.argv,
            (std::vector<std::string>{"worker", "--lr", "0.1", "--resume", "/ck/step_10"}));
  EXPECT_EQ(req.env.get("RANK"), "3");
  EXPECT_EQ(req.env.get("LOCAL_RANK"), "1");
  EXPECT_EQ(req.env.get("MASTER_PORT"), "29517");
  EXPECT_EQ(req.env.get("TORCHELASTIC_ERROR_FILE"), dir + "/error.json");
  EXPECT_EQ(req.env.get("TRAINVISOR_RESUME_CHECKPOINT"), "/ck/step_10");
  EXPECT_EQ(req.env.get("ISAAC_PATH"), "/isaac-sim");  // the platform's environment passes
  EXPECT_GE(req.stdout_fd, 0);
  EXPECT_GE(req.stderr_fd, 0);
  // The next standbys are prepared with exactly what the worker got.
  EXPECT_EQ(start_.rank_envs().at(1).get("RANK"), "3");
  // Stale files of an earlier run in the same --log-dir are cleared as the directories open,
  // every local rank's (two here) before any worker starts.
  EXPECT_EQ(dirs_.removed(),
            (std::vector<std::string>{"error.json", "stacks.txt", "error.json", "stacks.txt"}));
  // Its exit reaches the owner's callback.
  spawner_.exit_code(started->pid, 0);
  io_.poll();
  EXPECT_EQ(exits_, std::vector<pid_t>{started->pid});
}

TEST_F(WorkerStartTest, ARefusedRankDirectoryIsOneErrorBeforeAnyWorkerStarts) {
  dirs_.refuse(0, 3);
  auto opened = start_.open_rank_dirs(0);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().exit_code(), exit_code_of(ErrorKind::kConfig));
  EXPECT_EQ(opened.error().message,
            "generation 0 not started: " + tmp_.path().string() +
                "/attempt_0/rank_3: a symbolic link, not followed: expected a directory of "
                "trainvisor's own (its user's, writable by no one else)");
  EXPECT_TRUE(spawner_.spawned().empty());
}

TEST_F(WorkerStartTest, AnExecErrorIsTheWorkersExitCodeAndNoResumeMeansNoResumeVariable) {
  ASSERT_TRUE(start_.open_rank_dirs(0));
  spawner_.fail_next = Error{ErrorKind::kNotFound, "worker: not found"};
  auto failed = start_.start(0, GenerationPlan{}, std::nullopt, nullptr);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().exit_code(), exit_code_of(ErrorKind::kNotFound));
  EXPECT_EQ(failed.error().message, "worker: not found");
  auto started = start_.start(1, GenerationPlan{}, std::nullopt, nullptr);
  ASSERT_TRUE(started);
  const auto& req = spawner_.child(started->pid).req;
  EXPECT_EQ(req.argv, (std::vector<std::string>{"worker", "--lr", "0.1"}));
  EXPECT_FALSE(req.env.get("TRAINVISOR_RESUME_CHECKPOINT"));
}

}  // namespace
}  // namespace tv
