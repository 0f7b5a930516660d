// NodeRun: how this node's run goes and how it ends, as one pure state machine (no loop, no
// process, no clock), in the style of JobStateMachine and of s6-supervise's actions[state][event].
// The Supervisor feeds it the events its sources give (the cluster's start and end, a stop
// signal, a refused start, a GPU fault, every worker gone) and carries out what it asks through
// NodeRunActions. It owns the outcome: the ending is decided once, by the first event that ends
// the run, and exit_code() computes the exit code from the state the run ends in.
//
//   event \ state    starting          running              ending              over
//   start            run it -> running run it               -                   -
//   stop signal      end: stopped(N)   end: stopped(N)      repeat rule         -
//   done             end: succeeded    end: succeeded       -                   -
//   give up          end: gave up      end: gave up         -                   -
//   lost             end: lost         end: lost            -                   -
//   refused          end: refused      end: refused         -                   -
//   node fault       end: node fault   end: node fault      -                   -
//   workers gone     -                 report stopped       -> over, end loop   -
//
// "end" leaves the cluster (the signal, a node fault's reason), stops the workers (the signal
// they get is decided here: a Slurm step delivers its signals itself, a --save-signal stop saves
// first) and goes to `ending`; with no worker running it goes on to `over` at once.
// The repeat rule (a stop signal while ending): the first only confirms the stop; inside a Slurm
// step every repeat belongs to the same delivery; elsewhere a second SIGTERM/SIGINT kills now.
// Every word for an ending is one of these states or Ending::Kind (docs/supervision.md).
#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "launcher/job/cluster.h"

namespace tv {

// How the run ended; kNone while it runs.
struct Ending {
  enum class Kind { kNone, kSucceeded, kStopped, kGaveUp, kLost, kRefused, kNodeFault };
  Kind kind = Kind::kNone;
  int signal = 0;  // kStopped: the signal; kLost: the signal the job was stopped with (0: none)
  // kGaveUp, kLost, kRefused, kNodeFault: the root cause the failure file and the termination
  // log give (kRefused: its exit_code is the ending's, 78 or 69).
  std::optional<NodeFailure> failure;
  std::string fault;  // kNodeFault: the failure file's text
};

// What NodeRun asks of the Supervisor. Each is one of the Supervisor's own actions on its
// resources; none calls back into NodeRun except start_generation (a refused rank directory).
class NodeRunActions {
 public:
  virtual ~NodeRunActions() = default;
  virtual void start_generation(const GenerationPlan& plan) = 0;
  // The outcome is decided: the standbys stop, the observer hears `exit_code`, the other nodes
  // hear this node leave (with `signal`, and `reason` for a node fault).
  virtual void leave(int exit_code, int signal, const std::string& reason) = 0;
  virtual bool workers_running() const = 0;
  virtual void stop_workers(int sig) = 0;  // sig (0: none, only the grace period), then SIGKILL
  // --save-signal: the save signal, then stop_workers(stop_with); `sig` is the stop signal.
  virtual void save_then_stop(int sig, int stop_with) = 0;
  virtual void kill_workers_now() = 0;
  virtual void report_stopped(int generation) = 0;  // another node's failure stopped these
  virtual void end_loop() = 0;                      // the run is over: the event loop stops
};

// A lost node's exit code (docs/coordination.md, "Stopped from outside"): 75, retry, unless the
// node left on a stop signal or this node has one of its own (taken or still pending, `signal`):
// then the job is being stopped from outside, and every node ends as that node does, 128 + N.
// The one rule, for a node lost under the Supervisor (NodeRun::lost) and before it starts (the
// node-rank assignment and the multi-node preflight: stopped_over_lost).
int lost_exit_code(int signal);
// A refusal before the Supervisor starts: a lost node's (75) becomes 128 + N with `signal`.
Error stopped_over_lost(Error e, int signal);

struct NodeRunRules {
  bool signals_reach_workers = false;  // inside a Slurm step (SupervisorConfig's)
  bool save_first = false;             // --save-signal
  long grace_ms = 0;                   // for the log: SIGKILL after the grace period
};

class NodeRun {
 public:
  enum class State { kStarting, kRunning, kEnding, kOver };

  NodeRun(NodeRunRules rules, NodeRunActions& actions) : rules_(rules), actions_(actions) {}

  void start(const GenerationPlan& plan);
  void stop_signal(int sig);
  void done();
  void give_up(const NodeFailure& f);
  // Another node left (or could not be reached); `signal`: the stop signal it left on, or this
  // node's own (taken or pending), 0 for none.
  void lost(const std::string& why, int signal, int generation, int node_rank);
  // This node cannot go on as configured (a refused rank directory: 78; --gpu-health on with no
  // GPU watch: 69).
  void refuse(const NodeFailure& f);
  void node_fault(const NodeFailure& f, const std::string& text);
  void workers_gone(int generation);

  State state() const { return state_; }
  bool ending() const { return state_ == State::kEnding || state_ == State::kOver; }
  bool over() const { return state_ == State::kOver; }
  const Ending& outcome() const { return end_; }
  // The signal that stopped the job, here or on a peer (0: none).
  int stop_signal_seen() const { return end_.signal; }
  // Whether trainvisor passes a signal on to the workers itself: not inside a Slurm step, where
  // Slurm delivered it to every process of the step (the one place of that rule, for stop
  // signals and forwarded ones alike).
  bool forwards_signals() const { return !rules_.signals_reach_workers; }
  // The exit code of the state the run ends in (0 while it runs).
  int exit_code() const;
  // The line that says why this node exits so (75: retry; 128+N: stopped); none for the rest.
  void log_exit() const;

 private:
  enum Event { kStart, kStopSignal, kDone, kGiveUp, kLost, kRefused, kNodeFault, kGone, kEvents };
  enum class Action { kIgnore, kRun, kEndStopped, kEndWith, kRepeat, kReportStopped, kOver };
  using A = Action;  // the table's spelling
  static const Action kTable[4][kEvents];

  void dispatch(Event e);
  void run();
  void end_stopped();
  void end_with();
  void repeat_signal();
  void report_stopped();
  void go_over();
  void end_run(int stop_with);

  NodeRunRules rules_;
  NodeRunActions& actions_;
  State state_ = State::kStarting;
  Ending end_;
  // The event being dispatched, and what it carries.
  const GenerationPlan* plan_ = nullptr;
  int signal_ = 0;
  int generation_ = 0;
  Ending next_;
  int stop_signals_ = 0;  // the stop signals this run has had
};

}  // namespace tv
