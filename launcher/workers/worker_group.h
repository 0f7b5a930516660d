// WorkerGroup: the state machine of one node's workers, one generation at a time. Pure logic: it
// decides, GroupActions does (spawn, signal, timers, reporting). The supervisor drives it from
// its event loop; unit tests drive it with a fake GroupActions and no processes.
//
//            start()                 a worker fails / hangs, or stop()
//   kInit ───────────► kHealthy ──────────────────────────────► kStopping
//     ▲                   │ every worker exited 0                  │ every worker gone
//     │                   ▼                                        ▼
//     └──── start() ── kSucceeded                              kStopped ── start() ──► kHealthy
//
// Failure handling is all-or-nothing, as in torchelastic: the first failure the group sees stops
// the generation (the Supervisor names the root cause: the failure that happened first,
// root_cause_judge.h earliest_local_failure); the others get SIGTERM (or the signal trainvisor
// received), SIGKILL after the grace period, and the group is reported stopped only when every
// worker has exited. Whether a new generation follows is the Cluster's decision, not the group's.
#pragma once

#include <string>
#include <vector>

#include "launcher/job/cluster.h"

namespace tv {

enum class GroupState { kInit, kHealthy, kStopping, kSucceeded, kStopped };
const char* to_string(GroupState s);

// How a worker ended, in launcher terms: exit_code is the code, or 128+N for signal N, or 124
// for a hang, or 126/127 when it could not be started.
struct WorkerEnd {
  int local_rank = 0;
  int exit_code = 0;
  int signal = 0;  // N when killed by signal N
  bool hang = false;
  bool start_failed = false;
  bool ok() const { return exit_code == 0 && !hang && !start_failed; }
};

class GroupActions {
 public:
  virtual ~GroupActions() = default;
  // Starts one worker; on failure fills *end (exit code 126/127 and why) and returns false.
  virtual bool start_worker(int local_rank, const GenerationPlan& plan, WorkerEnd* end) = 0;
  virtual void signal_worker(int local_rank, int sig) = 0;  // to the worker's process group
  virtual void arm_grace_timer() = 0;
  virtual void cancel_grace_timer() = 0;
  // Every worker of the generation is gone: kill what they left behind (setsid grandchildren).
  virtual void cleanup_descendants() = 0;
  virtual void group_failed(int generation, const WorkerEnd& first) = 0;
  virtual void group_succeeded(int generation) = 0;
  virtual void group_stopped(int generation) = 0;
};

class WorkerGroup {
 public:
  WorkerGroup(int nproc, GroupActions& actions);

  void start(const GenerationPlan& plan);
  // A worker is over: its exit status collected and its output drained (WorkerRoster).
  void worker_over(const WorkerEnd& end);
  // A worker is alive but has been silent past the hang timeout.
  void on_worker_hang(int local_rank);
  // Stop every worker with `sig` (SIGTERM for a restart; the received signal on shutdown).
  void stop(int sig);
  void on_grace_expired();
  void kill_now();        // SIGKILL everything still running
  void forward(int sig);  // pass a signal on without changing state (SIGUSR1, SIGUSR2)

  GroupState state() const { return state_; }
  int generation() const { return generation_; }
  int running() const;
  bool is_running(int local_rank) const { return running_.at(local_rank); }

 private:
  void fail(const WorkerEnd& end);
  void begin_stopping(int sig);
  void signal_or_enter_stopped(int sig);
  void enter_stopped();

  GroupActions& actions_;
  std::vector<bool> running_;
  GroupState state_ = GroupState::kInit;
  int generation_ = -1;
};

}  // namespace tv
