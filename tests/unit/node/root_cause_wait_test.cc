// RootCauseWait on simulated time: the waited rank's SIGTERM is held until the window (the
// shorter of 2 s and the grace period) passes, then `overdue` runs once; its own failing exit is
// the report, an exit 0 gives the group's first failure back (or nothing); another rank's exit
// and a cancelled wait change nothing.
#include "launcher/node/root_cause_wait.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::SimLoopTime;

class RootCauseWaitTest : public ::testing::Test {
 protected:
  void wait_for(int rank, std::optional<WorkerEnd> first_seen, std::chrono::milliseconds grace) {
    wait_.wait(rank, first_seen, grace, [this](int r) { overdue_.push_back(r); });
  }
  static WorkerEnd end(int rank, int code) { return WorkerEnd{rank, code}; }

  boost::asio::io_context io_;
  SimLoopTime time_;
  RootCauseWait wait_{io_, time_};
  std::vector<int> overdue_;
};

TEST_F(RootCauseWaitTest, ItsSigtermIsHeldForTheWindowThenItIsOverdueOnce) {
  wait_for(0, end(1, 1), 5000ms);
  EXPECT_TRUE(wait_.waiting());
  EXPECT_TRUE(wait_.holds(0, SIGTERM));
  EXPECT_FALSE(wait_.holds(0, SIGKILL));  // the grace period's end is never held
  EXPECT_FALSE(wait_.holds(1, SIGTERM));
  time_.advance(1999ms);
  EXPECT_TRUE(overdue_.empty());
  time_.advance(1ms);
  EXPECT_EQ(overdue_, std::vector<int>{0});
  time_.advance(10s);
  EXPECT_EQ(overdue_, std::vector<int>{0});
  EXPECT_TRUE(wait_.waiting());  // still waiting for its exit
}

TEST_F(RootCauseWaitTest, AGracePeriodShorterThanTheWindowIsTheWindow) {
  wait_for(2, std::nullopt, 500ms);
  time_.advance(499ms);
  EXPECT_TRUE(overdue_.empty());
  time_.advance(1ms);
  EXPECT_EQ(overdue_, std::vector<int>{2});
}

TEST_F(RootCauseWaitTest, ItsFailingExitIsTheReportAndAnExitZeroGivesTheFirstFailureBack) {
  wait_for(0, end(1, 1), 5000ms);
  EXPECT_FALSE(wait_.ended(end(2, 143)).waited);  // another rank's end
  const auto own = wait_.ended(end(0, 7));
  EXPECT_TRUE(own.waited);
  ASSERT_TRUE(own.report);
  EXPECT_EQ(own.report->local_rank, 0);
  EXPECT_EQ(own.report->exit_code, 7);
  EXPECT_FALSE(wait_.waiting());
  time_.advance(5s);
  EXPECT_TRUE(overdue_.empty());  // its exit ended the wait and its timer

  wait_for(0, end(1, 1), 5000ms);
  const auto zero = wait_.ended(end(0, 0));
  ASSERT_TRUE(zero.report);
  EXPECT_EQ(zero.report->local_rank, 1);  // it exited 0 after all: the group's own first failure

  wait_for(0, std::nullopt, 5000ms);  // another node's stop, nothing failed here first
  const auto none = wait_.ended(end(0, 0));
  EXPECT_TRUE(none.waited);
  EXPECT_FALSE(none.report);
}

TEST_F(RootCauseWaitTest, ACancelledWaitHoldsNothingAndIsNeverOverdue) {
  wait_for(0, end(1, 1), 5000ms);
  wait_.cancel();
  EXPECT_FALSE(wait_.holds(0, SIGTERM));
  EXPECT_FALSE(wait_.ended(end(0, 7)).waited);
  time_.advance(5s);
  EXPECT_TRUE(overdue_.empty());
}

}  // namespace
}  // namespace tv
