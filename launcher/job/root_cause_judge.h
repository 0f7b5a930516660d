// RootCauseJudge: the one owner of "which failure is the job's root cause" and of "is it worth
// another generation". Pure: no clock, no files, no sockets; the Supervisor (this node's workers),
// the JobStateMachine (every node's reports, in-process or in the rendezvous coordinator) and the
// rendezvous protocol (NodeFailure with its signature on the wire) carry facts to it and act on
// its answers (docs/supervision.md, "Root cause" and "Failures that will fail again").
//
//   this node:  earliest_local_failure(candidates with their times) -> the worker to report
//   the job:    offer(NodeFailure) per report -> first | earlier (replaces) | later | stale
//               verdict() once every node stopped -> retry, or give up naming the rule and the
//               two failures it compared
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "launcher/job/cluster.h"
#include "launcher/job/restart_policy.h"
#include "launcher/job/root_cause.h"

namespace tv {

// One failed (or failing) worker of this node's generation, as well as trainvisor can tell when
// it failed: torch's @record writes the error file as the exception leaves the worker, so the
// file's mtime is the moment of failure; a worker without one is placed at the moment trainvisor
// reaped it (no earlier than its death). The error file's own "timestamp" is whole seconds: two
// ranks failing in the same second tie there, which is how a collateral "Connection closed by
// peer" on rank 0 used to be named the root cause instead of rank 1's exception.
struct LocalFailure {
  int local_rank = 0;
  std::optional<std::chrono::system_clock::time_point> error_written;
  std::chrono::system_clock::time_point reaped;  // for one still running: when it was looked at
  bool still_running = false;                    // wrote its error file, not reaped yet
  std::chrono::system_clock::time_point when() const { return error_written.value_or(reaped); }
};
// The earliest of `candidates` (ties: the first in the list); nullopt when there is none.
std::optional<LocalFailure> earliest_local_failure(const std::vector<LocalFailure>& candidates);

// A failure's signature: the exception type and its message with numbers, hex addresses and
// paths normalized, the progress step it happened at, and whether it is a CUDA out-of-memory.
// From the error file, else the last traceback on stderr (`traceback`), else the worker's last
// output lines (`tail`).
FailureSignature failure_signature(const FailureRecord& rec, std::optional<std::int64_t> step);
// "/data/shard_17.bin at 0x7f3a2c00 step 40" -> "<path> at <addr> step <n>".
std::string normalize_message(std::string_view text);
// "generation 1 (ValueError: bad batch <n> at step 40)": a failure as the judge's lines name it.
std::string described(const NodeFailure& f);

// The root cause's text as the failure file / termination log show it: its first line (the
// summary), then the judge's decision (f.verdict), then, with `recent`, the last generations'
// root causes (f.recent), then the rest (the traceback or the output tail).
std::string with_decision(const std::string& text, const NodeFailure& f, bool recent);

struct Verdict {
  bool retry = true;
  // Why (the label of the /metrics counter): "cannot_start", "same_failure", "cuda_oom_same_step"
  // (give up), "different_failure", "no_exception" (none recognized: nothing to compare),
  // "first_failure", "always" (retry as usual).
  std::string rule;
  std::string line;  // one log line naming the rule and the failures it compared
  // Rule "poisoned_checkpoint" (launcher/job/resume_fallback.h): the checkpoint the next
  // generation steps over.
  std::string step_over = {};
  std::string step_over_why = {};  // its reason (resume_fallback.h: PoisonedCheckpoint::line)
};

class RootCauseJudge {
 public:
  enum class Offer { kFirst, kEarlier, kLater, kStale };

  explicit RootCauseJudge(RetryMode mode = RetryMode::kSmart) : mode_(mode) {}
  // `fallback_limit`: --resume-fallback; `fallbacks_used`: checkpoints the job stepped over in
  // earlier containers (its ledger's marks).
  RootCauseJudge(RetryMode mode, int fallback_limit, int fallbacks_used)
      : mode_(mode), fallback_limit_(fallback_limit), fallbacks_used_(fallbacks_used) {}

  // Generation `generation` starts: no root cause yet (the earlier ones stay in history()).
  void begin(int generation);
  // A node's failure report. kFirst: the generation has failed and this is its root cause;
  // kEarlier: it happened before the current root cause (wall clock, failed_at_ns) and replaces
  // it; kLater: collateral; kStale: another generation's.
  Offer offer(const NodeFailure& f);
  const std::optional<NodeFailure>& root_cause() const { return root_cause_; }
  // The generation is over (every node stopped): its root cause joins history() and the answer
  // says whether another generation is worth it. Needs a root cause. `job_step`: the job's last
  // progress step of the generation, from every node (JobStateMachine): a root cause whose own
  // node printed no progress (only rank 0 prints it in rsl_rl and skrl: a failure on node 1)
  // is judged at the job's step, not "before any progress". A root cause with its own step keeps
  // it (the same failure reads the same on every generation).
  Verdict verdict(std::optional<std::int64_t> job_step = std::nullopt);
  // Every judged generation's root cause, oldest first.
  const std::vector<NodeFailure>& history() const { return history_; }
  // "generation N: <summary>" for the last `n` judged generations, oldest first.
  std::vector<std::string> recent(std::size_t n = 3) const;
  // Each checkpoint this judge found poisoned, oldest first: its reason (the failure file's).
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }

 private:
  Verdict judge(const NodeFailure& now) const;
  RetryMode mode_;
  int fallback_limit_ = 0;
  int fallbacks_used_ = 0;
  std::vector<std::string> fallbacks_;
  int stepped_into_ = -1;  // the generation that started from before a poisoned checkpoint
  int generation_ = 0;
  std::optional<NodeFailure> root_cause_;
  std::vector<NodeFailure> history_;
};

// RunObserver::generation_failed at most once per generation, by construction: the Supervisor
// tells its observer through this, from wherever a failure reaches it (its own, the cluster's
// stop).
class FailedOnce {
 public:
  // true the first time for `generation` (and for any later generation than the last).
  bool first(int generation) {
    if (generation <= last_) return false;
    last_ = generation;
    return true;
  }

 private:
  int last_ = -1;
};

}  // namespace tv
