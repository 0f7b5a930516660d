// The Supervisor's failure side: which worker of a generation failed first (the root cause, also
// when another node's failure stops this one), its report to the cluster with its time, and the
// root cause written where the orchestrator shows it at the end.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>

#include "common/process.h"
#include "launcher/supervision/supervisor.h"

namespace tv {
namespace {
// How long a root cause that has written its error file may take to exit by itself (Python and
// CUDA teardown) before it gets its SIGTERM too; at most the grace period.
constexpr auto kRootCauseExitWindow = std::chrono::milliseconds(2000);
constexpr size_t kTerminationLogLimit = 4096;  // Kubernetes reads at most 4096 bytes
constexpr size_t kFailureFileLimit = 1024;     // SageMaker shows the first 1024 characters

void write_root_cause(const std::string& path, const std::string& text, bool only_if_absent,
                      std::size_t limit) {
  auto written = write_root_cause_file(path, text, only_if_absent, limit);
  if (!written)
    spdlog::warn("root cause {}", written.error().message);
  else if (*written)
    spdlog::info("root cause written to {}", path);
}

// When worker `w` failed, as FailureTime orders it: its error file's mtime, else when it was
// reaped. One that has not been reaped yet counts only with an error file.
FailureTime failure_time(const WorkerProcess& w) {
  const auto written = error_file_written(w.id().error_file);
  return {w.id().local_rank, written,
          w.wait_status ? w.reaped_at : written.value_or(std::chrono::system_clock::now())};
}

}  // namespace

// The failure that happened first among the workers of this generation: the one the group saw
// fail first, the others trainvisor has reaped with a failing status, and those still running that
// have written their error file (torch's @record writes it as the exception leaves the worker,
// which may then spend seconds in teardown while a peer's collateral error ends that peer first).
// Ordered by root_cause.h's FailureTime. A hang or a failed start stands as it is.
std::optional<Supervisor::Cause> Supervisor::earliest_failure_of(int generation) const {
  std::vector<FailureTime> times;
  std::vector<Cause> causes;
  for (const auto& w : workers_) {
    if (!w || w->id().generation != generation) continue;
    const FailureTime time = failure_time(*w);
    WorkerEnd end;
    end.local_rank = time.local_rank;
    if (w->wait_status) {
      end.exit_code = exit_code_from_status(*w->wait_status);
      end.signal = signal_from_status(*w->wait_status);
      if (end.ok()) continue;
    } else if (!time.error_written || !group_.is_running(time.local_rank)) {
      continue;
    }
    times.push_back(time);
    causes.push_back({end, !w->wait_status});
  }
  if (times.empty()) return std::nullopt;
  return causes[earliest_failure(times)];
}

void Supervisor::group_failed(int generation, const WorkerEnd& first_seen) {
  std::optional<Cause> cause;
  if (!first_seen.hang && !first_seen.start_failed) cause = earliest_failure_of(generation);
  if (!cause) cause = Cause{first_seen, false};
  if (cause->still_running) {
    // Reported when it ends (end_worker): its exit status belongs in the root cause.
    pending_cause_ = PendingCause{cause->end.local_rank, first_seen};
    arm_pending_timer(generation);
    spdlog::info("rank {} wrote its error file before rank {} failed: waiting for it to exit",
                 global_rank(cfg_.layout, cause->end.local_rank),
                 global_rank(cfg_.layout, first_seen.local_rank));
    return;
  }
  report_failure(generation, cause->end);
}

// Another node's failure stops this one while its group looks healthy. A worker here that has
// already failed (reaped, or its error file written) may have failed first: it is reported too,
// with its time, so that the job names whichever failed first (JobStateMachine::failure); one
// still exiting is waited for as in group_failed.
void Supervisor::claim_local_failure(int generation) {
  if (group_.state() != GroupState::kHealthy || generation != group_.generation() || pending_cause_)
    return;
  const auto cause = earliest_failure_of(generation);
  if (!cause) return;
  if (!cause->still_running) return report_failure(generation, cause->end);
  pending_cause_ = PendingCause{cause->end.local_rank, std::nullopt};
  arm_pending_timer(generation);
  spdlog::info("rank {} had written its error file when node stop arrived: waiting for it to exit",
               global_rank(cfg_.layout, cause->end.local_rank));
}

// A root cause that does not finish exiting within the window gets the SIGTERM the others got.
void Supervisor::arm_pending_timer(int generation) {
  pending_timer_.expires_after(
      std::min<std::chrono::milliseconds>(kRootCauseExitWindow, cfg_.grace));
  pending_timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    if (ec || !pending_cause_ || group_.generation() != generation) return;
    const int local_rank = pending_cause_->local_rank;
    if (!group_.is_running(local_rank)) return;
    spdlog::warn("rank {} has not exited since writing its error file: SIGTERM",
                 global_rank(cfg_.layout, local_rank));
    if (auto& w = workers_.at(static_cast<size_t>(local_rank))) w->signal(SIGTERM);
  });
}

