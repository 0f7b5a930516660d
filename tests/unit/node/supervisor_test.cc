// The Supervisor's event loop, event by event (the fixture: supervisor_fixture.h); the run's
// states under a stop signal and a crash, table by table: supervisor_states_test.cc.
#include "launcher/node/supervisor.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/exit_codes.h"
#include "tests/unit/node/supervisor_fixture.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::FakeCluster;
using testing::FakeFileSystem;
using testing::FakeRankDirs;
using testing::FakeSignals;
using testing::FakeSpawner;
using testing::SimLoopTime;
using testing::TempDir;

using testing::count;
using testing::kGrace;
using testing::read_file;
using testing::SupervisorTest;

TEST_F(SupervisorTest, EveryWorkerExitsZeroTheRunReturnsZero) {
  begin();
  EXPECT_TRUE(signals_.routed());
  const auto w = workers(0);
  ASSERT_EQ(w.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const SpawnRequest& req = spawner_.child(w[r]).req;
    EXPECT_EQ(req.executable, "/opt/train/worker");
    EXPECT_EQ(req.argv, cfg_.argv);
    EXPECT_EQ(req.env.get("RANK"), std::to_string(r));
    EXPECT_EQ(req.env.get("MASTER_PORT"), "29500");
    EXPECT_EQ(req.env.get("PATH"), "/usr/bin:/bin");
    EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/attempt_0/rank_" + std::to_string(r)));
  }
  spawner_.write(w[0], "step 1\n");
  spawner_.exit_code(w[0], 0);
  time_.run_ready();
  EXPECT_FALSE(sup_->over());  // one worker is still running
  spawner_.exit_code(w[1], 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
  EXPECT_EQ(cluster_->calls, (std::vector<std::string>{"join", "success 0", "leave 0"}));
  EXPECT_EQ(spawner_.leftover_cleanups, 1);  // what the workers left behind, once they are gone
  for (pid_t p : w) EXPECT_TRUE(signals_of(p).empty());
  EXPECT_FALSE(signals_.routed());  // end(): signals are Init's again
  EXPECT_FALSE(std::filesystem::exists(cfg_.failure_file));
}

TEST_F(SupervisorTest, AFailureStopsTheOthersAndItsExitCodeIsTheRunsCode) {
  cfg_.layout.nproc_per_node = 3;
  begin();
  const auto w = workers(0);
  ASSERT_EQ(w.size(), 3u);
  spawner_.write(w[1], "ValueError: boom\n", /*to_stderr=*/true);
  spawner_.exit_code(w[1], 3);
  time_.run_ready();
  // The others get SIGTERM (and SIGCONT, for a stopped one); the failure goes to the cluster.
  EXPECT_EQ(signals_of(w[0]), (std::vector<int>{SIGTERM, SIGCONT}));
  EXPECT_EQ(signals_of(w[2]), (std::vector<int>{SIGTERM, SIGCONT}));
  EXPECT_TRUE(signals_of(w[1]).empty());
  ASSERT_EQ(cluster_->failures.size(), 1u);
  const NodeFailure& f = cluster_->failures[0];
  EXPECT_EQ(f.generation, 0);
  EXPECT_EQ(f.exit_code, 3);
  EXPECT_NE(f.summary.find("rank 1 "), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("ValueError: boom"), std::string::npos) << f.summary;
  EXPECT_EQ(cluster_->calls, (std::vector<std::string>{"join", "failure 0"}));
  // report_stopped only once every worker is gone.
  spawner_.exit(w[0], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  EXPECT_EQ(cluster_->calls.back(), "failure 0");
  spawner_.exit(w[2], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  EXPECT_EQ(end(), 3);
  EXPECT_EQ(cluster_->calls,
            (std::vector<std::string>{"join", "failure 0", "stopped 0", "leave 0"}));
  const std::string failure = read_file(cfg_.failure_file);
  EXPECT_NE(failure.find("rank 1 "), std::string::npos) << failure;
  EXPECT_NE(failure.find("ValueError: boom"), std::string::npos) << failure;
}

// The kernel's OOM killer, read through the FileSystem seam: a SIGKILL counted in the memory
// cgroup's oom_kill since the generation started is "out of memory" with the cgroup's limit; a
// SIGKILL the count did not see is only a SIGKILL.
TEST_F(SupervisorTest, ASigkillTheMemoryCgroupCountedIsOutOfMemoryAndAnotherIsNot) {
  const std::string cg = "/sys/fs/cgroup/kubepods/pod1/train";
  fs_.add_file("/proc/self/cgroup", "0::/kubepods/pod1/train\n");
  fs_.add_file(cg + "/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  fs_.add_file(cg + "/memory.max", "67108864\n");
  cfg_.fs = &fs_;
  begin(/*restarts=*/1);
  auto w = workers(0);
  fs_.add_file(cg + "/memory.events", "low 0\nhigh 0\nmax 5\noom 2\noom_kill 2\n");
  spawner_.exit(w[0], W_EXITCODE(0, SIGKILL));
  time_.run_ready();
  ASSERT_EQ(cluster_->failures.size(), 1u);
  EXPECT_NE(cluster_->failures[0].summary.find("out of memory (cgroup limit 64 MiB)"),
            std::string::npos)
      << cluster_->failures[0].summary;
  spawner_.exit(w[1], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  w = workers(1);
  ASSERT_EQ(w.size(), 2u);
  spawner_.exit(w[1], W_EXITCODE(0, SIGKILL));  // the count stands at 2: another SIGKILL
  time_.run_ready();
  ASSERT_EQ(cluster_->failures.size(), 2u);
  EXPECT_EQ(cluster_->failures[1].summary.find("out of memory"), std::string::npos)
      << cluster_->failures[1].summary;
  EXPECT_NE(cluster_->failures[1].summary.find("SIGKILL"), std::string::npos)
      << cluster_->failures[1].summary;
}

// A rank directory refused (docs/supervision.md: trainvisor's own configuration) ends this node
// with 78 before any worker of the generation starts, and the failure names the path.
TEST_F(SupervisorTest, ARefusedRankDirectoryEndsTheNodeWith78BeforeAnyWorkerStarts) {
  rank_dirs_.refuse(/*attempt=*/0, /*rank=*/1);
  cfg_.rank_dirs = &rank_dirs_;
  begin(/*restarts=*/3);
  EXPECT_TRUE(spawner_.spawned().empty());
  EXPECT_EQ(end(), exit_code_of(ErrorKind::kConfig));
  const std::string failure = read_file(cfg_.failure_file);
  EXPECT_NE(failure.find(dir_ + "/attempt_0/rank_1: a symbolic link, not followed"),
            std::string::npos)
      << failure;
}

TEST_F(SupervisorTest, ARankDirectoryRefusedAtARestartIsNotRetriedAndStartsNoneOfItsGeneration) {
  rank_dirs_.refuse(/*attempt=*/1, /*rank=*/0);
  cfg_.rank_dirs = &rank_dirs_;
  begin(/*restarts=*/3);
  const auto w = workers(0);
  ASSERT_EQ(w.size(), 2u);
  spawner_.exit_code(w[0], 1);
  time_.run_ready();
  spawner_.exit(w[1], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  EXPECT_TRUE(workers(1).empty());
  EXPECT_EQ(spawner_.spawned().size(), 2u);
  EXPECT_EQ(end(), exit_code_of(ErrorKind::kConfig));
}

// An earlier run's error file in the same --log-dir would be read as this worker's, and a stale
// stacks file's header would name another pid: both are cleared before each worker starts.
TEST_F(SupervisorTest, EachWorkerStartsAfterItsRankDirectorysStaleFilesAreCleared) {
  std::filesystem::create_directories(dir_ + "/attempt_0/rank_0");
  std::ofstream(dir_ + "/attempt_0/rank_0/error.json") << "{\"message\": \"an old run\"}";
  cfg_.rank_dirs = &rank_dirs_;
  begin();
  ASSERT_EQ(workers(0).size(), 2u);
  EXPECT_EQ(rank_dirs_.removed(),
            (std::vector<std::string>{"error.json", "stacks.txt", "error.json", "stacks.txt"}));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/attempt_0/rank_0/error.json"));
}

TEST_F(SupervisorTest, AWorkerIgnoringSigtermIsKilledWhenTheGraceElapses) {
  begin();
  const auto w = workers(0);
  spawner_.exit_code(w[0], 1);
  time_.run_ready();
  EXPECT_EQ(signals_of(w[1]), (std::vector<int>{SIGTERM, SIGCONT}));
  time_.advance(kGrace - 1ms);
  EXPECT_EQ(count(signals_of(w[1]), SIGKILL), 0);
  EXPECT_FALSE(sup_->over());
  time_.advance(1ms);
  EXPECT_EQ(signals_of(w[1]), (std::vector<int>{SIGTERM, SIGCONT, SIGKILL}));
  time_.run_ready();  // the SIGKILL ended it
  EXPECT_EQ(end(), 1);
  EXPECT_EQ(cluster_->calls,
            (std::vector<std::string>{"join", "failure 0", "stopped 0", "leave 0"}));
}

class SupervisorSignalTest : public SupervisorTest, public ::testing::WithParamInterface<int> {};

TEST_P(SupervisorSignalTest, ATerminationSignalIsForwardedAndTheRunExits128PlusN) {
  const int sig = GetParam();
  spawner_.dies_on = {SIGKILL, sig};
  begin();
  const auto w = workers(0);
  ASSERT_EQ(w.size(), 2u);
  ASSERT_TRUE(signals_.deliver(sig));
  time_.run_ready();
  for (pid_t p : w) EXPECT_EQ(signals_of(p), (std::vector<int>{sig}));  // it died of it
  EXPECT_EQ(end(), 128 + sig);
  EXPECT_EQ(cluster_->calls, (std::vector<std::string>{"join", "leave " + std::to_string(sig)}));
  EXPECT_TRUE(cluster_->failures.empty());  // a stop from outside is no failure
}

INSTANTIATE_TEST_SUITE_P(TermIntHup, SupervisorSignalTest,
                         ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const auto& info) { return std::string(sigabbrev_np(info.param)); });

TEST_F(SupervisorTest, StoppedWorkersGetSigkillWhenTheGraceElapses) {
  begin();
  const auto w = workers(0);
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  EXPECT_EQ(signals_of(w[0]), (std::vector<int>{SIGTERM, SIGCONT}));
  time_.advance(kGrace - 1ms);
  EXPECT_EQ(count(signals_of(w[0]), SIGKILL), 0);
  time_.advance(1ms);
  EXPECT_EQ(count(signals_of(w[0]), SIGKILL), 1);
  EXPECT_EQ(count(signals_of(w[1]), SIGKILL), 1);
  time_.run_ready();
  EXPECT_EQ(end(), 143);
}

// A node stopped by SIGTERM tells the others why (leave with the signal); the process must not
// exit with that still queued, or the others read a lost node (75) instead of a stop (143).
TEST_F(SupervisorTest, TheEndWaitsUntilTheClustersLastFramesAreOnTheWire) {
  begin();
  cluster_->unflushed = 3;
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  time_.advance(kGrace);
  time_.run_ready();
  EXPECT_EQ(cluster_->calls.back(), "leave 15");
  EXPECT_EQ(end(), 143);
  EXPECT_EQ(cluster_->flush_asks, 4);  // asked until it said yes, not once more
}

// Every node of a job stopped from outside gets SIGTERM; a quicker node's exit can be read before
// this node's own signal is taken. A lost node while a stop signal is pending is that stop (143);
// without one it is a lost node (75).
TEST_F(SupervisorTest, ANodeLostWhileThisNodesStopSignalIsPendingIsTheStop) {
  signals_.pending = SIGTERM;
  EXPECT_EQ(end_after_peer_lost(), 143);
}

TEST_F(SupervisorTest, ANodeLostWithNoStopSignalHereIsALostNode) {
  EXPECT_EQ(end_after_peer_lost(), 75);
}

TEST_F(SupervisorTest, ASecondSigtermKillsAtOnce) {
  begin();
  const auto w = workers(0);
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  time_.advance(1000ms);
  EXPECT_EQ(count(signals_of(w[0]), SIGKILL), 0);
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  EXPECT_EQ(count(signals_of(w[0]), SIGKILL), 1);
  EXPECT_EQ(count(signals_of(w[1]), SIGKILL), 1);
  EXPECT_EQ(end(), 143);  // the first signal's code stands
}

TEST_F(SupervisorTest, Sigusr1IsForwardedOnlyAndTheRunGoesOn) {
  begin();
  const auto w = workers(0);
  ASSERT_TRUE(signals_.deliver(SIGUSR1));
  time_.run_ready();
  for (pid_t p : w) EXPECT_EQ(signals_of(p), (std::vector<int>{SIGUSR1}));
  EXPECT_FALSE(sup_->over());
  for (pid_t p : w) spawner_.exit_code(p, 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
}

// SIGQUIT is forwarded like USR1, and neither it nor a stacks request is a stop (issue 38: the
// stacks signal kept the next generation from starting): the restart after a failure happens,
// and a worker killed by the forwarded SIGQUIT is that generation's failure.
TEST_F(SupervisorTest, QuitAndStacksChangeNothingAndTheRestartHappens) {
  begin(/*restarts=*/1);
  const auto g0 = workers(0);
  ASSERT_TRUE(signals_.deliver(stacks_signal()));
  ASSERT_TRUE(signals_.deliver(SIGQUIT));
  time_.run_ready();
  time_.advance(50ms);  // the stacks poll: nothing to wait for (not a Python worker)
  for (pid_t p : g0) EXPECT_EQ(signals_of(p), (std::vector<int>{SIGQUIT}));
  EXPECT_FALSE(signals_.stop_requested().load());
  spawner_.exit(g0[0], W_EXITCODE(0, SIGQUIT));
  time_.run_ready();
  spawner_.exit(g0[1], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  const auto g1 = workers(1);
  ASSERT_EQ(g1.size(), 2u);
  for (pid_t p : g1) spawner_.exit_code(p, 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
}

TEST_F(SupervisorTest, ARestartSpawnsTheNextGenerationOnItsPort) {
  begin(/*restarts=*/1);
  const auto g0 = workers(0);
  spawner_.exit_code(g0[1], 1);
  time_.run_ready();
  EXPECT_TRUE(workers(1).empty());  // not before every worker of generation 0 is gone
  spawner_.exit(g0[0], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  const auto g1 = workers(1);
  ASSERT_EQ(g1.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const SpawnRequest& req = spawner_.child(g1[r]).req;
    EXPECT_EQ(req.env.get("MASTER_PORT"), std::to_string(cluster_->port_of(1)));
    EXPECT_EQ(req.env.get("RANK"), std::to_string(r));
    EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/attempt_1/rank_" + std::to_string(r)));
  }
  for (pid_t p : g1) spawner_.exit_code(p, 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
  EXPECT_EQ(cluster_->calls,
            (std::vector<std::string>{"join", "failure 0", "stopped 0", "success 1", "leave 0"}));
  EXPECT_EQ(spawner_.spawned().size(), 4u);
}

TEST_F(SupervisorTest, ASilentWorkerIsHungAfterTheTimeoutStacksFirstThenExit124) {
  cfg_.hang_timeout = 1000ms;
  spawner_.dies_on = {SIGKILL, SIGTERM};
  begin();
  const auto w = workers(0);
  time_.advance(600ms);
  spawner_.write(w[1], "still alive\n");  // rank 1's silence starts again here
  time_.advance(399ms);
  EXPECT_TRUE(cluster_->failures.empty());
  time_.advance(1ms);  // rank 0 silent for 1 s: its stacks are collected before any signal
  EXPECT_TRUE(signals_of(w[0]).empty());
  EXPECT_TRUE(cluster_->failures.empty());
  time_.advance(50ms);  // the stacks poll: nothing to wait for (not a Python worker)
  EXPECT_EQ(signals_of(w[0]).front(), SIGTERM);
  EXPECT_EQ(signals_of(w[1]).front(), SIGTERM);
  ASSERT_EQ(cluster_->failures.size(), 1u);
  EXPECT_EQ(cluster_->failures[0].exit_code, 124);
  EXPECT_NE(cluster_->failures[0].summary.find("rank 0 "), std::string::npos);
  time_.run_ready();
  EXPECT_EQ(end(), 124);
  EXPECT_NE(read_file(dir_ + "/stacks.txt").find("stacks on hang"), std::string::npos);
}

TEST_F(SupervisorTest, OutputKeepsAWorkerFromBeingHung) {
  cfg_.hang_timeout = 1000ms;
  begin();
  const auto w = workers(0);
  for (int i = 0; i < 10; ++i) {  // 3 s of lines every 300 ms from both ranks: never hung
    time_.advance(300ms);
    for (pid_t p : w) spawner_.write(p, "step\n");
  }
  EXPECT_TRUE(cluster_->failures.empty());
  for (pid_t p : w) EXPECT_TRUE(signals_of(p).empty());
  for (pid_t p : w) spawner_.exit_code(p, 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
}

// The heartbeat file's mtime is read through the Supervisor's FileSystem: each change is a sign of
// life; once it stops changing, the silence counts from its last change.
TEST_F(SupervisorTest, AHeartbeatThatChangesKeepsASilentWorkerFromBeingHungUntilItStops) {
  cfg_.hang_timeout = 1000ms;
  cfg_.fs = &fs_;
  spawner_.dies_on = {SIGKILL, SIGTERM};
  begin();
  const auto w = workers(0);
  const std::string beat0 = dir_ + "/attempt_0/rank_0/heartbeat";
  const std::string beat1 = dir_ + "/attempt_0/rank_1/heartbeat";
  for (int i = 1; i <= 10; ++i) {  // 3 s of heartbeats every 300 ms, no output: never hung
    time_.advance(300ms);
    fs_.touch(beat0, i);
    fs_.touch(beat1, i);
  }
  EXPECT_TRUE(cluster_->failures.empty());
  for (pid_t p : w) EXPECT_TRUE(signals_of(p).empty());
  for (int i = 0; i < 5; ++i) {  // rank 1 beats on, rank 0's file stays as it is
    time_.advance(300ms);
    fs_.touch(beat1, 11 + i);
  }
  time_.advance(100ms);  // the stacks poll
  ASSERT_EQ(cluster_->failures.size(), 1u);
  EXPECT_EQ(cluster_->failures[0].exit_code, 124);
  EXPECT_NE(cluster_->failures[0].summary.find("rank 0 "), std::string::npos);
  time_.run_ready();
  EXPECT_EQ(end(), 124);
}

// --hang-timeout auto: lines that keep coming are no step; no new step past the deadline is a
// stall, named in the failure, exit 124. A step number seen again (another rank's) is not new.
TEST_F(SupervisorTest, NoNewStepPastTheStallDeadlineIsAHangThoughOutputKeepsComing) {
  cfg_.stall = StallRules{.floor = 2, .startup_timeout = 30.0};
  spawner_.dies_on = {SIGKILL, SIGTERM};
  begin();
  const auto w = workers(0);
  for (int i = 0; i < 10; ++i) {
    time_.advance(100ms);
    sup_->progress_seen(i);
    sup_->progress_seen(i);  // rank 1 printing the same step
  }
  for (int i = 0; i < 19; ++i) {  // 1.9 s of warnings: before the 2 s floor
    time_.advance(100ms);
    spawner_.write(w[0], "NCCL WARN still waiting\n");
    sup_->progress_seen(3);  // an old step again
  }
  EXPECT_TRUE(cluster_->failures.empty());
  time_.advance(600ms);  // past the floor, at the next check
  time_.advance(50ms);   // the stacks poll
  ASSERT_EQ(cluster_->failures.size(), 1u);
  EXPECT_EQ(cluster_->failures[0].exit_code, 124);
  EXPECT_NE(cluster_->failures[0].summary.find("hang (stall: no new step"), std::string::npos)
      << cluster_->failures[0].summary;
  time_.run_ready();
  EXPECT_EQ(end(), 124);
}

TEST_F(SupervisorTest, NoFirstStepWithinTheStartupDeadlineIsAStartupHang) {
  cfg_.stall = StallRules{.floor = 2, .startup_timeout = 5.0};
  spawner_.dies_on = {SIGKILL, SIGTERM};
  begin();
  const auto w = workers(0);
  for (int i = 0; i < 9; ++i) {
    time_.advance(500ms);
    spawner_.write(w[1], "importing\n");
  }
  EXPECT_TRUE(cluster_->failures.empty());
  time_.advance(1000ms);
  time_.advance(50ms);
  ASSERT_EQ(cluster_->failures.size(), 1u);
  EXPECT_EQ(cluster_->failures[0].exit_code, 124);
  EXPECT_NE(cluster_->failures[0].summary.find("start-up: no first step"), std::string::npos)
      << cluster_->failures[0].summary;
  time_.run_ready();
  EXPECT_EQ(end(), 124);
}

TEST_F(SupervisorTest, AWorkerThatCannotStartFailsTheGenerationWithItsCode) {
  spawner_.fail_next = Error{ErrorKind::kNotFound, "worker: not found"};
  spawner_.dies_on = {SIGKILL, SIGTERM};
  begin();
  ASSERT_EQ(spawner_.spawned().size(), 1u);  // rank 0 failed to start; rank 1 did, then stopped
  time_.run_ready();
  EXPECT_EQ(end(), 127);
  ASSERT_EQ(cluster_->failures.size(), 1u);
  EXPECT_EQ(cluster_->failures[0].exit_code, 127);
}

TEST_F(SupervisorTest, AFatalXidFromTheGpuHealthChildEndsThisNodeWith74) {
  SpawnRequest watch;
  watch.executable = "/usr/bin/trainvisor";
  watch.argv = {"trainvisor", "__query", "gpu-watch", "5"};
  cfg_.gpu_health = watch;
  spawner_.dies_on = {SIGKILL, SIGTERM};
  begin();
  const pid_t gpu = spawner_.spawned().at(2);  // started beside the workers, after them
  EXPECT_EQ(spawner_.child(gpu).req.argv, watch.argv);
  const auto w = workers(0);
  ASSERT_EQ(w.size(), 2u);
  spawner_.write(gpu, R"({"event":"xid","gpu":{"index":1,"uuid":"GPU-fake-0001"},"xid":79,)"
                      R"("fatal":true,"meaning":"GPU has fallen off the bus"})"
                      "\n");
  time_.run_ready();
  for (pid_t p : w) EXPECT_EQ(signals_of(p), (std::vector<int>{SIGTERM}));
  EXPECT_EQ(end(), 74);
  EXPECT_EQ(signals_of(gpu), (std::vector<int>{SIGKILL}));  // end(): the watch is killed
  // The other nodes are told why this one leaves (their failure files name the fault).
  ASSERT_EQ(cluster_->calls.size(), 2u);
  EXPECT_EQ(cluster_->calls[1].rfind("leave 0 node fault: GPU 1 (GPU-fake-0001): Xid 79", 0), 0u)
      << cluster_->calls[1];
  const std::string failure = read_file(cfg_.failure_file);
  EXPECT_NE(failure.find("node 0: node fault: GPU 1 (GPU-fake-0001): Xid 79"), std::string::npos)
      << failure;
}

// Nothing optional on the critical paths (issue 41): from begin() to the first generation's last
// worker, and from a failure to the next generation's last worker, the Spawner starts workers and
// nothing else. The GPU watch and the banner's GPU query start beside the first workers; the
// watch is one child for the whole run.
TEST_F(SupervisorTest, OnlyWorkersAreSpawnedOnTheStartAndRestartPaths) {
  SpawnRequest watch;
  watch.executable = "/usr/bin/trainvisor";
  watch.argv = {"trainvisor", "__query", "gpu-watch", "5"};
  cfg_.gpu_health = watch;
  SideQueryRequest banner;
  banner.request.executable = "/usr/bin/trainvisor";
  banner.request.argv = {"trainvisor", "__query", "gpu-health"};
  std::vector<std::string> answers;
  banner.done = [&answers](const SideQueryEnd& e) { answers.push_back(e.output); };
  cfg_.side_queries.push_back(banner);
  begin(/*restarts=*/2);
  const auto& spawned = spawner_.spawned();
  const auto g0 = workers(0);
  ASSERT_EQ(g0.size(), 2u);
  EXPECT_EQ(std::vector<pid_t>(spawned.begin(), spawned.begin() + 2), g0);  // the start path
  ASSERT_EQ(spawned.size(), 4u);  // then, beside them, the watch and the query
  EXPECT_EQ(spawner_.child(spawned[2]).req.argv, watch.argv);
  EXPECT_EQ(spawner_.child(spawned[3]).req.argv, banner.request.argv);
  // What runs beside the workers runs behind them (nice 19), the workers at their own priority.
  EXPECT_TRUE(spawner_.child(spawned[2]).req.background);
  EXPECT_TRUE(spawner_.child(spawned[3]).req.background);
  EXPECT_FALSE(spawner_.child(g0[0]).req.background);
  spawner_.write(spawned[3], "{\"gpus\":[]}\n");
  spawner_.exit_code(spawned[3], 0);
  time_.run_ready();
  EXPECT_EQ(answers, (std::vector<std::string>{"{\"gpus\":[]}\n"}));
  auto fail_and_restart = [&](int generation) {
    const auto g = workers(generation);
    const std::size_t before = spawned.size();
    spawner_.exit_code(g[1], 1);
    time_.run_ready();
    spawner_.exit(g[0], W_EXITCODE(0, SIGTERM));
    time_.run_ready();
    // The restart path: from the failure to the next generation's workers, nothing else.
    EXPECT_EQ(std::vector<pid_t>(spawned.begin() + static_cast<long>(before), spawned.end()),
              workers(generation + 1));
  };
  fail_and_restart(0);
  fail_and_restart(1);
  for (pid_t p : workers(2)) spawner_.exit_code(p, 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
  EXPECT_EQ(signals_of(spawned[2]), (std::vector<int>{SIGKILL}));  // at the end only
  EXPECT_EQ(spawned.size(), 2u + 2u + 2u + 2u);
}

TEST_F(SupervisorTest, AnExitWaitsAtMostTheDrainWindowForPipesAGrandchildHoldsOpen) {
  begin();
  const auto w = workers(0);
  spawner_.write(w[1], "last words\n");
  spawner_.exit(w[1], W_EXITCODE(2, 0), /*pipes_held=*/true);
  time_.run_ready();
  time_.advance(199ms);  // kDrainWindow (supervisor.cc) is 200 ms
  EXPECT_TRUE(cluster_->failures.empty());
  EXPECT_TRUE(signals_of(w[0]).empty());
  time_.advance(1ms);
  ASSERT_EQ(cluster_->failures.size(), 1u);
  EXPECT_NE(cluster_->failures[0].summary.find("exit 2: last words"), std::string::npos)
      << cluster_->failures[0].summary;
  EXPECT_EQ(signals_of(w[0]), (std::vector<int>{SIGTERM, SIGCONT}));
  spawner_.exit(w[0], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  EXPECT_EQ(end(), 2);
}

// A worker without @record prints a lot on stdout and raises: its traceback on stderr is read
// before the rest of stdout (the loop reads the two pipes in any order). The root cause is the
// exception line, in the summary, the signature and the failure file, not stdout's last line.
TEST_F(SupervisorTest, TheTracebackOnStderrIsTheRootCauseWhicheverPipeWasReadLast) {
  begin();
  const auto w = workers(0);
  for (int i = 0; i < 100; ++i) spawner_.write(w[0], "log line " + std::to_string(i) + "\n");
  time_.run_ready();
  spawner_.write(w[0],
                 "Traceback (most recent call last):\n  File \"/w/train.py\", line 9, in "
                 "<module>\nRuntimeError: NCCL error: unhandled system error\n",
                 /*to_stderr=*/true);
  time_.run_ready();
  for (int i = 100; i < 200; ++i) spawner_.write(w[0], "log line " + std::to_string(i) + "\n");
  spawner_.exit_code(w[0], 1);
  time_.run_ready();
  ASSERT_EQ(cluster_->failures.size(), 1u);
  const NodeFailure& f = cluster_->failures[0];
  EXPECT_EQ(f.summary,
            "rank 0 (node 0, local 0): exit 1: RuntimeError: NCCL error: unhandled system error");
  EXPECT_EQ(f.signature.type, "RuntimeError");
  EXPECT_EQ(f.signature.message, "NCCL error: unhandled system error");
  spawner_.exit(w[1], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  EXPECT_EQ(end(), 1);
  const std::string failure = read_file(cfg_.failure_file);
  EXPECT_EQ(failure.rfind(f.summary + "\n", 0), 0u) << failure;
  EXPECT_NE(failure.find("\n  File \"/w/train.py\", line 9"), std::string::npos) << failure;
  EXPECT_EQ(failure.find("log line"), std::string::npos) << failure;
}

// Rank 0 wrote its error file (torch's @record does so as the exception leaves it) and is still
// in teardown when rank 1's collateral failure ends first: rank 0 is the root cause, its SIGTERM
// waits for the root-cause exit window (2 s, local_root_cause.h) and its own exit is reported.
TEST_F(SupervisorTest, ARootCauseStillExitingIsWaitedForThenReportedWithItsOwnCode) {
  cfg_.layout.nproc_per_node = 3;
  begin();
  const auto w = workers(0);
  const auto error_file = spawner_.child(w[0]).req.env.get("TORCHELASTIC_ERROR_FILE");
  ASSERT_TRUE(error_file);
  std::ofstream(*error_file) << R"({"message":{"message":"RuntimeError: CUDA error",)"
                             << R"("extraInfo":{"py_callstack":"Traceback ...","timestamp":"1"}}})";
  spawner_.exit_code(w[1], 1);
  time_.run_ready();
  EXPECT_TRUE(cluster_->failures.empty());  // waiting for rank 0's own exit
  EXPECT_TRUE(signals_of(w[0]).empty());
  EXPECT_EQ(signals_of(w[2]), (std::vector<int>{SIGTERM, SIGCONT}));
  time_.advance(1999ms);
  EXPECT_TRUE(signals_of(w[0]).empty());
  time_.advance(1ms);
  EXPECT_EQ(signals_of(w[0]), (std::vector<int>{SIGTERM, SIGCONT}));
  spawner_.exit_code(w[0], 7);
  spawner_.exit(w[2], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  ASSERT_EQ(cluster_->failures.size(), 1u);
  EXPECT_EQ(cluster_->failures[0].exit_code, 7);
  EXPECT_NE(cluster_->failures[0].summary.find("rank 0 "), std::string::npos);
  EXPECT_NE(cluster_->failures[0].summary.find("RuntimeError: CUDA error"), std::string::npos);
  EXPECT_EQ(end(), 7);
}

// Error-file order through the seams (cfg.fs, cfg.wall_clock_ns), no real file: rank 0's error file
// is older than rank 1's failure (reaped at 200 ns), so rank 0 is the root cause while it is
// still in teardown; it is waited for, then reported with its own code, its file's message and
// the file's time as failed_at_ns (the time the job orders nodes' failures on).
TEST_F(SupervisorTest, AnErrorFileOlderThanAnotherRanksFailureMakesItsRankTheRootCause) {
  std::int64_t wall_ns = 200;
  cfg_.fs = &fs_;
  cfg_.wall_clock_ns = [&wall_ns] { return wall_ns; };
  cfg_.layout.nproc_per_node = 3;
  begin();
  const auto w = workers(0);
  write_error_file(w[0], "RuntimeError: CUDA error", 100);
  spawner_.exit_code(w[1], 1);
  time_.run_ready();
  EXPECT_TRUE(cluster_->failures.empty());  // waiting for rank 0's own exit
  EXPECT_TRUE(signals_of(w[0]).empty());
  wall_ns = 900;
  spawner_.exit_code(w[0], 7);
  spawner_.exit(w[2], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  expect_reported(7, 100, "rank 0", "RuntimeError: CUDA error");
  EXPECT_EQ(end(), 7);
}

// Two ranks reaped in one pass at the same wall time: the one whose error file is older is the
// root cause (rank 1 here, though rank 0 ended first and comes first in the list); one with no
// error file is ordered by its reap time, the failure time a hang or a lone exit gets too.
TEST_F(SupervisorTest, OfTwoRanksReapedTogetherTheOneWithTheOlderErrorFileIsTheRootCause) {
  cfg_.fs = &fs_;
  cfg_.wall_clock_ns = [] { return std::int64_t{5000}; };
  cfg_.layout.nproc_per_node = 3;
  begin();
  const auto w = workers(0);
  write_error_file(w[1], "ValueError: bad batch", 4000);
  spawner_.exit_code(w[0], 1);
  spawner_.exit_code(w[1], 7);
  time_.run_ready();
  expect_reported(7, 4000, "rank 1", "ValueError: bad batch");
  spawner_.exit(w[2], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  EXPECT_EQ(end(), 7);
}

// `trainvisor stacks` (the stacks signal to trainvisor): each Python worker whose hook registered
// under its own pid gets the signal, the stacks files are polled on the loop (50 ms) until they
// have grown and settled, and one report names each rank's innermost frame; nothing else changes.
TEST_F(SupervisorTest, TheStacksSignalCollectsEveryRanksStacksOnTheLoop) {
  cfg_.argv = {"python3", "-u", "train.py"};
  begin();
  const auto w = workers(0);
  ASSERT_EQ(w.size(), 2u);
  const auto file0 = spawner_.child(w[0]).req.env.get("TRAINVISOR_STACKS_FILE");
  ASSERT_TRUE(file0);
  EXPECT_EQ(*file0, std::filesystem::absolute(dir_ + "/attempt_0/rank_0/stacks.txt").string());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/.trainvisor/python/sitecustomize.py"));
  // Rank 0's hook registered under its pid; rank 1's names another pid (not signalled).
  std::ofstream(*file0) << "# trainvisor stacks: pid " << w[0] << " main thread 0x00007f01\n";
  std::ofstream(*spawner_.child(w[1]).req.env.get("TRAINVISOR_STACKS_FILE"))
      << "# trainvisor stacks: pid 1 main thread 0x00007f02\n";
  ASSERT_TRUE(signals_.deliver(stacks_signal()));
  time_.run_ready();
  EXPECT_EQ(spawner_.child(w[0]).process_signals, std::vector<int>{stacks_signal()});
  EXPECT_TRUE(spawner_.child(w[1]).process_signals.empty());
  std::ofstream(*file0, std::ios::app) << "Current thread 0x00007f01 (most recent call first):\n"
                                       << "  File \"/x/train.py\", line 5 in step\n";
  time_.advance(50ms);  // grown
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/stacks.txt"));
  time_.advance(50ms);  // and settled: the report
  const std::string report = read_file(dir_ + "/stacks.txt");
  EXPECT_NE(report.find("main thread in step (/x/train.py:5)"), std::string::npos) << report;
  EXPECT_NE(report.find("its stacks file names pid 1"), std::string::npos) << report;
  for (pid_t p : w) EXPECT_TRUE(signals_of(p).empty());  // the workers run on
  for (pid_t p : w) spawner_.exit_code(p, 0);
  time_.run_ready();
  EXPECT_EQ(end(), 0);
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// --save-signal: the workers get the save signal, their SIGTERM waits for a checkpoint newer than
// the stop, SIGKILL stays at the stop + the grace period.
struct SaveObserver : RunObserver {
  std::vector<StopSaveOutcome> saves;
  void generation_started(int) override {}
  void generation_failed(int) override {}
  void ending(int) override {}
  void worker_started(int) override {}
  void worker_exited(int, int) override {}
  std::function<void(std::string_view)> output_tap(int, bool) override { return {}; }
  void stop_save(const StopSaveOutcome& o) override { saves.push_back(o); }
};

constexpr std::int64_t kStopWall = 5'000'000'000'000;

// What the goodput accountant is told, in order.
struct CallObserver : SaveObserver {
  std::vector<std::string> calls;
  void generation_failed(int g) override { calls.push_back("failed " + std::to_string(g)); }
  void generation_hung(int g, double) override { calls.push_back("hung " + std::to_string(g)); }
};

// Another node's hang verdict (its ranks and these waited in one collective): the time since this
// node's last step is a hang's here too, so node 0's ledger books it whichever node saw it first.
TEST_F(SupervisorTest, AnotherNodesHangIsAHangHereTooAndAnotherFailureIsNot) {
  CallObserver obs;
  cfg_.observer = &obs;
  begin(/*restarts=*/1);
  cluster_->peer_failure(
      node_failure(0, 1, exit_code_of(ErrorKind::kHang), "rank 2 (node 1): hang"));
  time_.run_ready();
  EXPECT_EQ(obs.calls, (std::vector<std::string>{"hung 0", "failed 0"}));
  // This node's stacks are taken before its workers are stopped (the job's culprit needs them).
  EXPECT_TRUE(signals_of(workers(0)[0]).empty());
  time_.advance(50ms);  // the stacks poll: nothing to wait for (not a Python worker)
  EXPECT_EQ(signals_of(workers(0)[0]).front(), SIGTERM);
  for (pid_t p : workers(0)) spawner_.exit(p, W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  cluster_->peer_failure(node_failure(1, 1, 1, "rank 2 (node 1): exit 1"));
  time_.run_ready();
  EXPECT_EQ(obs.calls, (std::vector<std::string>{"hung 0", "failed 0", "failed 1"}));
}

// What the job's ledger is told of each failure (`trainvisor report`): this node's root cause with
// the evidence files its ranks left, another node's line alone, and the failure file once written.
struct EvidenceObserver : SaveObserver {
  std::vector<std::string> calls;
  void failure_evidence(int g, std::string_view summary,
                        const std::vector<std::string>& paths) override {
    std::string call = std::to_string(g) + " " + std::string(summary);
    for (const auto& p : paths) call += " | " + p;
    calls.push_back(call);
  }
  void root_cause_file(const std::string& path) override { calls.push_back("file " + path); }
};

TEST_F(SupervisorTest, EachFailureTellsTheLedgerItsRootCauseAndEvidence) {
  EvidenceObserver obs;
  cfg_.observer = &obs;
  cfg_.keep_logs = true;
  begin(/*restarts=*/1);
  auto w = workers(0);
  const auto error_file = spawner_.child(w[1]).req.env.get("TORCHELASTIC_ERROR_FILE");
  ASSERT_TRUE(error_file);
  std::ofstream(*error_file) << R"({"message":{"message":"RuntimeError: boom",)"
                             << R"("extraInfo":{"py_callstack":"Traceback ...","timestamp":"1"}}})";
  spawner_.exit_code(w[1], 1);
  time_.run_ready();
  ASSERT_EQ(obs.calls.size(), 1u);
  EXPECT_EQ(obs.calls[0], "0 " + cluster_->failures.at(0).summary + " | " + *error_file);
  spawner_.exit(w[0], W_EXITCODE(0, SIGTERM));
  time_.run_ready();  // generation 1 starts
  cluster_->peer_failure(node_failure(1, 1, 1, "rank 2 (node 1): exit 1"));
  time_.run_ready();
  ASSERT_GE(obs.calls.size(), 2u);
  EXPECT_EQ(obs.calls[1], "1 rank 2 (node 1): exit 1");
  for (pid_t p : workers(1)) spawner_.exit(p, W_EXITCODE(0, SIGTERM));
  time_.run_ready();  // no restart left: the cluster gives up
  end();
  EXPECT_EQ(obs.calls.back(), "file " + cfg_.failure_file);
}

TEST_F(SupervisorTest, ASaveSignalHoldsTheStopUntilACheckpointNewerThanTheStop) {
  SaveObserver obs;
  cfg_.observer = &obs;
  cfg_.save_signal = SIGUSR1;
  cfg_.wall_clock_ns = [] { return kStopWall; };
  begin();
  const auto w = workers(0);
  sup_->checkpoint_complete({"/c/agent_10.pt", 10, kStopWall - 100});  // before the stop
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  EXPECT_EQ(signals_of(w[0]), (std::vector<int>{SIGUSR1}));
  EXPECT_EQ(signals_of(w[1]), (std::vector<int>{SIGUSR1}));
  time_.advance(1000ms);
  sup_->checkpoint_complete({"/c/agent_10.pt", 10, kStopWall - 100});  // the same, again
  EXPECT_EQ(signals_of(w[0]), (std::vector<int>{SIGUSR1}));
  sup_->checkpoint_complete({"/c/agent_12.pt", 12, kStopWall + 7});
  time_.run_ready();
  EXPECT_EQ(signals_of(w[0]), (std::vector<int>{SIGUSR1, SIGTERM, SIGCONT}));
  ASSERT_EQ(obs.saves.size(), 1u);
  EXPECT_TRUE(obs.saves[0].completed);
  EXPECT_EQ(obs.saves[0].saved_step, 12);
  EXPECT_DOUBLE_EQ(obs.saves[0].waited_seconds, 1.0);
  // SIGKILL at the stop + the grace period, not a grace period after the SIGTERM.
  time_.advance(kGrace - 1000ms - 1ms);
  EXPECT_EQ(count(signals_of(w[0]), SIGKILL), 0);
  time_.advance(1ms);
  EXPECT_EQ(count(signals_of(w[0]), SIGKILL), 1);
  time_.run_ready();
  EXPECT_EQ(end(), 143);
}

TEST_F(SupervisorTest, NoSaveInTheWindowStopsTheWorkersWithoutItAndTheCodeStands) {
  SaveObserver obs;
  cfg_.observer = &obs;
  cfg_.save_signal = SIGUSR2;
  cfg_.wall_clock_ns = [] { return kStopWall; };
  begin();
  const auto w = workers(0);
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  const auto window =
      std::chrono::duration_cast<std::chrono::milliseconds>(StopSave::window(kGrace));  // 4 s of 5
  time_.advance(window - 1ms);
  EXPECT_EQ(signals_of(w[1]), (std::vector<int>{SIGUSR2}));
  time_.advance(1ms);
  EXPECT_EQ(signals_of(w[1]), (std::vector<int>{SIGUSR2, SIGTERM, SIGCONT}));
  ASSERT_EQ(obs.saves.size(), 1u);
  EXPECT_FALSE(obs.saves[0].completed);
  spawner_.exit(w[0], W_EXITCODE(0, SIGTERM));
  spawner_.exit(w[1], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  EXPECT_EQ(end(), 143);
  EXPECT_EQ(obs.saves.size(), 1u);
}

TEST_F(SupervisorTest, WorkersThatEndDuringTheSaveEndTheWaitAndItIsReportedOnce) {
  SaveObserver obs;
  cfg_.observer = &obs;
  cfg_.save_signal = SIGUSR1;
  cfg_.wall_clock_ns = [] { return kStopWall; };
  begin();
  const auto w = workers(0);
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  spawner_.exit(w[0], W_EXITCODE(0, SIGUSR1));  // died of it: no handler
  spawner_.exit(w[1], W_EXITCODE(0, SIGUSR1));
  time_.run_ready();
  time_.advance(kGrace);
  time_.run_ready();
  EXPECT_EQ(end(), 143);
  ASSERT_EQ(obs.saves.size(), 1u);
  EXPECT_FALSE(obs.saves[0].completed);
}

TEST_F(SupervisorTest, WorkersThatSaveAndExitZeroDuringTheWaitLeaveTheStopsCode) {
  cfg_.save_signal = SIGUSR1;
  cfg_.wall_clock_ns = [] { return kStopWall; };
  begin();
  const auto w = workers(0);
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  sup_->checkpoint_complete({"/c/agent_12.pt", 12, kStopWall + 7});
  spawner_.exit(w[0], W_EXITCODE(0, 0));
  spawner_.exit(w[1], W_EXITCODE(0, 0));
  time_.run_ready();
  EXPECT_EQ(end(), 143);
}

// The flight recorder's part of the evidence: a child reads this node's dumps before its failure
// is reported, and a Stopped asked for meanwhile (another node's failure stopped this one) waits
// for it, whichever read ends first: the coordinator never hears this node stopped before it
// hears its root cause.
TEST_F(SupervisorTest, DumpsAreReadBeforeTheReportsAndTheReportsKeepTheirOrder) {
  cfg_.executable = "/usr/bin/python3";
  cfg_.argv = {"/usr/bin/python3", "-u", dir_ + "/train.py"};
  begin();
  const auto w = workers(0);
  for (int r = 0; r < 2; ++r)
    std::ofstream(dir_ + "/attempt_0/rank_" + std::to_string(r) + "/nccl_trace_rank_" +
                  std::to_string(r))
        << "a dump";
  const auto readers = [this] {
    std::vector<pid_t> out;
    for (pid_t p : spawner_.spawned())
      if (std::ranges::count(spawner_.child(p).req.argv, std::string("--evidence")))
        out.push_back(p);
    return out;
  };
  spawner_.exit_code(w[0], 1);
  time_.run_ready();
  ASSERT_EQ(readers().size(), 1u);
  const pid_t first = readers()[0];
  EXPECT_EQ(spawner_.child(first).req.argv.back(), dir_ + "/attempt_0/rank_1/nccl_trace_rank_1");
  EXPECT_EQ(std::ranges::count(cluster_->calls, std::string("failure 0")), 0);
  // Another node's failure stops this one meanwhile; its worker 1 exits; the Stopped's read starts.
  cluster_->peer_failure(node_failure(0, 1, 1, "rank 2 (node 1): exit 1"));
  time_.run_ready();
  spawner_.exit(w[1], W_EXITCODE(0, SIGTERM));
  time_.advance(300ms);
  ASSERT_EQ(readers().size(), 2u);
  const pid_t second = readers()[1];
  const std::string lines =
      "{\"rank\": 0, \"seq\": 7, \"op\": \"nccl:all_reduce\", \"group\": \"0\", \"state\": "
      "\"started\"}\n{\"rank\": 1, \"seq\": 6, \"op\": \"nccl:all_reduce\", \"group\": "
      "\"0\", \"state\": \"completed\"}\n";
  spawner_.write(second, lines);
  spawner_.exit_code(second, 0);
  time_.run_ready();
  EXPECT_EQ(std::ranges::count(cluster_->calls, std::string("stopped 0")), 0)
      << "the Stopped waits for the failure's report";
  spawner_.write(first, lines);
  spawner_.exit_code(first, 0);
  time_.run_ready();
  const auto at = [this](const char* call) {
    return std::ranges::find(cluster_->calls, std::string(call)) - cluster_->calls.begin();
  };
  ASSERT_LT(at("failure 0"), static_cast<long>(cluster_->calls.size()));
  ASSERT_LT(at("stopped 0"), static_cast<long>(cluster_->calls.size()));
  EXPECT_LT(at("failure 0"), at("stopped 0"));
  ASSERT_EQ(cluster_->failures[0].ranks.size(), 2u);
  EXPECT_EQ(cluster_->failures[0].ranks[1].collective.seq, 6);
  ASSERT_EQ(cluster_->stopped_evidence.size(), 2u);
  EXPECT_EQ(cluster_->stopped_evidence[0].collective.op, "nccl:all_reduce");
}

}  // namespace
}  // namespace tv
