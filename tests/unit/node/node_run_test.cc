// NodeRun, driven event by event with fake actions: every ending from every state, the exit code
// each state ends in, the outcome decided once, the stop signal's rules (Slurm, --save-signal,
// a repeat), a refusal from inside a start.
#include "launcher/node/node_run.h"

#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include "common/exit_codes.h"

namespace tv {
namespace {

using State = NodeRun::State;
using Kind = Ending::Kind;

struct FakeActions : NodeRunActions {
  std::vector<std::string> log;  // the actions in their order
  int running = 2;               // workers running
  std::function<void()> on_start;
  void start_generation(const GenerationPlan& p) override {
    log.push_back("start " + std::to_string(p.generation));
    if (on_start) on_start();
  }
  void leave(int code, int sig, const std::string& reason) override {
    log.push_back("leave " + std::to_string(code) + " " + std::to_string(sig) +
                  (reason.empty() ? "" : " " + reason));
  }
  bool workers_running() const override { return running > 0; }
  void stop_workers(int sig) override { log.push_back("stop " + std::to_string(sig)); }
  void save_then_stop(int sig, int with) override {
    log.push_back("save " + std::to_string(sig) + " " + std::to_string(with));
  }
  void kill_workers_now() override { log.push_back("kill"); }
  void report_stopped(int g) override { log.push_back("stopped " + std::to_string(g)); }
  void end_loop() override { log.push_back("end loop"); }
};

using Log = std::vector<std::string>;

class NodeRunTest : public ::testing::Test {
 protected:
  NodeRun make(NodeRunRules rules = {}) { return NodeRun(rules, actions); }
  // A run brought to `s` (kEnding by a give-up with exit 1).
  void bring(NodeRun& r, State s) {
    if (s == State::kStarting) return;
    r.start(GenerationPlan{0, 29500, ""});
    if (s == State::kRunning) return;
    r.give_up(node_failure(0, 0, 1, "rank 0: exit 1"));
    if (s == State::kEnding) return;
    r.workers_gone(0);
  }
  FakeActions actions;
};

TEST_F(NodeRunTest, EveryEndingHasTheExitCodeOfItsState) {
  struct Case {
    const char* name;
    std::function<void(NodeRun&)> end;
    Kind kind;
    int code;
  };
  const std::vector<Case> cases = {
      {"done", [](NodeRun& r) { r.done(); }, Kind::kSucceeded, 0},
      {"SIGTERM", [](NodeRun& r) { r.stop_signal(SIGTERM); }, Kind::kStopped, 143},
      {"SIGINT", [](NodeRun& r) { r.stop_signal(SIGINT); }, Kind::kStopped, 130},
      {"give up", [](NodeRun& r) { r.give_up(node_failure(2, 1, 124, "hang")); }, Kind::kGaveUp,
       124},
      {"lost", [](NodeRun& r) { r.lost("node 1 lost", 0, 0, 0); }, Kind::kLost, 75},
      {"lost on SIGTERM", [](NodeRun& r) { r.lost("node 1 left", SIGTERM, 0, 0); }, Kind::kLost,
       143},
      {"refused", [](NodeRun& r) { r.refuse(node_failure(0, 0, 78, "rank dir")); }, Kind::kRefused,
       78},
      {"node fault",
       [](NodeRun& r) { r.node_fault(node_failure(0, 0, 74, "Xid 79"), "node 0: Xid 79"); },
       Kind::kNodeFault, exit_code_of(ErrorKind::kNodeFault)},
  };
  for (const auto& c : cases)
    for (const State from : {State::kStarting, State::kRunning}) {
      SCOPED_TRACE(std::string(c.name) + (from == State::kStarting ? " starting" : " running"));
      actions = FakeActions{};
      NodeRun r = make();
      bring(r, from);
      EXPECT_EQ(r.exit_code(), 0);
      c.end(r);
      EXPECT_EQ(r.state(), State::kEnding);
      EXPECT_EQ(r.outcome().kind, c.kind);
      EXPECT_EQ(r.exit_code(), c.code);
      EXPECT_EQ(actions.log.back().rfind("stop ", 0), 0u) << actions.log.back();
      r.workers_gone(0);
      EXPECT_TRUE(r.over());
      EXPECT_EQ(actions.log.back(), "end loop");
      EXPECT_EQ(r.exit_code(), c.code);
    }
}

TEST_F(NodeRunTest, TheOutcomeIsDecidedOnceWhateverComesAfter) {
  for (const State at : {State::kEnding, State::kOver}) {
    actions = FakeActions{};
    NodeRun r = make();
    bring(r, at);
    const Log before = actions.log;
    r.done();
    r.lost("node 1 lost", 0, 0, 0);
    r.refuse(node_failure(0, 0, 78, "x"));
    r.node_fault(node_failure(0, 0, 74, "x"), "x");
    r.give_up(node_failure(0, 0, 2, "x"));
    r.start(GenerationPlan{1, 29501, ""});
    if (at == State::kOver) r.stop_signal(SIGTERM);
    EXPECT_EQ(r.exit_code(), 1);
    EXPECT_EQ(r.outcome().failure->summary, "rank 0: exit 1");
    EXPECT_EQ(actions.log, before);
  }
}

TEST_F(NodeRunTest, ASigtermInEveryStateEndsTheRunOrLeavesItsCodeAlone) {
  {  // starting: no worker runs, so the run is over at once
    actions.running = 0;
    NodeRun r = make();
    r.stop_signal(SIGTERM);
    EXPECT_EQ(actions.log, (Log{"leave 143 15", "end loop"}));
    EXPECT_EQ(r.exit_code(), 143);
    EXPECT_EQ(r.stop_signal_seen(), SIGTERM);
  }
  {  // running: the workers get it, the other nodes hear it
    actions = FakeActions{};
    NodeRun r = make();
    bring(r, State::kRunning);
    r.stop_signal(SIGTERM);
    EXPECT_EQ(actions.log, (Log{"start 0", "leave 143 15", "stop 15"}));
    r.workers_gone(0);
    EXPECT_EQ(r.exit_code(), 143);
  }
  {  // ending (a give-up): the first only confirms, a second kills now, the code stands
    actions = FakeActions{};
    NodeRun r = make();
    bring(r, State::kEnding);
    r.stop_signal(SIGTERM);
    EXPECT_EQ(actions.log.back(), "stop 15");
    r.stop_signal(SIGTERM);
    EXPECT_EQ(actions.log.back(), "kill");
    EXPECT_EQ(r.exit_code(), 1);
    EXPECT_EQ(r.stop_signal_seen(), 0);
  }
}

TEST_F(NodeRunTest, ASecondSigtermKillsNowButARepeatedHangupDoesNot) {
  NodeRun r = make();
  bring(r, State::kRunning);
  r.stop_signal(SIGHUP);
  r.stop_signal(SIGHUP);
  EXPECT_EQ(actions.log.back(), "stop 1");
  r.stop_signal(SIGINT);
  EXPECT_EQ(actions.log.back(), "kill");
  EXPECT_EQ(r.exit_code(), 129);
}

TEST_F(NodeRunTest, InsideASlurmStepTheWorkersAreNotSignalledAndRepeatsNeverKill) {
  NodeRun r = make(NodeRunRules{true, false, 1000});
  bring(r, State::kRunning);
  r.stop_signal(SIGTERM);
  EXPECT_EQ(actions.log.back(), "stop 0");  // Slurm delivered it to them already
  r.stop_signal(SIGTERM);
  r.stop_signal(SIGTERM);
  EXPECT_EQ(actions.log.back(), "stop 0");
  EXPECT_EQ(r.exit_code(), 143);
}

TEST_F(NodeRunTest, ALostNodeOnAStopSignalInsideASlurmStepLeavesTheWorkersToSlurm) {
  NodeRun r = make(NodeRunRules{true, false, 1000});
  bring(r, State::kRunning);
  r.lost("node 1 left on SIGTERM", SIGTERM, 0, 0);
  EXPECT_EQ(actions.log, (Log{"start 0", "leave 143 0", "stop 0"}));
  EXPECT_EQ(r.stop_signal_seen(), SIGTERM);
  EXPECT_EQ(r.outcome().failure->exit_code, 143);
  actions.log.clear();
  NodeRun lost = make(NodeRunRules{true, false, 1000});
  bring(lost, State::kRunning);
  lost.lost("node 1 lost", 0, 3, 0);  // a lost node is no stop: the workers get SIGTERM
  EXPECT_EQ(actions.log.back(), "stop 15");
  EXPECT_EQ(lost.outcome().failure->generation, 3);
  EXPECT_EQ(lost.exit_code(), 75);
}

TEST_F(NodeRunTest, SaveSignalSavesFirstOnAStopSignalOnly) {
  NodeRun r = make(NodeRunRules{false, true, 1000});
  bring(r, State::kRunning);
  r.stop_signal(SIGTERM);
  EXPECT_EQ(actions.log.back(), "save 15 15");
  actions.log.clear();
  NodeRun slurm = make(NodeRunRules{true, true, 1000});
  bring(slurm, State::kRunning);
  slurm.stop_signal(SIGTERM);
  EXPECT_EQ(actions.log.back(), "save 15 0");
  actions.log.clear();
  NodeRun fault = make(NodeRunRules{false, true, 1000});
  bring(fault, State::kRunning);
  fault.node_fault(node_failure(0, 0, 74, "Xid 79"), "node 0: Xid 79");
  EXPECT_EQ(actions.log, (Log{"start 0", "leave 74 0 Xid 79", "stop 15"}));
}

TEST_F(NodeRunTest, ARefusalFromInsideAStartEndsTheRunBeforeAnyWorker) {
  NodeRun r = make();
  actions.running = 0;
  actions.on_start = [&] { r.refuse(node_failure(0, 0, 78, "attempt_0: a link")); };
  r.start(GenerationPlan{0, 29500, ""});
  EXPECT_EQ(actions.log, (Log{"start 0", "leave 78 0", "end loop"}));
  EXPECT_TRUE(r.over());
  EXPECT_EQ(r.exit_code(), 78);
}

TEST_F(NodeRunTest, WorkersGoneWhileRunningIsAnotherNodesStopReported) {
  NodeRun r = make();
  bring(r, State::kRunning);
  r.workers_gone(0);
  EXPECT_EQ(actions.log.back(), "stopped 0");
  EXPECT_EQ(r.state(), State::kRunning);
  r.start(GenerationPlan{1, 29501, ""});  // the restart
  EXPECT_EQ(actions.log.back(), "start 1");
  r.done();
  r.workers_gone(1);
  EXPECT_EQ(actions.log.back(), "end loop");
  EXPECT_EQ(r.exit_code(), 0);
}

// The same rule before the Supervisor starts (the node-rank assignment, the multi-node preflight).
TEST(StoppedOverLost, ALostNodesRefusalIsTheStopWhenThisNodeHasAStopSignal) {
  const Error lost{ErrorKind::kLost, "node 1 did not answer"};
  EXPECT_EQ(stopped_over_lost(lost, 0).kind, ErrorKind::kLost);
  EXPECT_EQ(stopped_over_lost(lost, 0).message, lost.message);
  const Error stopped = stopped_over_lost(lost, SIGTERM);
  EXPECT_EQ(stopped.exit_code(), 128 + SIGTERM);
  EXPECT_EQ(stopped.message,
            "node 1 did not answer; this node got SIGTERM too: the job is being stopped");
  const Error config{ErrorKind::kConfig, "bad --nnodes"};  // no lost node: a signal changes nothing
  EXPECT_EQ(stopped_over_lost(config, SIGTERM).kind, ErrorKind::kConfig);
  EXPECT_EQ(lost_exit_code(SIGINT), 128 + SIGINT);
  EXPECT_EQ(lost_exit_code(0), exit_code_of(ErrorKind::kLost));
}

}  // namespace
}  // namespace tv
