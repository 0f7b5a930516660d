// LocalRootCause (launcher/node/local_root_cause.h) on a roster of simulated workers: which
// of this node's workers is the root cause (error-file mtime, else reap time), the wait for one
// still exiting with its SIGTERM held, another node's stop claiming a failure here, and the
// report's record, time and signature.
#include "launcher/node/local_root_cause.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <vector>

#include "tests/unit/workers/roster_fixture.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::at_s;
using testing::ns_of;

class LocalRootCauseTest : public testing::RosterFixture {
 protected:
  LocalRootCause::Hooks hooks() {
    LocalRootCause::Hooks h;
    h.generation = [] { return 0; };
    h.healthy = [this] { return healthy_; };
    h.is_running = [this](int r) { return !roster_.at(r) || !roster_.at(r)->wait_status; };
    h.context = [](int) {
      FailureContext c;
      c.evidence = "  stacks: none";
      c.resumed_from = "/c/agent_10.pt";
      c.step = 12;
      return c;
    };
    h.send = [this](int g, NodeFailure f) {
      EXPECT_EQ(g, 0);
      sent_.push_back(std::move(f));
    };
    h.wall_now = [this] { return now_; };
    return h;
  }
  WorkerEnd failed(int local_rank, int code) {
    WorkerEnd e;
    e.local_rank = local_rank;
    e.exit_code = code;
    return e;
  }

  bool healthy_ = true;
  std::chrono::system_clock::time_point now_ = at_s(30);
  std::vector<NodeFailure> sent_;
  LocalRootCause cause_{io_, time_, fs_, roster_, layout(), 5000ms, hooks()};
};

TEST_F(LocalRootCauseTest, TheRankWhoseErrorFileIsOldestIsTheRootCauseNotTheFirstReaped) {
  auto a = start(0), b = start(1);
  roster_.exited(a->pid(), W_EXITCODE(1, 0), at_s(10));  // the group saw this one first
  roster_.exited(b->pid(), W_EXITCODE(3, 0), at_s(11));
  error_file(1, 8, "CUDA error: an illegal memory access");
  cause_.group_failed(0, failed(0, 1));
  ASSERT_EQ(sent_.size(), 1u);
  const NodeFailure& f = sent_[0];
  EXPECT_EQ(f.node_rank, 2);
  EXPECT_EQ(f.exit_code, 3);  // rank 7's own code
  EXPECT_EQ(f.failed_at_ns, ns_of(at_s(8)));
  EXPECT_NE(f.summary.find("rank 7"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("illegal memory access"), std::string::npos) << f.summary;
  EXPECT_EQ(f.signature.step, 12);
  EXPECT_EQ(f.resumed_from, "/c/agent_10.pt");
  ASSERT_EQ(cause_.causes().size(), 1u);
  EXPECT_EQ(cause_.causes()[0].rank, 7);
  EXPECT_EQ(cause_.causes()[0].evidence, "  stacks: none");
}

TEST_F(LocalRootCauseTest, ARootCauseStillExitingIsWaitedForItsSigtermHeldThenSent) {
  auto a = start(0), b = start(1);
  error_file(1, 5);  // written, still in teardown
  roster_.exited(a->pid(), W_EXITCODE(1, 0), at_s(9));
  cause_.group_failed(0, failed(0, 1));
  EXPECT_TRUE(sent_.empty());
  EXPECT_TRUE(cause_.holds(1, SIGTERM));
  EXPECT_FALSE(cause_.holds(1, SIGKILL));
  EXPECT_FALSE(cause_.holds(0, SIGTERM));
  time_.advance(RootCauseWait::kWindow);
  EXPECT_EQ(spawner_.child(b->pid()).signals.front(), SIGTERM);  // overdue: the held SIGTERM
  roster_.exited(b->pid(), W_EXITCODE(0, SIGTERM), at_s(12));
  cause_.worker_over(roster_.end_of(1));
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].exit_code, 128 + SIGTERM);  // its own status, at its error file's time
  EXPECT_EQ(sent_[0].failed_at_ns, ns_of(at_s(5)));
}

TEST_F(LocalRootCauseTest, AnotherNodesStopClaimsAFailureHereOnlyWhileTheGroupLooksHealthy) {
  auto a = start(0);
  start(1);
  cause_.claim(0);
  EXPECT_TRUE(sent_.empty());  // nothing failed here
  roster_.exited(a->pid(), W_EXITCODE(2, 0), at_s(4));
  healthy_ = false;  // this node's own failure is being handled already
  cause_.claim(0);
  EXPECT_TRUE(sent_.empty());
  healthy_ = true;
  cause_.claim(1);  // another generation's stop
  EXPECT_TRUE(sent_.empty());
  cause_.claim(0);
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].exit_code, 2);
  EXPECT_EQ(sent_[0].failed_at_ns, ns_of(at_s(4)));
}

TEST_F(LocalRootCauseTest, AHangStandsAsTheGroupSawItTimedNow) {
  start(0);
  error_file(0, 3);  // an old error file does not make a hung worker a crash
  WorkerEnd hang = failed(0, 124);
  hang.hang = true;
  cause_.group_failed(0, hang);
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].exit_code, 124);
  EXPECT_EQ(sent_[0].failed_at_ns, ns_of(now_));
  EXPECT_TRUE(cause_.causes()[0].hang);
}

}  // namespace
}  // namespace tv
