// Drives the WorkerGroup state machine with a scripted fake: no processes, no clock.
#include "launcher/workers/worker_group.h"

#include <gtest/gtest.h>

#include <csignal>
#include <set>
#include <string>
#include <vector>

namespace tv {
namespace {

class FakeActions : public GroupActions {
 public:
  std::vector<std::string> log;
  std::set<int> fail_start;  // local ranks whose start fails (exit 127)
  WorkerGroup* group = nullptr;
  bool stop_from_failed = false;  // re-enter stop() from group_failed, as a cluster might

  bool start_worker(int r, const GenerationPlan& p, WorkerEnd* end) override {
    log.push_back("start " + std::to_string(r) + " g" + std::to_string(p.generation));
    if (fail_start.count(r)) {
      end->exit_code = 127;
      end->start_failed = true;
      return false;
    }
    return true;
  }
  void signal_worker(int r, int sig) override {
    log.push_back("signal " + std::to_string(r) + " " + std::to_string(sig));
  }
  void arm_grace_timer() override { log.push_back("arm"); }
  void cancel_grace_timer() override { log.push_back("cancel"); }
  void cleanup_descendants() override { log.push_back("cleanup"); }
  void group_failed(int g, const WorkerEnd& e) override {
    log.push_back("failed g" + std::to_string(g) + " r" + std::to_string(e.local_rank) + " c" +
                  std::to_string(e.exit_code));
    if (stop_from_failed) group->stop(SIGTERM);
  }
  void group_succeeded(int g) override { log.push_back("succeeded g" + std::to_string(g)); }
  void group_stopped(int g) override { log.push_back("stopped g" + std::to_string(g)); }
};

WorkerEnd exited(int r, int code) {
  WorkerEnd e;
  e.local_rank = r;
  e.exit_code = code;
  return e;
}

TEST(WorkerGroup, AllExitZeroSucceeds) {
  FakeActions a;
  WorkerGroup g(2, a);
  g.start({0, 29500, ""});
  EXPECT_EQ(g.state(), GroupState::kHealthy);
  g.worker_over(exited(1, 0));
  EXPECT_EQ(g.state(), GroupState::kHealthy);
  g.worker_over(exited(0, 0));
  EXPECT_EQ(g.state(), GroupState::kSucceeded);
  EXPECT_EQ(a.log,
            (std::vector<std::string>{"start 0 g0", "start 1 g0", "cleanup", "succeeded g0"}));
}

TEST(WorkerGroup, OneFailureStopsTheOthersThenReportsStopped) {
  FakeActions a;
  WorkerGroup g(3, a);
  g.start({0, 1, ""});
  g.worker_over(exited(1, 3));
  EXPECT_EQ(g.state(), GroupState::kStopping);
  EXPECT_EQ(g.running(), 2);
  g.worker_over(exited(0, 128 + SIGTERM));
  g.worker_over(exited(2, 128 + SIGTERM));
  EXPECT_EQ(g.state(), GroupState::kStopped);
  EXPECT_EQ(a.log, (std::vector<std::string>{"start 0 g0", "start 1 g0", "start 2 g0",
                                             "failed g0 r1 c3", "signal 0 15", "signal 2 15", "arm",
                                             "cancel", "cleanup", "stopped g0"}));
}

TEST(WorkerGroup, ReentrantStopFromFailureReportIsHarmless) {
  FakeActions a;
  WorkerGroup g(1, a);
  a.group = &g;
  a.stop_from_failed = true;
  g.start({0, 1, ""});
  g.worker_over(exited(0, 1));
  // Single worker: it is already gone, so the group is stopped exactly once.
  EXPECT_EQ(a.log, (std::vector<std::string>{"start 0 g0", "failed g0 r0 c1", "cancel", "cleanup",
                                             "stopped g0"}));
}

TEST(WorkerGroup, GraceExpiryKillsWhatIsLeft) {
  FakeActions a;
  WorkerGroup g(2, a);
  g.start({0, 1, ""});
  g.worker_over(exited(0, 1));
  a.log.clear();
  g.on_grace_expired();
  EXPECT_EQ(a.log, (std::vector<std::string>{"signal 1 9"}));
}

TEST(WorkerGroup, HangIsAFailureWithCode124) {
  FakeActions a;
  WorkerGroup g(2, a);
  g.start({0, 1, ""});
  g.on_worker_hang(1);
  EXPECT_EQ(a.log.at(2), "failed g0 r1 c124");
  EXPECT_EQ(g.state(), GroupState::kStopping);
  // The hung worker gets SIGTERM with the rest.
  EXPECT_EQ(a.log.at(3), "signal 0 15");
  EXPECT_EQ(a.log.at(4), "signal 1 15");
}

TEST(WorkerGroup, StartFailureIsAFailure) {
  FakeActions a;
  a.fail_start = {0};
  WorkerGroup g(2, a);
  g.start({0, 1, ""});
  EXPECT_EQ(a.log.at(2), "failed g0 r0 c127");
  EXPECT_EQ(g.state(), GroupState::kStopping);
  g.worker_over(exited(1, 143));
  EXPECT_EQ(g.state(), GroupState::kStopped);
}

TEST(WorkerGroup, StopWithReceivedSignalThenRestart) {
  FakeActions a;
  WorkerGroup g(1, a);
  g.start({0, 1, ""});
  g.stop(SIGINT);
  EXPECT_EQ(a.log.at(1), "signal 0 2");
  g.worker_over(exited(0, 130));
  EXPECT_EQ(g.state(), GroupState::kStopped);
  g.start({1, 2, ""});
  EXPECT_EQ(g.state(), GroupState::kHealthy);
  EXPECT_EQ(g.generation(), 1);
}

TEST(WorkerGroup, StopWhenNothingRunsReportsAtOnce) {
  FakeActions a;
  WorkerGroup g(1, a);
  g.start({0, 1, ""});
  g.worker_over(exited(0, 0));
  a.log.clear();
  g.stop(SIGTERM);  // another node failed after this one succeeded
  EXPECT_EQ(a.log, (std::vector<std::string>{"stopped g0"}));
}

TEST(WorkerGroup, StartWhileRunningIsALogicError) {
  FakeActions a;
  WorkerGroup g(1, a);
  g.start({0, 1, ""});
  EXPECT_THROW(g.start({1, 1, ""}), std::logic_error);
}

TEST(WorkerGroup, ForwardReachesOnlyRunningWorkers) {
  FakeActions a;
  WorkerGroup g(2, a);
  g.start({0, 1, ""});
  g.worker_over(exited(0, 0));
  a.log.clear();
  g.forward(SIGUSR1);
  EXPECT_EQ(a.log, (std::vector<std::string>{"signal 1 " + std::to_string(SIGUSR1)}));
}

}  // namespace
}  // namespace tv
