// The Supervisor's failure side: the facts this node's workers give the RootCauseJudge
// (root_cause_judge.h: which failed first, also when another node's failure stops this one), the
// report to the cluster with its time and signature, and at the end the root cause handed to
// root_cause_files.h, which decides what the orchestrator is shown.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>

#include "common/process.h"
#include "launcher/supervision/root_cause_files.h"
#include "launcher/supervision/root_cause_judge.h"
#include "launcher/supervision/supervisor.h"

namespace tv {

// The facts the RootCauseJudge chooses among (WorkerRoster::earliest_failure): the worker the
// group saw fail first, the others trainvisor has reaped with a failing status, and those still
// running that have written their error file (torch's @record writes it as the exception leaves
// the worker, which may then spend seconds in teardown while a peer's collateral error ends that
// peer first). A hang or a failed start stands as it is (group_failed).
std::optional<LocalFailure> Supervisor::earliest_failure_of(int generation) const {
  return roster_.earliest_failure(generation, wall_now(),
                                  [this](int local_rank) { return group_.is_running(local_rank); });
}

void Supervisor::group_failed(int generation, const WorkerEnd& first_seen) {
  std::optional<LocalFailure> cause;
  if (!first_seen.hang && !first_seen.start_failed) cause = earliest_failure_of(generation);
  if (!cause) return report_failure(generation, first_seen);
  if (cause->still_running) {
    // Reported when it ends (worker_over): its exit status belongs in the root cause.
    wait_for_cause(generation, cause->local_rank, first_seen);
    spdlog::info("rank {} wrote its error file before rank {} failed: waiting for it to exit",
                 global_rank(cfg_.layout, cause->local_rank),
                 global_rank(cfg_.layout, first_seen.local_rank));
    return;
  }
  report_failure(generation, cause->local_rank == first_seen.local_rank
                                 ? first_seen
                                 : roster_.end_of(cause->local_rank));
}

// Another node's failure stops this one while its group looks healthy. A worker here that has
// already failed (reaped, or its error file written) may have failed first: it is reported too,
// with its time, so that the job names whichever failed first (JobStateMachine::failure); one
// still exiting is waited for as in group_failed.
void Supervisor::claim_local_failure(int generation) {
  if (group_.state() != GroupState::kHealthy || generation != group_.generation() ||
      cause_wait_.waiting())
    return;
  const auto cause = earliest_failure_of(generation);
  if (!cause) return;
  if (!cause->still_running) return report_failure(generation, roster_.end_of(cause->local_rank));
  wait_for_cause(generation, cause->local_rank, std::nullopt);
  spdlog::info("rank {} had written its error file when node stop arrived: waiting for it to exit",
               global_rank(cfg_.layout, cause->local_rank));
}

// A root cause that does not finish exiting within the window gets the SIGTERM the others got.
void Supervisor::wait_for_cause(int generation, int local_rank,
                                std::optional<WorkerEnd> first_seen) {
  cause_wait_.wait(local_rank, std::move(first_seen), cfg_.grace, [this, generation](int rank) {
    if (group_.generation() != generation || !group_.is_running(rank)) return;
    spdlog::warn("rank {} has not exited since writing its error file: SIGTERM",
                 global_rank(cfg_.layout, rank));
    roster_.signal(rank, SIGTERM);
  });
}

void Supervisor::observe_failure(int generation) {
  if (failed_once_.first(generation) && cfg_.observer) cfg_.observer->generation_failed(generation);
}

void Supervisor::report_failure(int generation, const WorkerEnd& first) {
  const auto& w = roster_.at(first.local_rank);
  FailureRecord rec;
  rec.generation = generation;
  rec.node_rank = cfg_.layout.node_rank;
  rec.local_rank = first.local_rank;
  rec.rank = global_rank(cfg_.layout, first.local_rank);
  rec.exit_code = first.exit_code;
  rec.signal = first.signal;
  rec.hang = first.hang;
  if (auto why = hangs_.reason_of(generation); rec.hang && why) rec.hang_reason = *why;
  rec.out_of_memory = oom_kills_.why(rec.signal);
  if (w) {
    std::string why;
    rec.error = read_error_file(fs(), w->id().error_file, &why);
    if (!why.empty())
      spdlog::warn("rank {}: error file refused: {}; the output tail stands in", rec.rank, why);
    w->drain();  // both pipes, whichever the loop read last (a stop from another node, too)
    rec.traceback = w->last_traceback();
    rec.tail = w->tail();
  }
  rec.evidence = evidence_of(generation);
  causes_.push_back(rec);
  observe_failure(generation);
  NodeFailure f = node_failure(generation, rec.node_rank, rec.exit_code, summary_line(rec),
                               roster_.failed_at_ns(first, wall_now()));
  f.signature = failure_signature(rec, cfg_.progress_step ? cfg_.progress_step() : std::nullopt);
  if (rec.hang) f.ranks = stacks_.hang_evidence(generation);
  if (resume_) f.resumed_from = resume_->path;
  spdlog::error("generation {} failed: {}", generation, f.summary);
  if (cfg_.observer)
    cfg_.observer->failure_evidence(generation, f.summary, evidence_.paths(generation));
  auto ranks = std::move(f.ranks);
  report_with_collectives(generation, std::move(ranks),
                          [this, f = std::move(f)](std::vector<RankEvidence> ranks) mutable {
                            f.ranks = std::move(ranks);
                            cluster_.report_failure(f);
                          });
}

// The table of this node's root causes in the log; the orchestrator's files (root_cause_files.h).
void Supervisor::report_root_cause() {
  if (!causes_.empty()) spdlog::info("root causes:\n{}", format_failure_table(causes_));
  // The evidence as the files are now, the dumps read in a child Python (after the loop: blocks).
  const auto texts = root_cause_texts(node_run_.outcome(), causes_, [this](int g) {
    return evidence_of(g) + evidence_.nccl_summary(g);
  });
  if (!texts) return;
  if (write_root_cause_files({cfg_.failure_file, cfg_.termination_log}, *texts) && cfg_.observer)
    cfg_.observer->root_cause_file(cfg_.failure_file);
}

}  // namespace tv
