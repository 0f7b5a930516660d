// WorkerRoster (launcher/workers/worker_roster.h): the facts the deciders read off a
// generation's workers, from their wait statuses, their error files' mtimes (a FakeFileSystem)
// and the loop's clock (SimLoopTime), with no process.
#include "launcher/workers/worker_roster.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <csignal>
#include <memory>
#include <string>

#include "tests/unit/workers/roster_fixture.h"

namespace tv {
namespace {

using namespace std::chrono_literals;

using WorkerRosterTest = testing::RosterFixture;
using testing::at_s;
using testing::ns_of;

TEST_F(WorkerRosterTest, AnExitIsTakenOnceByItsPidWithItsStatusAndReapTime) {
  auto w = start(1);
  EXPECT_FALSE(roster_.exited(w->pid() + 100, 0, at_s(1)));  // a standby's
  EXPECT_TRUE(roster_.exited(w->pid(), W_EXITCODE(3, 0), at_s(5)));
  EXPECT_EQ(*w->wait_status, W_EXITCODE(3, 0));
  EXPECT_EQ(w->reaped_at, at_s(5));
  EXPECT_FALSE(roster_.exited(w->pid(), 0, at_s(6)));  // taken already
  EXPECT_EQ(roster_.end_of(1).exit_code, 3);
  EXPECT_EQ(roster_.end_of(0).exit_code, 0);  // never started: no status
}

// Its pipes are at their end at once (no one holds the write ends): only the exit is missing.
TEST_F(WorkerRosterTest, AWorkerIsOverOnceItsExitAndItsOutputAreInAndOnlyOnce) {
  auto w = start(0);
  time_.run_ready();  // the loop reads the end of both streams
  EXPECT_FALSE(w->streams_open());
  EXPECT_TRUE(over_.empty());  // no exit yet
  roster_.exited(w->pid(), W_EXITCODE(0, SIGSEGV), at_s(1));
  EXPECT_TRUE(over_.empty());  // posted: the exits reaped with it get their status first
  time_.run_ready();
  ASSERT_EQ(over_.size(), 1u);
  EXPECT_EQ(over_[0].local_rank, 0);
  EXPECT_EQ(over_[0].signal, SIGSEGV);
  EXPECT_EQ(over_[0].exit_code, 128 + SIGSEGV);
  time_.advance(1s);
  EXPECT_EQ(over_.size(), 1u);
}

TEST_F(WorkerRosterTest, AnExitWithItsPipesHeldOpenIsOverAfterTheDrainWindow) {
  std::vector<int> held;
  auto w = start(1, &held);
  time_.run_ready();
  ASSERT_TRUE(w->streams_open());
  roster_.exited(w->pid(), W_EXITCODE(2, 0), at_s(1));
  time_.advance(199ms);
  EXPECT_TRUE(over_.empty());
  time_.advance(1ms);
  ASSERT_EQ(over_.size(), 1u);
  EXPECT_EQ(over_[0].exit_code, 2);
  for (int fd : held) ::close(fd);
  time_.run_ready();  // the streams' end now changes nothing
  EXPECT_EQ(over_.size(), 1u);
}

TEST_F(WorkerRosterTest, OnlyTheRunningAreLookedAtAndSignalledForStacks) {
  auto a = start(0);
  auto b = start(2);
  roster_.exited(a->pid(), W_EXITCODE(0, SIGKILL), at_s(1));
  const auto running = roster_.running(false);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].local_rank, 2);
  EXPECT_EQ(running[0].rank, 8);
  const auto targets = roster_.stack_targets();
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].pid, b->pid());
  EXPECT_EQ(targets[0].stacks_path, "/w/rank_2/stacks.txt");
  EXPECT_EQ(roster_.end_of(0).signal, SIGKILL);
  roster_.signal(2, SIGTERM);
  roster_.signal(1, SIGTERM);  // not started: nothing
  EXPECT_EQ(spawner_.child(b->pid()).signals.front(), SIGTERM);
}

TEST_F(WorkerRosterTest, ARunningWorkersOlderErrorFileMakesItTheEarliestFailure) {
  auto reaped = start(0);
  auto writing = start(1);
  auto fine = start(2);
  roster_.exited(reaped->pid(), W_EXITCODE(1, 0), at_s(10));
  roster_.exited(fine->pid(), 0, at_s(3));  // exit 0 is no failure, however early
  error_file(1, 7);
  const auto running = [](int) { return true; };
  auto first = roster_.earliest_failure(0, at_s(11), running);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->local_rank, 1);
  EXPECT_TRUE(first->still_running);
  EXPECT_EQ(first->when(), at_s(7));
  // One the group no longer counts as running is no candidate without its exit.
  first = roster_.earliest_failure(0, at_s(11), [](int r) { return r != 1; });
  ASSERT_TRUE(first);
  EXPECT_EQ(first->local_rank, 0);
  EXPECT_FALSE(roster_.earliest_failure(1, at_s(11), running));  // another generation's
}

TEST_F(WorkerRosterTest, AFailureIsTimedByItsErrorFileElseItsReapAndAHangByNow) {
  auto a = start(0);
  auto b = start(1);
  roster_.exited(a->pid(), W_EXITCODE(1, 0), at_s(20));
  roster_.exited(b->pid(), W_EXITCODE(1, 0), at_s(20));
  error_file(1, 12);
  WorkerEnd end{0, 1, 0, false, false};
  EXPECT_EQ(roster_.failed_at_ns(end, at_s(30)), ns_of(at_s(20)));
  end.local_rank = 1;
  EXPECT_EQ(roster_.failed_at_ns(end, at_s(30)), ns_of(at_s(12)));
  end.hang = true;
  EXPECT_EQ(roster_.failed_at_ns(end, at_s(30)), ns_of(at_s(30)));
  end = {2, 127, 0, false, true};  // never started
  EXPECT_EQ(roster_.failed_at_ns(end, at_s(31)), ns_of(at_s(31)));
}

}  // namespace
}  // namespace tv
