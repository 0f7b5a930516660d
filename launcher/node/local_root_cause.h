// LocalRootCause: this node's root cause of a failed generation, from its workers' facts (the
// WorkerRoster's) to the report the cluster hears, and at the end to the orchestrator's files.
// It decides which of this node's workers failed first (RootCauseJudge's earliest local failure:
// error-file mtime, else reap time), also when another node's stop arrives while the group looks
// healthy (claim); it waits for a root cause still exiting (RootCauseWait: its SIGTERM held, its
// own exit status reported); it assembles the FailureRecord (error file, traceback, tail, a
// SIGKILL the OOM killer counted, a hang's reason and stacks, the evidence listing) and the
// NodeFailure with its time and signature; it keeps every failed generation's record for the end
// (root_cause_files.h decides the texts). The run's other facts come through Hooks.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/file_system.h"
#include "common/loop_time.h"
#include "launcher/job/cluster.h"
#include "launcher/job/root_cause.h"
#include "launcher/node/cgroup_memory.h"
#include "launcher/node/node_run.h"
#include "launcher/node/root_cause_files.h"
#include "launcher/node/root_cause_wait.h"
#include "launcher/workers/worker_env.h"
#include "launcher/workers/worker_group.h"
#include "launcher/workers/worker_roster.h"

namespace tv {

// What the run knows of generation g's failure beyond its workers.
struct FailureContext {
  std::optional<std::string> hang_reason;  // HangCheck's verdict words
  std::string evidence;                    // the stacks taken on its hang, the evidence files
  std::vector<RankEvidence> hang_ranks;    // where each rank was (a hang's stacks)
  std::string resumed_from;                // the checkpoint the generation resumed from ("")
  std::optional<std::int64_t> step;        // the last progress step (the signature's)
};

class LocalRootCause {
 public:
  struct Hooks {
    // The group's facts: its generation, whether it is healthy (no failure, no stop yet), and
    // whether a local rank of it is still running.
    std::function<int()> generation;
    std::function<bool()> healthy;
    std::function<bool(int local_rank)> is_running;
    std::function<FailureContext(int generation)> context;
    // The report, once per failure found here: to the log, the observer and the cluster.
    std::function<void(int generation, NodeFailure f)> send;
    // The wall clock failures are ordered on (reap times, error files' mtimes).
    std::function<std::chrono::system_clock::time_point()> wall_now;
  };
  LocalRootCause(boost::asio::io_context& io, LoopTime& time, const FileSystem& fs,
                 const WorkerRoster& roster, const WorkerLayout& layout,
                 std::chrono::milliseconds grace, Hooks hooks);

  void generation_started();  // the OOM kills' baseline; no wait carries over
  // The group failed (first_seen: the worker it saw fail first; a hang or a failed start stands
  // as it is): the earliest failure here is reported, or waited for while it still exits.
  void group_failed(int generation, const WorkerEnd& first_seen);
  // Another node's failure stops this one while its group looks healthy: a worker here that had
  // already failed (reaped, or its error file written) may have failed first, so it is reported
  // too, with its time (the job names whichever failed first: JobStateMachine::failure).
  void claim(int generation);
  // A worker of the running generation is over: the waited root cause's exit is reported.
  void worker_over(const WorkerEnd& end);
  // Whether `sig` to `local_rank` is held: the root cause on its way out keeps its exit status.
  bool holds(int local_rank, int sig) const { return wait_.holds(local_rank, sig); }
  const std::vector<FailureRecord>& causes() const { return causes_; }
  // The end of the run: the texts of the failure file and the termination log for `ending` (the
  // table to the log first: the job's root causes where this node judged them, `judged`, else
  // this node's: root_cause_table); `evidence`: generation g's lines as the files are now. The
  // Supervisor writes them (beside its thread, with a deadline: report_root_cause).
  std::optional<RootCauseTexts> end_texts(
      const Ending& ending, const std::function<std::string(int generation)>& evidence,
      const std::vector<NodeFailure>& judged = {}) const;

 private:
  std::optional<LocalFailure> earliest(int generation) const;
  void wait_for(int generation, int local_rank, std::optional<WorkerEnd> first_seen);
  void report(int generation, const WorkerEnd& first);
  FailureRecord record_of(int generation, const WorkerEnd& first, const FailureContext& c) const;

  const FileSystem& fs_;
  const WorkerRoster& roster_;
  WorkerLayout layout_;
  std::chrono::milliseconds grace_;
  Hooks hooks_;
  OomKills oom_kills_;                 // whether a SIGKILL was the OOM killer's
  RootCauseWait wait_;                 // a root cause still exiting: its exit completes the report
  std::vector<FailureRecord> causes_;  // this node's root cause per failed generation
};

}  // namespace tv
