// The resume lookup of each (re)start runs off the loop (launcher/node/resume_wait.h): a
// lookup held by the FakeOffLoop (a checkpoint directory that does not answer) keeps the
// generation's workers from starting, and nothing else: the loop still takes a stop, the
// cluster's stop, and time, warns past the deadline naming the directory, and the workers start
// with the answer once it comes.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <csignal>
#include <memory>
#include <string>

#include "tests/unit/fakes/log_lines.h"
#include "tests/unit/node/supervisor_fixture.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::SupervisorTest;

using testing::LogLines;

class SupervisorResumeTest : public SupervisorTest {
 protected:
  void SetUp() override {
    SupervisorTest::SetUp();
    cfg_.resume_dir = "/ckpt";
    // Each generation resumes /ckpt/step_<g> (its lookup's answer) with `--resume PATH`.
    cfg_.find_resume = [](const GenerationPlan& plan) -> SupervisorConfig::ResumeLookup {
      return [g = plan.generation]() -> SupervisorConfig::ResumeAnswer {
        return [g] {
          const std::string path = "/ckpt/step_" + std::to_string(g);
          return std::optional<ResumeTarget>(ResumeTarget{path, {"--resume", path}});
        };
      };
    };
  }
  std::string last_arg(pid_t p) { return spawner_.child(p).req.argv.back(); }
};

TEST_F(SupervisorResumeTest, ARestartWaitsForItsLookupAndWarnsPastTheDeadline) {
  LogLines log;
  begin(/*restarts=*/1);
  EXPECT_TRUE(spawner_.spawned().empty());  // generation 0's lookup is under way
  ASSERT_TRUE(off_loop_.release());
  time_.run_ready();
  const auto w = workers(0);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(last_arg(w[0]), "/ckpt/step_0");

  spawner_.exit_code(w[0], 1);
  time_.run_ready();
  spawner_.exit(w[1], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  ASSERT_EQ(off_loop_.waiting(), 1u);  // generation 1's lookup: its directory does not answer
  time_.advance(9s);
  EXPECT_EQ(log.text().find("past its deadline"), std::string::npos);
  time_.advance(1s);
  const std::string said = log.text();
  EXPECT_NE(said.find("the resume lookup under /ckpt has taken 10 s, past its deadline of 10 s"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("generation 1 waits for it"), std::string::npos) << said;
  EXPECT_TRUE(workers(1).empty());
  EXPECT_FALSE(sup_->over());

  ASSERT_TRUE(off_loop_.release());
  time_.run_ready();
  const auto w1 = workers(1);
  ASSERT_EQ(w1.size(), 2u);
  EXPECT_EQ(last_arg(w1[1]), "/ckpt/step_1");
  for (pid_t p : w1) spawner_.exit_code(p, 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
}

// A stop while the lookup never returns (a hung NFS directory): the run ends 143 at once, and a
// late answer starts nothing.
TEST_F(SupervisorResumeTest, AStopEndsTheRunWhileTheLookupHangs) {
  begin();
  ASSERT_EQ(off_loop_.waiting(), 1u);
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  ASSERT_TRUE(sup_->over());
  ASSERT_TRUE(off_loop_.release());  // the directory answers after all
  time_.run_ready();
  EXPECT_TRUE(spawner_.spawned().empty());
  EXPECT_EQ(end(), 143);
  EXPECT_EQ(cluster_->calls, (std::vector<std::string>{"join", "leave 15"}));
}

// Another node fails while this one still looks up: it reports the generation stopped (no worker
// of it ran here) and the answer that comes after starts nothing.
TEST_F(SupervisorResumeTest, TheClustersStopDuringTheLookupIsAnsweredAtOnce) {
  begin();
  ASSERT_EQ(off_loop_.waiting(), 1u);
  cluster_->peer_failure(node_failure(0, 1, 1, "rank 2 (node 1): exit 1"));
  time_.run_ready();
  EXPECT_EQ(cluster_->calls.at(1), "stopped 0");
  ASSERT_TRUE(off_loop_.release());
  time_.run_ready();
  EXPECT_TRUE(spawner_.spawned().empty());
  ASSERT_TRUE(sup_->over());  // FakeCluster gives up: no restart left
  EXPECT_EQ(end(), 1);
}

}  // namespace
}  // namespace tv
