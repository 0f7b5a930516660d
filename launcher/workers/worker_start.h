// WorkerStart: how one worker of a generation comes to run (docs/supervision.md, "Worker start").
// Its rank directory first: every local rank's is opened before any worker of the generation
// starts (rank_dirs.h), so a refused one is decided before a process exists. Then its files'
// paths (error file, heartbeat, stacks: stale ones from an earlier run cleared), its environment
// (worker_env.h, with the evidence variables) and command line (the resume arguments appended),
// and its process: a ready warm standby takes the rank from generation 1 on (standby_set.h), else
// a new child through the Spawner with two output pipes. It owns the generation's open rank
// directories and the environments the next standbys are prepared with; the Supervisor attaches
// what it returns and carries out a refusal.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/file_system.h"
#include "common/loop_time.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "launcher/job/cluster.h"
#include "launcher/workers/evidence_files.h"
#include "launcher/workers/rank_dirs.h"
#include "launcher/workers/spawner.h"
#include "launcher/workers/standby_set.h"
#include "launcher/workers/worker_env.h"
#include "launcher/workers/worker_process.h"

namespace tv {

// A checkpoint to resume from: its path (TRAINVISOR_RESUME_CHECKPOINT) and the arguments
// appended to every worker's command line.
struct ResumeTarget {
  std::string path;
  std::vector<std::string> args;
};

struct WorkerStartSetup {
  WorkerLayout layout;
  std::string executable;  // resolved argv[0]
  std::vector<std::string> argv;
  Environment base_env;
  std::string work_dir;
  bool keep_logs = false;          // --log-dir: per-rank files under work_dir
  bool json_worker_lines = false;  // --log-format json
  int first_attempt = 0;           // attempt_<first_attempt + g>/ (attempt_number.h)
};

// A worker that runs: its process object (pipes open) and pid, to be attached.
struct StartedWorker {
  std::shared_ptr<WorkerProcess> worker;
  pid_t pid = -1;
};

class WorkerStart {
 public:
  // Every reference must outlive it; `on_exit` is each new child's exit (Spawner::spawn).
  WorkerStart(boost::asio::io_context& io, LoopTime& time, Spawner& spawner, const RankDirs& dirs,
              const EvidenceFiles& evidence, WorkerStartSetup setup, Spawner::OnExit on_exit);

  // The node rank and node count of the generation about to start: the plan's where elastic
  // membership gives them (GenerationPlan::nnodes > 0), else as they were.
  void place(const GenerationPlan& plan);
  const WorkerLayout& layout() const { return setup_.layout; }
  // Every local rank's directory of `generation`, opened (and its stale error and stacks files
  // cleared) before any of its workers starts, by a call that owns what it uses so that it can
  // run off the loop (a slow log directory: Supervisor::start_workers); it needs only `dirs`.
  using RankDirsWork = std::function<Result<std::vector<UniqueFd>>()>;
  RankDirsWork rank_dirs_work(int generation) const;
  // What that call opened, kept for start(); the refusal (78, naming the path and what was
  // expected) when one was refused.
  Status take_rank_dirs(int generation, Result<std::vector<UniqueFd>> opened);
  // Both at once, on the caller's thread.
  Status open_rank_dirs(int generation) {
    return take_rank_dirs(generation, rank_dirs_work(generation)());
  }
  // Starts `local_rank`'s worker of `plan` (its directory opened by open_rank_dirs), from a
  // standby of `standbys` where one is ready (may be null). A start that fails is the
  // error with the worker's exit code (126/127 from exec, 71 for trainvisor's own pipes).
  Result<StartedWorker> start(int local_rank, const GenerationPlan& plan,
                              const std::optional<ResumeTarget>& resume, StandbySet* standbys);
  // This generation's worker environments, by local rank (the next standbys get them).
  const std::vector<Environment>& rank_envs() const { return rank_env_; }

 private:
  boost::asio::io_context& io_;
  LoopTime& time_;
  Spawner& spawner_;
  const RankDirs& dirs_;
  const EvidenceFiles& evidence_;
  WorkerStartSetup setup_;
  Spawner::OnExit on_exit_;
  std::vector<UniqueFd> rank_dirs_;    // this generation's (open_rank_dirs), taken by start
  std::vector<Environment> rank_env_;  // this generation's, by local rank
};

}  // namespace tv
