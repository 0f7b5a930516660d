// The node's run under a stop signal and under a crash, in every state it can be in when one
// arrives (NodeRun's states, and the Supervisor's waits inside `running`: a hang's stacks, a root
// cause still exiting, a failed generation's grace period, a save before a stop; and `ending` for
// each of its causes). Each row brings the run to its state through real events on the fixture
// (supervisor_fixture.h), sends the event, lets every worker end, and checks the exit code, the
// failures reported to the cluster, and that nothing was started after the event. Also here: a
// warm standby taking over a failed rank's restart, and a stop signal during the resume lookup.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <string>
#include <vector>

#include "tests/unit/node/supervisor_fixture.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::kGrace;
using testing::SupervisorTest;

enum class State {
  kRunning,         // every worker running
  kHangStacks,      // a hang declared, every rank's stacks being collected
  kRootCauseWait,   // a rank failed; an earlier one (its error file written) is still exiting
  kFailedStopping,  // a rank failed; the other ignores its SIGTERM, the grace period runs
  kSaving,          // stopped by SIGTERM with --save-signal: the save's wait
  kEndingStopped,   // stopped by SIGTERM, the workers stopping
  kEndingGpuFault,  // a fatal Xid: ending with 74
  kEndingLost,      // another node lost: ending with 75
};

struct Row {
  const char* name;
  State state;
  int after_sigterm;  // the exit code when SIGTERM arrives in this state
  int after_crash;    // the exit code when the last running worker exits 1 in this state
  // The failure the cluster hears after the crash (the rank its summary names): "" for none.
  const char* reported;
};

class SupervisorStatesTest : public testing::SupervisorTest,
                             public ::testing::WithParamInterface<Row> {
 protected:
  void SetUp() override {
    SupervisorTest::SetUp();
    cfg_.layout.nproc_per_node = 3;
    spawner_.dies_on = {SIGKILL};
  }

  // Brings generation 0's run to `s` by the events that lead there.
  void reach(State s) {
    switch (s) {
      case State::kRunning:
        return begin();
      case State::kHangStacks:
        cfg_.hang_timeout = 1000ms;
        begin();
        time_.advance(1000ms);  // rank 0 silent for 1 s: the stacks first, no signal yet
        ASSERT_TRUE(live().size() == 3 && signals_of(live()[0]).empty());
        return;
      case State::kRootCauseWait: {
        cfg_.fs = &fs_;
        begin();
        const auto w = workers(0);
        write_error_file(w[0], "RuntimeError: CUDA error", 1);  // long before rank 1's exit
        spawner_.exit_code(w[1], 1);
        time_.run_ready();
        ASSERT_TRUE(cluster_->failures.empty());  // waiting for rank 0's own exit
        return;
      }
      case State::kFailedStopping:
        begin();
        spawner_.exit_code(workers(0)[0], 1);
        time_.run_ready();
        ASSERT_EQ(cluster_->failures.size(), 1u);
        return;
      case State::kSaving:
        cfg_.save_signal = SIGUSR1;
        begin();
        stop_signal();
        ASSERT_EQ(signals_of(workers(0)[0]), (std::vector<int>{SIGUSR1}));
        return;
      case State::kEndingStopped:
        begin();
        stop_signal();
        return;
      case State::kEndingGpuFault:
        watch_gpus();
        begin();
        spawner_.write(gpu_watch(), R"({"event":"xid","gpu":{"index":0,"uuid":"GPU-0"},"xid":79,)"
                                    R"("fatal":true,"meaning":"GPU has fallen off the bus"})"
                                    "\n");
        time_.run_ready();
        return;
      case State::kEndingLost:
        begin();
        cluster_->peer_lost("node 1 lost: closed by peer");
        time_.run_ready();
        return;
    }
  }
  void stop_signal() {
    ASSERT_TRUE(signals_.deliver(SIGTERM));
    time_.run_ready();
  }
  void watch_gpus() {
    SpawnRequest watch;
    watch.executable = "/usr/bin/trainvisor";
    watch.argv = {"trainvisor", "__query", "gpu-watch", "5"};
    cfg_.gpu_health = watch;
  }
  pid_t gpu_watch() { return spawner_.spawned().at(3); }  // after the three workers
  // Generation 0's workers not yet exited.
  std::vector<pid_t> live() {
    std::vector<pid_t> out;
    for (pid_t p : workers(0))
      if (!spawner_.child(p).exited) out.push_back(p);
    return out;
  }
  // Every worker ends: of the SIGTERM each got (or SIGKILL at the grace period's end).
  int finish() {
    time_.advance(2s);  // a root cause's exit window
    for (pid_t p : live())
      if (testing::count(signals_of(p), SIGTERM) > 0) spawner_.exit(p, W_EXITCODE(0, SIGTERM));
    time_.advance(kGrace);
    time_.run_ready();
    EXPECT_TRUE(live().empty());
    return end();
  }
};

TEST_P(SupervisorStatesTest, ASigtermEndsTheRunWithTheCodeOfTheStateAndStartsNothing) {
  reach(GetParam().state);
  const auto spawned = spawner_.spawned().size();
  const auto failures = cluster_->failures.size();
  stop_signal();
  EXPECT_EQ(finish(), GetParam().after_sigterm);
  EXPECT_EQ(spawner_.spawned().size(), spawned);    // no restart, no new child
  if (GetParam().state != State::kRootCauseWait) {  // its root cause is reported as it exits
    EXPECT_EQ(cluster_->failures.size(), failures);
  }
}

