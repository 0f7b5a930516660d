#include "launcher/node/node_run.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <cstring>

#include "common/exit_codes.h"

namespace tv {
int lost_exit_code(int signal) {
  return signal > 0 ? exit_code_of(ErrorKind::kStoppedBySignal, signal)
                    : exit_code_of(ErrorKind::kLost);
}

Error stopped_over_lost(Error e, int signal) {
  if (e.kind != ErrorKind::kLost || signal <= 0) return e;
  e.message +=
      std::string("; this node got SIG") + sigabbrev_np(signal) + " too: the job is being stopped";
  e.kind = ErrorKind::kStoppedBySignal;
  e.carried = signal;
  return e;
}

// actions[state][event]: the header's table, row by state.
const NodeRun::Action NodeRun::kTable[4][kEvents] = {
    // start      stop signal     done         give up      lost         refused      node fault
    // workers gone
    {A::kRun, A::kEndStopped, A::kEndWith, A::kEndWith, A::kEndWith, A::kEndWith, A::kEndWith,
     A::kIgnore},  // starting
    {A::kRun, A::kEndStopped, A::kEndWith, A::kEndWith, A::kEndWith, A::kEndWith, A::kEndWith,
     A::kReportStopped},  // running
    {A::kIgnore, A::kRepeat, A::kIgnore, A::kIgnore, A::kIgnore, A::kIgnore, A::kIgnore,
     A::kOver},  // ending
    {A::kIgnore, A::kIgnore, A::kIgnore, A::kIgnore, A::kIgnore, A::kIgnore, A::kIgnore,
     A::kIgnore},  // over
};

void NodeRun::dispatch(Event e) {
  switch (kTable[static_cast<int>(state_)][e]) {
    case Action::kIgnore:
      return;
    case Action::kRun:
      return run();
    case Action::kEndStopped:
      return end_stopped();
    case Action::kEndWith:
      return end_with();
    case Action::kRepeat:
      return repeat_signal();
    case Action::kReportStopped:
      return report_stopped();
    case Action::kOver:
      return go_over();
  }
}

void NodeRun::start(const GenerationPlan& plan) {
  plan_ = &plan;
  dispatch(kStart);
}

void NodeRun::stop_signal(int sig) {
  signal_ = sig;
  dispatch(kStopSignal);
}

void NodeRun::done() {
  next_ = Ending{Ending::Kind::kSucceeded, 0, std::nullopt, ""};
  dispatch(kDone);
}

void NodeRun::give_up(const NodeFailure& f) {
  next_ = Ending{Ending::Kind::kGaveUp, 0, f, ""};
  dispatch(kGiveUp);
}

void NodeRun::lost(const std::string& why, int signal, int generation, int node_rank) {
  next_ = Ending{Ending::Kind::kLost, signal,
                 node_failure(generation, node_rank, lost_exit_code(signal), why), ""};
  dispatch(kLost);
}

void NodeRun::refuse(const NodeFailure& f) {
  next_ = Ending{Ending::Kind::kRefused, 0, f, ""};
  dispatch(kRefused);
}

void NodeRun::node_fault(const NodeFailure& f, const std::string& text) {
  next_ = Ending{Ending::Kind::kNodeFault, 0, f, text};
  dispatch(kNodeFault);
}

void NodeRun::workers_gone(int generation) {
  generation_ = generation;
  dispatch(kGone);
}

void NodeRun::run() {
  const GenerationPlan& plan = *plan_;
  state_ = State::kRunning;
  actions_.start_generation(plan);  // may refuse (its rank directories): ending from here
}

void NodeRun::end_stopped() {
  ++stop_signals_;
  spdlog::warn("received SIG{}: {}, SIGKILL after {} ms", sigabbrev_np(signal_),
               !forwards_signals()
                   ? "Slurm delivered it to every process of the step (the workers too)"
                   : "forwarding to the workers",
               rules_.grace_ms);
  next_ = Ending{Ending::Kind::kStopped, signal_, std::nullopt, ""};
  end_run(forwards_signals() ? signal_ : 0);
}

void NodeRun::end_with() {
  if (next_.kind == Ending::Kind::kLost) {
    const std::string& why = next_.failure->summary;
    if (next_.signal > 0)
      spdlog::warn("{}: the job is being stopped from outside; stopping this node's workers", why);
    else
      spdlog::error("{}: stopping this node's workers", why);
    // Stopped from outside inside a Slurm step: Slurm signals this node's workers itself.
    return end_run(next_.signal > 0 && !forwards_signals() ? 0 : SIGTERM);
  }
  end_run(SIGTERM);
}

// The ending is next_ from here on: the cluster hears it, the workers get `stop_with`.
void NodeRun::end_run(int stop_with) {
  end_ = std::move(next_);
  state_ = State::kEnding;
  const bool stopped = end_.kind == Ending::Kind::kStopped;
  // A node fault is this node's own reason to end, which the other nodes cannot know otherwise.
  actions_.leave(exit_code(), stopped ? end_.signal : 0,
                 end_.kind == Ending::Kind::kNodeFault ? end_.failure->summary : "");
  if (!actions_.workers_running()) return go_over();
  if (stopped && rules_.save_first) return actions_.save_then_stop(end_.signal, stop_with);
  actions_.stop_workers(stop_with);
}

// A stop signal while the workers are stopping does not change the exit code. Inside a Slurm step
// a repeat belongs to the same delivery (at the time limit slurmd sends SIGTERM, SIGCONT, SIGTERM
// within milliseconds: docs/platforms/slurm.md) and Slurm SIGKILLs by itself after KillWait, so
// the grace period runs on from the first. Elsewhere the first one here only confirms the stop; a
// second SIGTERM/SIGINT means "now".
void NodeRun::repeat_signal() {
  const bool first = stop_signals_++ == 0;
  if (rules_.signals_reach_workers || first)
    return spdlog::info(
        "received SIG{} while exiting {}: {}; the grace period runs on", sigabbrev_np(signal_),
        exit_code(),
        rules_.signals_reach_workers
            ? "Slurm delivered it to the whole step and SIGKILLs by itself after KillWait"
            : "the workers are already stopping, the exit code stands");
  if (signal_ == SIGTERM || signal_ == SIGINT) {
    spdlog::warn("second {}: killing the workers now", sigabbrev_np(signal_));
    actions_.kill_workers_now();
  }
}

void NodeRun::report_stopped() { actions_.report_stopped(generation_); }

void NodeRun::go_over() {
  state_ = State::kOver;
  actions_.end_loop();
}

int NodeRun::exit_code() const {
  switch (end_.kind) {
    case Ending::Kind::kNone:
    case Ending::Kind::kSucceeded:
      return exit_code::kOk;
    case Ending::Kind::kStopped:
      return exit_code_of(ErrorKind::kStoppedBySignal, end_.signal);
    case Ending::Kind::kLost:
      return lost_exit_code(end_.signal);
    case Ending::Kind::kNodeFault:
      return exit_code_of(ErrorKind::kNodeFault);
    case Ending::Kind::kGaveUp:
    case Ending::Kind::kRefused:
      return end_.failure->exit_code;
  }
  return exit_code::kOk;
}

// The one line that says how this node ends, once the code is final.
void NodeRun::log_exit() const {
  const int code = exit_code();
  if (code == exit_code_of(ErrorKind::kLost))
    spdlog::error("exiting {} so the orchestrator retries the job", exit_code_of(ErrorKind::kLost));
  else if (end_.signal && code == exit_code_of(ErrorKind::kStoppedBySignal, end_.signal))
    spdlog::warn("exiting {}: the job was stopped by SIG{}", code, sigabbrev_np(end_.signal));
}

}  // namespace tv
