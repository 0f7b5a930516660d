// Init: what makes trainvisor a correct first process (PID 1) of a container, for the whole life
// of the process. Created in main() before any other thread exists (tini does the same), right
// after the default logger (its signal thread logs).
//
// It owns three OS resources, and nothing else touches them:
// - The signals of owned_signal_set(): TERM INT HUP, CHLD, the stacks signal (stacks_signal())
//   and every signal it forwards to the workers (is_forwarded_signal: USR1 USR2 QUIT WINCH ... and
//   the real-time signals, tini's set). Blocked in every thread (threads inherit the mask of
//   main, which Init sets before any thread starts; cli/main.cc blocks them even earlier) and
//   taken by one signal thread with sigwaitinfo. Signal handlers of libraries therefore never run
//   in trainvisor (and PID 1 never loads vendor libraries: health/isolated_query.h).
// - The subreaper: as PID 1 every orphan of the container comes back to us; otherwise Init sets
//   PR_SET_CHILD_SUBREAPER so orphaned grandchildren do.
// - waitpid(-1): called only on the signal thread, after each SIGCHLD, until nothing is left.
//   Each status goes to the owner that started the child (the OnExit given to spawn); statuses of
//   processes nobody started here (orphans) are dropped.
//
// Starting a child is spawn(): the one spawner (Boost.Process v2's launcher; exec errors come
// back as 126/127; in the child: every other descriptor closed, own process group,
// PR_SET_PDEATHSIG=SIGKILL, empty signal mask, SIGPIPE default). The child's pid is registered
// under the same lock that waitpid runs under, so no exit can be reaped before its owner is known.
//
// Every owned signal but CHLD goes to the handler installed with route_signals (the supervisor,
// once it runs, through the SignalSource interface: common/signal_source.h). With none installed
// (options, topology, preflight, rendezvous, probes: any phase before the supervisor or after
// it), TERM/INT/HUP SIGKILL every live child's process group, log one line naming the phase, and
// exit 128+N at once; every other signal is dropped (no worker exists to take it).
//
// Threading: spawn, route_signals and set_phase may be called from any thread. OnExit and
// OnSignal run on the signal thread: they must be short and must not call back into Init's
// spawn (post to your own event loop or wake your own waiter instead).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "common/process.h"
#include "common/result.h"
#include "common/signal_source.h"

namespace tv {

// SIGRTMIN+8: "write the workers' Python stacks now" (`trainvisor stacks` sends it to trainvisor;
// trainvisor sends it to each worker, whose faulthandler is registered on it:
// launcher/workers/worker_hook.py). A real-time signal because SIGUSR1/SIGUSR2 belong to users
// and Slurm; +8 keeps clear of the first few, which glibc's timers and libraries reach for first.
int stacks_signal();

// Passed on to the workers' process groups without changing the job's course: USR1 USR2 QUIT ALRM
// STKFLT CONT TSTP URG XCPU XFSZ VTALRM PROF WINCH IO PWR and the real-time signals but the stacks
// signal (docs/supervision.md, "Signals").
bool is_forwarded_signal(int sig);
// What Init owns: TERM INT HUP (is_stop_signal), CHLD, the stacks signal and the forwarded ones.
// Safe before main (cli/main.cc blocks it from the executable's .preinit_array).
sigset_t owned_signal_set();
// "SIGQUIT", "SIGRTMIN+3".
std::string signal_name(int sig);

class Init final : public SignalSource {
 public:
  using OnExit = std::function<void(pid_t pid, int wait_status)>;

  Init();
  ~Init() override;
  Init(const Init&) = delete;
  Init& operator=(const Init&) = delete;

  // The process's Init (main's). Calling it when none exists is a programming error: abort.
  static Init& instance();

  // Starts `req`; `on_exit` gets the child's wait status once it has been reaped. The pid, or
  // 127/126 with the exec error.
  Result<pid_t> spawn(const SpawnRequest& req, OnExit on_exit);

  // While the returned Route lives, every owned signal but CHLD goes to `fn` (on the signal
  // thread).
  class Route final : public SignalRoute {
   public:
    Route() = default;
    Route(Route&& o) noexcept : init_(std::exchange(o.init_, nullptr)) {}
    Route& operator=(Route&&) = delete;
    ~Route() override;

   private:
    friend class Init;
    explicit Route(Init* init) : init_(init) {}
    Init* init_ = nullptr;
  };
  [[nodiscard]] Route route_signals(OnSignal fn);
  // SignalSource: route_signals behind the interface.
  [[nodiscard]] std::unique_ptr<SignalRoute> route(OnSignal fn) override {
    return std::make_unique<Route>(route_signals(std::move(fn)));
  }

  // Blocks the calling thread until TERM, INT or HUP arrives and returns it (the others are
  // dropped), for a command whose work runs on its own threads and ends on a signal
  // (`checkpoint watch`). `start` runs once the signals come here (the work started in it ends
  // by the returned signal, never by Init's exit). Not while a route is installed. Later stop
  // signals are dropped from then on (a second TERM, as timeout(1) sends, never turns the clean
  // stop into 128+N).
  int wait_for_stop_signal(const std::function<void()>& start = {});

  // Names what the process is doing, for the log line of a signal that ends it ("preflight").
  void set_phase(std::string phase);

  // Set (for good) by the signal thread when TERM, INT or HUP arrives (is_stop_signal: never
  // the stacks signal or a forwarded one, which change nothing), before the route runs: long
  // work on a routed thread (a later generation's resume lookup, on the Supervisor's loop) polls
  // it to end early instead of keeping the posted signal waiting.
  const std::atomic<bool>& stop_requested() const override { return stop_requested_; }
  int pending_stop_signal() const override;

  bool is_pid1() const { return pid1_; }
  // Live children started with spawn (tests and figures).
  size_t live_children() const;
  // What is this process's own and no worker's (launcher/workers/descendants.h): the live
  // children started with spawn, and the children it already had when Init was made (a sidecar
  // an entrypoint started before `exec trainvisor`).
  std::set<pid_t> own_children() const;
  // When Init was made, in the clock ticks since boot of /proc/PID/stat's `starttime`: a process
  // that started before it is none of the workers'.
  std::uint64_t started_ticks() const { return started_ticks_; }

 private:
  void loop();
  void on_signal(int sig);
  void reap();
  void shutdown_now(int sig);

  bool pid1_;
  std::uint64_t started_ticks_;
  std::set<pid_t> inherited_;  // the children this process had before Init (before the exec)
  mutable std::mutex mu_;      // children_, phase_, stopping_; waitpid runs under it
  std::map<pid_t, OnExit> children_;
  std::string phase_ = "startup";
  std::mutex route_mu_;  // held while the route runs, so a Route never ends mid-call
  OnSignal route_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<int> stop_signal_{0};  // the first stop signal taken
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tv
