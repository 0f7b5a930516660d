// WorkerRoster: the WorkerProcesses of the running generation, by local rank and by pid; when
// each is over; and the facts the deciders read off them: how each ended (its wait status), which
// are still running and how long each has been silent (HangCheck), which a stacks collection
// signals, and which failed first (RootCauseJudge's candidates, with their error files' mtimes).
// The Supervisor adds each worker it starts and hands it each exit; nothing here signals a worker
// but signal().
//
// A worker is over once both its exit status and its output are in: its pipes closed, or the
// drain window (200 ms) passed after its exit, so a grandchild that keeps a pipe open never holds
// the end. Then what it wrote is drained and its end goes to `on_over`, once, posted to the loop:
// the other exits Init reaped in the same pass are queued already and get their status first, so
// the root cause is chosen among all of them.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/file_system.h"
#include "launcher/job/root_cause_judge.h"
#include "launcher/workers/hang_check.h"
#include "launcher/workers/stacks_collection.h"
#include "launcher/workers/worker_group.h"
#include "launcher/workers/worker_process.h"

namespace tv {

class WorkerRoster {
 public:
  using WorkerPtr = std::shared_ptr<WorkerProcess>;
  using WallTime = std::chrono::system_clock::time_point;

  using OnOver = std::function<void(const WorkerPtr&, const WorkerEnd&)>;
  // `fs`: where the error files' mtimes are read; it must outlive the roster.
  WorkerRoster(boost::asio::io_context& io, const FileSystem& fs, OnOver on_over)
      : io_(io), fs_(fs), on_over_(std::move(on_over)) {}

  // A generation of `nproc` workers begins: none started yet (the last one's are let go).
  void new_generation(int nproc);
  // A started worker, by its local rank and its pid: attached to its pipes (WorkerProcess::attach).
  void add(const WorkerPtr& w, pid_t pid);
  // Init reaped `pid`: its worker's status and reap time are set, and it is over once its output
  // is in. False: no worker of this roster (a standby, or one released already).
  bool exited(pid_t pid, int status, WallTime reaped_at);
  // The worker of `local_rank` (null: not started).
  const WorkerPtr& at(int local_rank) const;
  void signal(int local_rank, int sig) const;
  // How `local_rank` ended, from its exit status (exit 0 while it has none yet).
  WorkerEnd end_of(int local_rank) const;
  // The workers not reaped yet, by local rank; `take_heartbeats`: with each one's heartbeat
  // change since the last such look (HeartbeatReads; a change is output, and a step to the
  // progress rules).
  std::vector<WorkerLook> running(bool take_heartbeats) const;
  // The workers not reaped yet (whose heartbeat files HeartbeatReads reads).
  std::vector<WorkerPtr> unreaped() const;
  // The running workers a stacks collection signals, with their stacks files.
  std::vector<StacksCollection::Worker> stack_targets() const;
  // RootCauseJudge's candidates of `generation` (earliest_local_failure): those reaped with a
  // failing status, and those still running (`is_running`) that have written their error file.
  std::optional<LocalFailure> earliest_failure(int generation, WallTime now,
                                               const std::function<bool(int)>& is_running) const;
  // When `end` failed (LocalFailure::when): its error file's mtime, else its reap time; a hang,
  // a failed start or a worker not reaped: `now`. Nanoseconds since the epoch.
  std::int64_t failed_at_ns(const WorkerEnd& end, WallTime now) const;
  void close_pipes() const;
  // The loop is ending: every pipe closed and drain timer cancelled, every worker let go.
  void release();

 private:
  LocalFailure failure_time(const WorkerProcess& w, WallTime now) const;
  void streams_closed(const WorkerPtr& w);
  void post_over(const WorkerPtr& w);
  void over(const WorkerPtr& w);

  boost::asio::io_context& io_;
  const FileSystem& fs_;
  OnOver on_over_;
  std::vector<WorkerPtr> by_rank_;  // this generation's, by local rank
  std::map<pid_t, WorkerPtr> by_pid_;
};

}  // namespace tv
