// The Supervisor's failure side: what LocalRootCause (local_root_cause.h), which decides this
// node's root cause, is given of the run, and where its report goes: the log, the observer (the
// goodput ledger) and the cluster, with this node's ranks' last collectives; and the cluster's
// stop of a failed generation, this node's own failure or another node's.
#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <memory>

#include "common/exit_codes.h"
#include "common/off_loop.h"
#include "launcher/node/root_cause_files.h"
#include "launcher/node/supervisor.h"

namespace tv {
namespace {
constexpr std::chrono::milliseconds kEndWriteDeadline{10000};
constexpr std::chrono::milliseconds kEndWriteStopDeadline{500};
}  // namespace

LocalRootCause::Hooks Supervisor::root_cause_hooks() {
  LocalRootCause::Hooks h;
  h.generation = [this] { return workers_.group().generation(); };
  h.healthy = [this] { return workers_.group().state() == GroupState::kHealthy; };
  h.is_running = [this](int local_rank) { return workers_.group().is_running(local_rank); };
  h.context = [this](int generation) {
    FailureContext c;
    c.hang_reason = hangs_.reason_of(generation);
    c.evidence = evidence_of(generation);
    c.hang_ranks = stacks_.hang_evidence(generation);
    if (resume_) c.resumed_from = resume_->path;
    if (cfg_.progress_step) c.step = cfg_.progress_step();
    return c;
  };
  h.send = [this](int generation, NodeFailure f) { send_failure(generation, std::move(f)); };
  h.wall_now = [this] { return wall_now(); };
  return h;
}

void Supervisor::send_failure(int generation, NodeFailure f) {
  observe_failure(generation);
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

// The cluster stops the generation for this node's own failure (its report came back) or for
// another node's.
void Supervisor::on_cluster_stop(const NodeFailure& f) {
  // Another node failed while this one was still looking up the generation's checkpoint or
  // opening its rank directories: no worker of it started here, so this node has stopped at once.
  if (drop_start_of(f.generation)) {
    spdlog::warn(
        "node {} failed in generation {}: its start here (resume lookup, rank "
        "directories) is dropped",
        f.node_rank, f.generation);
    observe_failure(f.generation);
    return node_run_.workers_gone(f.generation);
  }
  if (f.node_rank != cfg_.layout.node_rank) return on_peer_failure(f);
  observe_failure(f.generation);
  workers_.group().stop(SIGTERM);
}

// Another node failed. The ledger (node 0's, whichever node saw it) hears it here too: a hang's
// silence (this node's ranks waited in the same collective, so the time since its own last step
// is a hang's here too) and its root-cause line (its files are on that node). A worker here that
// had failed already may have failed first: it is claimed. A hang: this node's ranks' stacks too,
// before they are stopped, so that the job's culprit is decided from every rank (culprit.h).
void Supervisor::on_peer_failure(const NodeFailure& f) {
  spdlog::warn("node {} failed in generation {}: stopping this node's workers", f.node_rank,
               f.generation);
  const bool hang = f.exit_code == exit_code_of(ErrorKind::kHang);
  if (hang && cfg_.observer)
    cfg_.observer->generation_hung(f.generation,
                                   HangCheck::node_silence(workers_.roster().running(false)));
  observe_failure(f.generation);
  if (cfg_.observer) cfg_.observer->failure_evidence(f.generation, f.summary, {});
  root_cause_.claim(f.generation);
  if (!hang) return workers_.group().stop(SIGTERM);
  stacks_then("on node " + std::to_string(f.node_rank) + "'s hang", [this, g = f.generation] {
    if (workers_.group().generation() == g) workers_.group().stop(SIGTERM);
  });
}

// RunObserver::generation_failed through failed_once_: this node's own failure and the cluster's
// stop for the same generation both arrive on the failing node.
void Supervisor::observe_failure(int generation) {
  if (failed_once_.first(generation) && cfg_.observer) cfg_.observer->generation_failed(generation);
}

// The table of the job's root causes (where this node judged them: node 0) or this node's in the
// log; the orchestrator's files (root_cause_files.h), with the evidence as the files are now, the
// dumps read in a child Python (after the loop: blocks). The files are written beside this
// thread with a deadline (their paths may be on a slow or hung file system): 10 s, 0.5 s after a
// stop signal, whose end must come within the grace period; past it the run ends without them,
// saying so.
void Supervisor::report_root_cause() {
  const auto texts = root_cause_.end_texts(
      node_run_.outcome(), [this](int g) { return evidence_of(g) + evidence_.nccl_summary(g); },
      cluster_.judged_root_causes());
  if (!texts) return;
  const auto deadline =
      node_run_.stop_signal_seen() != 0 ? kEndWriteStopDeadline : kEndWriteDeadline;
  auto written = std::make_shared<std::atomic<bool>>(false);
  const RootCausePaths paths{cfg_.failure_file, cfg_.termination_log};
  if (!run_bounded([paths, t = *texts, written] { *written = write_root_cause_files(paths, t); },
                   deadline))
    return spdlog::warn(
        "failure file {}: not written {} ms after the run's end; exiting without it (a slow or "
        "hung file system?)",
        cfg_.failure_file, deadline.count());
  if (*written && cfg_.observer) cfg_.observer->root_cause_file(cfg_.failure_file);
}

}  // namespace tv