// When `end` failed (FailureTime): its error file's mtime, else when it was reaped; a hang or a
// failed start: now.
std::int64_t Supervisor::failed_at_ns(const WorkerEnd& end) const {
  auto when = std::chrono::system_clock::now();
  const auto& w = workers_.at(static_cast<size_t>(end.local_rank));
  if (w && w->wait_status && !end.hang && !end.start_failed) when = failure_time(*w).when();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
}

void Supervisor::observe_failure(int generation) {
  if (!cfg_.observer || generation <= observed_failure_) return;
  observed_failure_ = generation;
  cfg_.observer->generation_failed(generation);
}

void Supervisor::report_failure(int generation, const WorkerEnd& first) {
  const auto& w = workers_.at(static_cast<size_t>(first.local_rank));
  FailureRecord rec;
  rec.generation = generation;
  rec.node_rank = cfg_.layout.node_rank;
  rec.local_rank = first.local_rank;
  rec.rank = global_rank(cfg_.layout, first.local_rank);
  rec.exit_code = first.exit_code;
  rec.signal = first.signal;
  rec.hang = first.hang;
  if (rec.signal == SIGKILL && memory_cgroup_) {
    const RealFileSystem fs;
    const auto kills = oom_kill_count(fs, *memory_cgroup_);
    if (kills && *kills > oom_kills_at_start_)
      rec.out_of_memory = out_of_memory_text(memory_limit(fs, *memory_cgroup_));
  }
  if (w) {
    std::string why;
    rec.error = read_error_file(w->id().error_file, &why);
    if (!why.empty())
      spdlog::warn("rank {}: error file refused: {}; the output tail stands in", rec.rank, why);
    rec.tail = w->tail();
  }
  rec.evidence = evidence_of(generation);
  causes_.push_back(rec);
  observe_failure(generation);
  spdlog::error("attempt {} failed: {}", generation, summary_line(rec));
  cluster_.report_failure(NodeFailure{generation, rec.node_rank, rec.exit_code, summary_line(rec),
                                      failed_at_ns(first)});
}

void Supervisor::report_root_cause() {
  if (!causes_.empty()) spdlog::info("root causes:\n{}", format_failure_table(causes_));
  if (!final_failure_) return;
  std::string text = final_failure_->summary + "\n";
  // This node's own record (with its traceback) only when the job's root cause is this node's:
  // a collateral failure here is not the reason another node's failure gets.
  for (auto& c : causes_)
    if (c.generation == final_failure_->generation && c.node_rank == final_failure_->node_rank) {
      // supervisor_stacks.cc: the files as they are now (peers' dumps came later), the dumps read
      // in a child Python (after the loop: it blocks).
      c.evidence = evidence_of(c.generation) + nccl_summary(c.generation);
      text = detail_text(c);
    }
  if (node_fault_) text = *node_fault_ + "\n";
  write_root_cause(cfg_.failure_file, text, true, kFailureFileLimit);
  if (!cfg_.termination_log.empty())
    write_root_cause(cfg_.termination_log, text, false, kTerminationLogLimit);
}

}  // namespace tv
