// JobStateMachine: the whole job's decisions, for one node and for many. Pure: no sockets, timers,
// clock or ports of its own. The caller feeds it what happened (with the time it happened) and it
// answers through JobActions. A one-node job runs it in-process (LocalCluster); a multi-node job
// runs it in the rendezvous coordinator on node 0 (RdzvCoordinator), which relays its actions to
// every node. So restarts, fresh ports and restart counting are the same code for 1..N nodes.
//
//   gathering(0) --every node present, preflight asked--> preflight --every node passed-->
//                 running(0) | --every node reported, one failed--> give up (69, the lowest
//                 failing node's summary)
//   gathering(0) --every node present--> running(0)
//   running(g)   --any failure--> stopping(g) --every node stopped--> backoff --> running(g+1)
//                                                                  | give up (restarts spent)
//   running(g)   --every node succeeded--> done
//   any state    --lost(why)--> lost
//   running(g) | stopping(g) --member_lost (elastic, enough nodes remain)--> stopping(g)
//                --every remaining node stopped--> backoff (no pause) --> running(g+1)
//   running(g)   --reform (elastic: nodes waiting to join)--> the same, with more nodes
// A membership change (member_lost, reform) is not a failure: no restart is counted against
// --max-restarts and the judge is not asked (a worker failure reported while the generation
// re-forms is a consequence of the lost node). Who is a member is the caller's
// (launcher/rendezvous/membership.h); the machine only counts its nodes (set_nodes).
// Which failure is a generation's root cause, and whether it is worth another generation, is the
// RootCauseJudge's (root_cause_judge.h): every failure report is offered to it, and once every
// node stopped its verdict may give up before the restarts are spent.
// Generation g is restart g (TORCHELASTIC_RESTART_COUNT). Generation 0 uses the base
// MASTER_PORT (a fresh one when the base is 0); every later one a fresh port from
// JobActions::fresh_port (the old one may still be held by a dying TCPStore, or taken by another
// job on the node).
//
// Restart pause (restart_pause): none for the first restart, nor after a generation that ran at
// least kSettled (a crash after a long run restarts at once); a generation that was itself a
// restart and failed within kSettled is a failure in quick succession: 0.1 s, 0.2 s, ... 5 s.
//
// Time is the event loop's (common/loop_time.h): every `now` is LoopTime::now() of its caller,
// every pause a LoopClock::duration, so a test that drives the caller's LoopTime drives this too.
//
// Not thread-safe; call it from one thread (the event loop).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "common/loop_time.h"
#include "launcher/job/cluster.h"
#include "launcher/job/restart_policy.h"
#include "launcher/job/root_cause_judge.h"

namespace tv {

struct JobEnd {
  enum class Kind { kDone, kGiveUp, kLost };
  Kind kind = Kind::kDone;
  NodeFailure failure;  // kGiveUp: the root cause (exit_code is the job's)
  std::string why;      // kLost: the reason; kGiveUp: a log line
  int signal = 0;       // kLost: the signal that made a node leave (0: none), for 128+N everywhere
};

class JobActions {
 public:
  virtual ~JobActions() = default;
  virtual void begin_preflight() = 0;                       // every node: run the preflight
  virtual void start(const GenerationPlan& plan) = 0;       // every node: start this generation
  virtual void stop(const NodeFailure& root_cause) = 0;     // every node: stop the workers
  virtual void arm_backoff(LoopClock::duration pause) = 0;  // then call backoff_over()
  virtual void finish(const JobEnd& end) = 0;               // the end, once
  virtual int fresh_port() = 0;                             // a free port; 0 when none
};

class JobStateMachine {
 public:
  using Clock = LoopClock;
  enum class State { kGathering, kPreflight, kBackoff, kRunning, kStopping, kFinished };
  static constexpr std::chrono::seconds kSettled{10};
  // MASTER_PORT when the base is 0 and the kernel gives no fresh port (a bad bind address).
  static constexpr int kNoFreshPort = 29500;