TEST_P(SupervisorStatesTest, ACrashEndsTheRunWithTheCodeOfTheStateAndIsReportedOnlyAsARootCause) {
  reach(GetParam().state);
  const auto failures = cluster_->failures.size();
  const auto running = live();
  ASSERT_FALSE(running.empty());
  spawner_.exit_code(running.back(), 1);
  time_.run_ready();
  EXPECT_EQ(finish(), GetParam().after_crash);
  const std::string expected = GetParam().reported;
  if (expected.empty()) {
    EXPECT_EQ(cluster_->failures.size(), failures);
    return;
  }
  ASSERT_EQ(cluster_->failures.size(), failures + 1);
  const NodeFailure& f = cluster_->failures.back();
  EXPECT_EQ(f.exit_code, GetParam().after_crash);  // a crash's, not a hang's 124
  EXPECT_NE(f.summary.find(expected + " "), std::string::npos) << f.summary;
}

// A repeat stop signal: the first one confirms a stop (the grace period runs on), a second
// SIGTERM kills now; any other ending's code stands.
INSTANTIATE_TEST_SUITE_P(
    EveryState, SupervisorStatesTest,
    ::testing::Values(Row{"Running", State::kRunning, 143, 1, "rank 2"},
                      Row{"HangStacks", State::kHangStacks, 143, 1, "rank 2"},
                      // The waited root cause stays the root cause, with its own exit status.
                      Row{"RootCauseWait", State::kRootCauseWait, 143, 143, "rank 0"},
                      Row{"FailedStopping", State::kFailedStopping, 143, 1, ""},
                      // A crash while saving is this node's failure (its log, its root-cause
                      // table), but no report leaves a node that is ending.
                      Row{"Saving", State::kSaving, 143, 143, ""},
                      Row{"EndingStopped", State::kEndingStopped, 143, 143, ""},
                      Row{"EndingGpuFault", State::kEndingGpuFault, 74, 74, ""},
                      Row{"EndingLost", State::kEndingLost, 75, 75, ""}),
    [](const auto& info) { return std::string(info.param.name); });

// A SIGTERM while the first generation's resume checkpoint is looked up (Init::stop_requested):
// no worker is started, and the run ends 128 + 15 with nothing to stop.
TEST_F(SupervisorTest, AStopSignalDuringTheResumeLookupStartsNoWorker) {
  cfg_.find_resume = [this](const GenerationPlan&) -> SupervisorConfig::ResumeLookup {
    return [this]() -> SupervisorConfig::ResumeAnswer {
      signals_.deliver(SIGTERM);  // Init's thread, while the lookup runs
      return [] { return std::optional<ResumeTarget>(ResumeTarget{"/c/agent_10.pt", {}}); };
    };
  };
  begin();
  ASSERT_TRUE(off_loop_.release());
  time_.run_ready();
  EXPECT_TRUE(spawner_.spawned().empty());
  EXPECT_EQ(end(), 143);
  EXPECT_EQ(cluster_->calls, (std::vector<std::string>{"join", "leave 15"}));
}

// Generation 1 runs in the standbys generation 0 prepared: no worker is spawned cold on the
// restart path, each standby gets its rank's environment for the new generation, and a SIGTERM
// then reaches the standbys that became the workers.
TEST_F(SupervisorTest, ARestartRunsInTheReadyStandbysAndASigtermStopsThem) {
  cfg_.warm.mode = WarmMode::kOn;
  cfg_.executable = "/usr/bin/python3";
  cfg_.argv = {"/usr/bin/python3", "-u", "train.py"};
  begin(/*restarts=*/1);
  // A standby is `python3 -u -c BOOTSTRAP ...`; the first workers are the command itself.
  const auto is_standby = [this](pid_t p) { return spawner_.child(p).req.argv.at(2) == "-c"; };
  std::vector<pid_t> cold, standbys;
  for (pid_t p : spawner_.spawned()) (is_standby(p) ? standbys : cold).push_back(p);
  ASSERT_EQ(cold.size(), 2u);
  ASSERT_EQ(standbys.size(), 2u);  // prepared once generation 0 had started
  for (pid_t p : standbys) spawner_.write_stdin(p, "R\n");  // the bootstrap: imports done
  time_.run_ready();

  const auto before = spawner_.spawned().size();
  spawner_.exit_code(cold[0], 1);
  time_.run_ready();
  spawner_.exit(cold[1], W_EXITCODE(0, SIGTERM));
  time_.run_ready();
  ASSERT_EQ(cluster_->calls.at(2), "stopped 0");
  for (size_t i = before; i < spawner_.spawned().size(); ++i)  // only the next standbys
    EXPECT_TRUE(is_standby(spawner_.spawned()[i]));
  for (pid_t p : standbys) {
    const std::string sent = spawner_.read_stdin(p);
    EXPECT_NE(sent.find("\"MASTER_PORT\":\"29501\""), std::string::npos) << sent;
    EXPECT_NE(sent.find("\"TORCHELASTIC_RESTART_COUNT\":\"1\""), std::string::npos) << sent;
  }
  ASSERT_TRUE(signals_.deliver(SIGTERM));
  time_.run_ready();
  for (pid_t p : standbys) {
    EXPECT_EQ(signals_of(p).front(), SIGTERM);
    spawner_.exit(p, W_EXITCODE(0, SIGTERM));
  }
  time_.run_ready();
  EXPECT_EQ(end(), 143);
}

}  // namespace
}  // namespace tv
