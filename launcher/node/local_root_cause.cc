#include "launcher/node/local_root_cause.h"

#include <spdlog/spdlog.h>

#include <csignal>

#include "launcher/job/root_cause_judge.h"

namespace tv {

LocalRootCause::LocalRootCause(boost::asio::io_context& io, LoopTime& time, const FileSystem& fs,
                               const WorkerRoster& roster, const WorkerLayout& layout,
                               std::chrono::milliseconds grace, Hooks hooks)
    : fs_(fs),
      roster_(roster),
      layout_(layout),
      grace_(grace),
      hooks_(std::move(hooks)),
      oom_kills_(fs),
      wait_(io, time) {}

void LocalRootCause::generation_started() {
  oom_kills_.generation_started();
  wait_.cancel();
}

// The facts the RootCauseJudge chooses among (WorkerRoster::earliest_failure): the worker the
// group saw fail first, the others trainvisor has reaped with a failing status, and those still
// running that have written their error file (torch's @record writes it as the exception leaves
// the worker, which may then spend seconds in teardown while a peer's collateral error ends that
// peer first).
std::optional<LocalFailure> LocalRootCause::earliest(int generation) const {
  return roster_.earliest_failure(generation, hooks_.wall_now(), hooks_.is_running);
}

void LocalRootCause::group_failed(int generation, const WorkerEnd& first_seen) {
  std::optional<LocalFailure> cause;
  if (!first_seen.hang && !first_seen.start_failed) cause = earliest(generation);
  if (!cause) return report(generation, first_seen);
  if (cause->still_running) {
    // Reported when it ends (worker_over): its exit status belongs in the root cause.
    wait_for(generation, cause->local_rank, first_seen);
    spdlog::info("rank {} wrote its error file before rank {} failed: waiting for it to exit",
                 global_rank(layout_, cause->local_rank),
                 global_rank(layout_, first_seen.local_rank));
    return;
  }
  report(generation, cause->local_rank == first_seen.local_rank
                         ? first_seen
                         : roster_.end_of(cause->local_rank));
}

void LocalRootCause::claim(int generation) {
  if (!hooks_.healthy() || generation != hooks_.generation() || wait_.waiting()) return;
  const auto cause = earliest(generation);
  if (!cause) return;
  if (!cause->still_running) return report(generation, roster_.end_of(cause->local_rank));
  wait_for(generation, cause->local_rank, std::nullopt);
  spdlog::info("rank {} had written its error file when node stop arrived: waiting for it to exit",
               global_rank(layout_, cause->local_rank));
}

void LocalRootCause::worker_over(const WorkerEnd& end) {
  if (const auto cause = wait_.ended(end); cause.report) report(hooks_.generation(), *cause.report);
}

// A root cause that does not finish exiting within the window gets the SIGTERM the others got.
void LocalRootCause::wait_for(int generation, int local_rank, std::optional<WorkerEnd> first_seen) {
  wait_.wait(local_rank, std::move(first_seen), grace_, [this, generation](int rank) {
    if (hooks_.generation() != generation || !hooks_.is_running(rank)) return;
    spdlog::warn("rank {} has not exited since writing its error file: SIGTERM",
                 global_rank(layout_, rank));
    roster_.signal(rank, SIGTERM);
  });
}

FailureRecord LocalRootCause::record_of(int generation, const WorkerEnd& first,
                                        const FailureContext& c) const {
  FailureRecord rec;
  rec.generation = generation;
  rec.node_rank = layout_.node_rank;
  rec.local_rank = first.local_rank;
  rec.rank = global_rank(layout_, first.local_rank);
  rec.exit_code = first.exit_code;
  rec.signal = first.signal;
  rec.hang = first.hang;
  if (rec.hang && c.hang_reason) rec.hang_reason = *c.hang_reason;
  rec.out_of_memory = oom_kills_.why(rec.signal);
  if (const auto& w = roster_.at(first.local_rank)) {
    std::string why;
    rec.error = read_error_file(fs_, w->id().error_file, &why);
    if (!why.empty())
      spdlog::warn("rank {}: error file refused: {}; the output tail stands in", rec.rank, why);
    w->drain();  // both pipes, whichever the loop read last (a stop from another node, too)
    rec.traceback = w->last_traceback();
    rec.tail = w->tail();
  }
  rec.evidence = c.evidence;
  return rec;
}

void LocalRootCause::report(int generation, const WorkerEnd& first) {
  FailureContext c = hooks_.context(generation);
  const FailureRecord& rec = causes_.emplace_back(record_of(generation, first, c));
  NodeFailure f = node_failure(generation, rec.node_rank, rec.exit_code, summary_line(rec),
                               roster_.failed_at_ns(first, hooks_.wall_now()));
  f.rank = rec.rank;
  f.signature = failure_signature(rec, c.step);
  if (rec.hang) f.ranks = std::move(c.hang_ranks);
  f.resumed_from = std::move(c.resumed_from);
  hooks_.send(generation, std::move(f));
}

std::optional<RootCauseTexts> LocalRootCause::end_texts(
    const Ending& ending, const std::function<std::string(int generation)>& evidence,
    const std::vector<NodeFailure>& judged) const {
  if (const auto table = root_cause_table(judged, causes_); !table.empty())
    spdlog::info("root causes:\n{}", table);
  return root_cause_texts(ending, causes_, evidence);
}

}  // namespace tv