  JobStateMachine(int nnodes, RestartPolicy policy, int base_master_port, bool preflight,
                  JobActions& actions);

  // Every node is present (before generation 0).
  void all_present(Clock::time_point now);
  void preflight_result(int node, bool passed, const std::string& summary, Clock::time_point now);
  void success(int node, int generation);
  void failure(NodeFailure f, Clock::time_point now);  // f.node_rank, f.generation
  // `ranks`: where its ranks were when a hang's stacks were taken (none: not a hang, no stacks);
  // `step`: the last progress step the node's workers printed in the generation (none: none).
  void stopped(int node, int generation, const std::vector<RankEvidence>& ranks = {},
               std::optional<std::int64_t> step = std::nullopt);
  void backoff_over(Clock::time_point now);
  void lost(const std::string& why, int signal = 0);
  // Elastic membership: node `node` of this generation is gone and `remaining` members are left
  // (the caller checked there are enough): the generation stops on the others and the next one
  // forms without it. Before generation 0 nothing happens; during the preflight the job is lost.
  void member_lost(int node, const std::string& why, int remaining);
  // Elastic membership: nodes wait to join (`node`: one of them, named in the stop): the running
  // generation stops and the next forms.
  void reform(int node, const std::string& why);
  // The node count of the next generation (the caller formed it), before it starts.
  void set_nodes(int nnodes) { nnodes_ = nnodes; }
  // Before generation 0: the job cannot run as configured (f.exit_code, f.summary): every node
  // gives up with it.
  void refuse(const NodeFailure& f);
  // The preflight phase asked after the machine was made (node 0 learnt it is node 0 by binding
  // the rendezvous port); no effect once generation 0 is under way.
  void set_preflight(bool on) {
    if (state_ == State::kGathering && gen_ == 0) preflight_ = on;
  }

  State state() const { return state_; }
  int generation() const { return gen_; }
  int restarts() const { return restarts_; }  // counted against --max-restarts
  int nodes() const { return nnodes_; }
  int master_port() const { return master_port_; }
  // The job's root cause of each judged generation, oldest first (RootCauseJudge::history).
  const std::vector<NodeFailure>& root_causes() const { return judge_.history(); }

  // The pause before restarting after generation `generation` failed having run for `ran`;
  // `quick_before`: how many restarts in a row before it were failures in quick succession.
  static LoopClock::duration restart_pause(int generation, Clock::duration ran, int quick_before);

 private:
  void start_generation(Clock::time_point now);
  void after_stop();
  void keep_evidence(const std::vector<RankEvidence>& ranks);
  void keep_step(std::optional<std::int64_t> step);
  void end(JobEnd e);
  void stop_for_membership(int node, const std::string& why);
  void after_membership_stop();

  int nnodes_;
  RestartPolicy policy_;
  int base_master_port_;
  bool preflight_;
  JobActions& actions_;
  State state_ = State::kGathering;
  int gen_ = 0;
  int restarts_ = 0;    // restarts after a failure; gen_ counts membership changes too
  std::string reform_;  // non-empty: this generation ends for a membership change (why)
  int master_port_ = 0;
  int quick_ = 0;  // restarts in a row that failed within kSettled
  Clock::time_point started_at_{};
  Clock::duration next_pause_{0};
  RootCauseJudge judge_;
  std::string retried_by_;  // the rule that let the next generation start
  std::string step_over_;   // the checkpoint the next generation steps over (its rule's)
  std::set<int> succeeded_;
  std::set<int> stopped_;
  std::map<int, RankEvidence> evidence_;  // by rank: this generation's hang evidence
  // The job's progress in this generation: the highest step any node's failure or Stopped gave.
  std::optional<std::int64_t> job_step_;
  std::map<int, std::pair<bool, std::string>> verdicts_;  // by node: passed, summary
};

}  // namespace tv
