// HangCheck: the hang rules of one node's run (docs/supervision.md, "Hangs"), pure. Either
// --hang-timeout S (a worker silent, no output and no heartbeat, for S is hung) or
// --hang-timeout auto (the progress rules: stall_detector.h, fed the steps the workers' output and
// heartbeats give and the saves the checkpoint watcher sees). The Supervisor owns one, looks at
// its running workers every tick() on its loop's timer and carries out the verdict; times are
// seconds on the loop's clock, so unit tests drive it on simulated time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launcher/workers/stall_detector.h"

namespace tv {

// One running worker, as a check sees it.
struct WorkerLook {
  int local_rank = 0;
  int rank = 0;                            // global, for the log
  std::chrono::duration<double> silent{};  // since its last output or heartbeat
  bool heartbeat_changed = false;          // its heartbeat file changed since the last look
};

struct HangVerdict {
  int local_rank = 0;       // the rank the failure names
  std::string reason;       // the progress rules' ("no new step for ..."); empty for silence
  double waited = 0;        // seconds since the last sign of progress
  bool in_startup = false;  // no first step within the start-up deadline
  std::string log;          // the line that says it ("rank 3: no output ... treating it as hung")
};

class HangCheck {
 public:
  // `silence`: --hang-timeout S (0: off); `stall`: --hang-timeout auto's rules.
  HangCheck(std::chrono::milliseconds silence, std::optional<StallRules> stall);

  bool on() const { return silence_.count() > 0 || stall_.has_value(); }
  // How often to look: a quarter of the shortest deadline, within 50 ms .. 1 s.
  std::chrono::milliseconds tick() const;

  // A generation's workers start at `now`; the progress rules in force, for the log (nullopt
  // with --hang-timeout S).
  std::optional<std::string> generation_started(double now);
  // A progress step from any worker's output: a step only when above the generation's highest.
  void progress_seen(double now, std::int64_t step);
  void save_started(double now);
  void save_ended(double now, double seconds);

  // The verdict on `running` (this generation's running workers, by local rank) at `now`, or
  // none; a verdict's reason is kept for `generation`'s failure report.
  std::optional<HangVerdict> check(int generation, double now,
                                   const std::vector<WorkerLook>& running);
  // What generation g's verdict said (the failure report's hang reason), if it said anything.
  std::optional<std::string> reason_of(int generation) const;

  // How long the node's running workers have all been silent: the most recently active one's
  // silence; 0 with none running.
  static double node_silence(const std::vector<WorkerLook>& running);

 private:
  std::optional<HangVerdict> check_silence(const std::vector<WorkerLook>& running) const;
  std::optional<HangVerdict> check_stall(int generation, double now,
                                         const std::vector<WorkerLook>& running);

  std::chrono::milliseconds silence_;
  std::optional<StallDetector> stall_;
  std::chrono::milliseconds stall_floor_{0};  // --stall-floor: the shortest stall judged
  std::optional<std::int64_t> top_step_;      // the highest progress step of this generation
  std::map<int, std::string> reasons_;        // by generation: what its verdict said
};

}  // namespace tv
