// NodeWorkers: this node's workers, one owner. It holds the WorkerGroup (all or nothing,
// worker_group.h) and carries out the group's actions on the resources it owns: each worker's
// start (WorkerStart: its rank directory, files, environment, a warm standby or a child through
// the Spawner), its exit (Init's, through the Spawner's exit callback) and its output
// (WorkerRoster: a worker is over once both are in), the signals to the workers, the grace timer
// and the leftovers. What the group decides reaches the Supervisor as Events, each with its data as
// values; the Supervisor only translates them into NodeRun's and the cluster's events.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "common/loop_time.h"
#include "launcher/job/cluster.h"
#include "launcher/node/supervisor_config.h"
#include "launcher/workers/evidence_files.h"
#include "launcher/workers/spawner.h"
#include "launcher/workers/standby_set.h"
#include "launcher/workers/worker_group.h"
#include "launcher/workers/worker_roster.h"
#include "launcher/workers/worker_start.h"

namespace tv {

class NodeWorkers final : private GroupActions {
 public:
  struct Events {
    // A worker of the running generation is over, told before the group hears it (the local
    // root cause sees every end first).
    std::function<void(const WorkerEnd&)> over;
    // True when `sig` to `local_rank` waits (the root cause on its way out: root_cause_wait.h).
    std::function<bool(int local_rank, int sig)> holds_signal;
    // When the SIGKILL comes after a save's wait (SaveBeforeStop::kill_at); none: the grace.
    std::function<std::optional<LoopClock::time_point>()> kill_at;
    std::function<void(int generation, const WorkerEnd& first_seen)> failed;
    std::function<void(int generation)> succeeded;
    std::function<void(int generation)> stopped;  // every worker gone, their leftovers killed
  };

  // `cfg`, `spawner`, `dirs` and `evidence` must outlive it.
  NodeWorkers(boost::asio::io_context& io, LoopTime& time, const SupervisorConfig& cfg,
              Spawner& spawner, const FileSystem& fs, const RankDirs& dirs,
              const EvidenceFiles& evidence, Events events);

  // A generation's start: its node rank and count placed (elastic membership), its rank
  // directories' opening (off the loop, by the caller) and, with them, every worker started.
  void place(const GenerationPlan& plan) { starts_.place(plan); }
  std::function<Result<std::vector<UniqueFd>>()> rank_dirs_work(int generation) {
    return starts_.rank_dirs_work(generation);
  }
  Status take_rank_dirs(int generation, Result<std::vector<UniqueFd>> opened) {
    return starts_.take_rank_dirs(generation, std::move(opened));
  }
  void new_generation() { roster_.new_generation(cfg_.layout.nproc_per_node); }
  // Starts every worker of `plan`, resuming from `resume`; then the next standbys are prepared.
  void start(const GenerationPlan& plan, std::optional<ResumeTarget> resume);
  // The next generation's standbys (after this generation's workers all started).
  void prepare_standbys();
  void stop_standbys();
  // A pid that Init reaped: a worker's (the roster's), else a standby's.
  void on_child_exit(pid_t pid, int status);
  // The loop stopped: the roster's reads are aborted (their handlers run at the next poll) and
  // the standbys are stopped; all_gone() once every standby's exit is in.
  void release();
  bool standbys_gone() const { return !standbys_ || standbys_->all_gone(); }

  WorkerGroup& group() { return group_; }
  const WorkerGroup& group() const { return group_; }
  WorkerRoster& roster() { return roster_; }
  const WorkerRoster& roster() const { return roster_; }
  const WorkerLayout& layout() const { return starts_.layout(); }

 private:
  using WorkerPtr = std::shared_ptr<WorkerProcess>;
  // GroupActions: what the WorkerGroup decides, carried out here.
  bool start_worker(int local_rank, const GenerationPlan& plan, WorkerEnd* end) override;
  void signal_worker(int local_rank, int sig) override;
  void arm_grace_timer() override;
  void cancel_grace_timer() override { grace_timer_.cancel(); }
  void cleanup_descendants() override;
  void group_failed(int generation, const WorkerEnd& first) override {
    events_.failed(generation, first);
  }
  void group_succeeded(int generation) override;
  void group_stopped(int generation) override { events_.stopped(generation); }

  bool attach(const WorkerPtr& w, pid_t pid);
  void worker_over(const WorkerPtr& w, const WorkerEnd& end);
  std::chrono::system_clock::time_point wall_now() const;

  const SupervisorConfig& cfg_;
  Spawner& spawner_;
  Events events_;
  WorkerGroup group_;
  LoopTimer grace_timer_;
  WorkerRoster roster_;  // this generation's workers, by local rank and pid
  WorkerStart starts_;   // the rank directories, each worker's files, environment, process
  std::unique_ptr<StandbySet> standbys_;  // warm standbys; null when off
  std::optional<ResumeTarget> resume_;    // this generation's checkpoint
};

}  // namespace tv
