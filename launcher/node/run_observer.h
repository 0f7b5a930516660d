// RunObserver: what the supervisor tells observability about a run. The supervisor holds a
// pointer to one (null: nothing observes) and calls it on its event loop; implementations never
// block. The one implementation is Observability (launcher/run/observability.h).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/node/gpu_health_watch.h"
#include "launcher/node/stop_save.h"

namespace tv {

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void generation_started(int generation) = 0;
  // A generation failed (here or on another node); called at most once per generation.
  virtual void generation_failed(int generation) = 0;
  // This node's hang verdict for `generation` (a rank silent, or no new step, for
  // `silent_seconds`), before its generation_failed.
  virtual void generation_hung(int generation, double silent_seconds) {
    (void)generation;
    (void)silent_seconds;
  }
  // This node's start-up verdict for `generation` (--hang-timeout auto: no first step within the
  // start-up deadline), before its generation_failed.
  virtual void generation_startup_expired(int generation) { (void)generation; }
  // NodeRun decided how this node ends (node_run.h: the state `ending`): its exit code.
  virtual void ending(int exit_code) = 0;
  // The RootCauseJudge's decision after a failed generation (root_cause_judge.h: Verdict::rule):
  // the rule that let the next generation start, or the rule that gave up.
  virtual void retry_judged(std::string_view rule) { (void)rule; }
  virtual void worker_started(int local_rank) = 0;
  virtual void worker_exited(int local_rank, int exit_code) = 0;
  // A tap for one worker's stdout or stderr bytes (as read, before line splitting; an empty view
  // means end of stream); an empty function when the output is not observed.
  virtual std::function<void(std::string_view)> output_tap(int local_rank, bool is_stderr) = 0;
  // An event of the GPU health watch (a condition set or cleared, an Xid, the watch's state).
  virtual void gpu_health(const GpuHealthEvent&) {}
  // --save-signal: how the save before a stop went (once, when the wait is over).
  virtual void stop_save(const StopSaveOutcome&) {}
  // A failed generation's root cause for the job's ledger (`trainvisor report`): this node's, with
  // the paths of the evidence files its ranks left (--log-dir), or another node's line alone.
  virtual void failure_evidence(int generation, std::string_view summary,
                                const std::vector<std::string>& paths) {
    (void)generation;
    (void)summary;
    (void)paths;
  }
  // The failure file (--failure-file) was written at `path`, at the end of the run.
  virtual void root_cause_file(const std::string& path) { (void)path; }
};

}  // namespace tv
