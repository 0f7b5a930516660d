// The rank directories under --log-dir are opened, and the heartbeat files read, off the loop
// (cfg_.log_off_loop; launcher/workers/heartbeat_reads.h): an opening held by a FakeOffLoop
// (a log directory that does not answer) keeps the generation's workers from starting and nothing
// else: a stop ends the run at once, the cluster's stop is answered, and a late answer starts
// nothing; a heartbeat read that hangs leaves the loop's checks going.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <string>
#include <vector>

#include "tests/unit/node/supervisor_fixture.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::FakeOffLoop;
using testing::SupervisorTest;

class SupervisorLogDirTest : public SupervisorTest {
 protected:
  void SetUp() override {
    SupervisorTest::SetUp();
    cfg_.log_off_loop = &slow_;
  }
  FakeOffLoop slow_;  // the log directory's calls wait until released
};

TEST_F(SupervisorLogDirTest, TheWorkersStartOnceTheirDirectoriesAreOpen) {
  begin();
  EXPECT_TRUE(spawner_.spawned().empty());  // generation 0's directories are being opened
  ASSERT_EQ(slow_.waiting(), 1u);
  time_.advance(30s);  // the loop goes on meanwhile
  EXPECT_FALSE(sup_->over());
  ASSERT_TRUE(slow_.release());
  time_.run_ready();
  const auto w = workers(0);
  ASSERT_EQ(w.size(), 2u);
  for (pid_t p : w) spawner_.exit_code(p, 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
}

TEST_F(SupervisorLogDirTest, AStopEndsTheRunWhileTheOpeningHangs) {
  begin();
  ASSERT_EQ(slow_.waiting(), 1u);
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  ASSERT_TRUE(sup_->over());
  ASSERT_TRUE(slow_.release());  // the directory answers after all
  time_.run_ready();
  EXPECT_TRUE(spawner_.spawned().empty());
  EXPECT_EQ(end(), 143);
}

TEST_F(SupervisorLogDirTest, TheClustersStopDuringTheOpeningIsAnsweredAtOnce) {
  begin();
  ASSERT_EQ(slow_.waiting(), 1u);
  cluster_->peer_failure(node_failure(0, 1, 1, "rank 2 (node 1): exit 1"));
  time_.run_ready();
  EXPECT_EQ(cluster_->calls.at(1), "stopped 0");
  ASSERT_TRUE(slow_.release());
  time_.run_ready();
  EXPECT_TRUE(spawner_.spawned().empty());
  ASSERT_TRUE(sup_->over());
  EXPECT_EQ(end(), 1);
}

// A heartbeat read that never returns: one read at a time (no pile of calls each check), and
// the workers are judged by their output alone meanwhile.
TEST_F(SupervisorLogDirTest, AHungHeartbeatReadIsNotRepeatedAndTheChecksGoOn) {
  cfg_.hang_timeout = 1000ms;
  cfg_.fs = &fs_;
  spawner_.dies_on = {SIGKILL, SIGTERM};
  begin();
  ASSERT_TRUE(slow_.release());  // the directories
  time_.run_ready();
  ASSERT_EQ(workers(0).size(), 2u);
  time_.advance(500ms);
  const std::size_t reads = slow_.started();
  EXPECT_EQ(slow_.waiting(), 1u);  // the first heartbeat read, held
  time_.advance(2000ms);
  EXPECT_EQ(slow_.started(), reads);         // none started beside it
  ASSERT_EQ(cluster_->failures.size(), 1u);  // silent past the hang timeout: hung, as before
  EXPECT_EQ(cluster_->failures[0].exit_code, 124);
}

}  // namespace
}  // namespace tv
