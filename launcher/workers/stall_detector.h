// StallDetector: the hang verdict of `--hang-timeout auto` (docs/supervision.md, "Hangs"). Pure:
// fed events (a generation started, a step seen, a checkpoint save started or ended) with their
// times in seconds, asked for the verdict at a time; no clock, no I/O, so unit tests drive it on
// simulated time. The Supervisor owns one per node and only wires events into it.
//
// The rules:
//   start-up   from a generation's start to its first step: at most `startup` seconds (the
//              explicit --startup-timeout, else learned: max(kStartupFactor x the longest start-up
//              seen in this job, earlier containers included, kStartupFloor)).
//   warm-up    until kWarmupSteps steps of the generation are seen, each next step may take the
//              start-up deadline (the first steps compile, allocate and fill caches).
//   stall      after that, no new step for max(kStallFactor x p99 of the last kStallWindow step
//              times, floor) is a stall.
//   saves      a save whose start is reported (save_started) holds the clock until it ends
//              (at most max(2 x the start-up deadline, 3 x the longest save measured)); one seen
//              when complete (save_ended with its duration, as the checkpoint watcher reports it)
//              restarts the clock at its end and, when starts are not reported, lengthens the
//              stall deadline by kSaveMargin x the longest save measured; before the first one
//              is measured (saves_expected; the job's ledger may know one from an earlier
//              container: prior_longest_save), the stall deadline is at least 2 x the start-up one.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

namespace tv {

inline constexpr double kStallFactor = 2.0;       // x the recent p99 step time
inline constexpr std::size_t kStallWindow = 100;  // step times the p99 is taken over
inline constexpr int kWarmupSteps = 5;            // steps judged by the start-up deadline
inline constexpr double kStartupFactor = 3.0;     // x the longest start-up seen
inline constexpr double kStartupFloor = 600;      // seconds; the learned deadline's least
inline constexpr double kDefaultStallFloor = 60;  // seconds (--stall-floor)
inline constexpr double kSaveMargin = 1.5;        // x the longest save, when starts are unknown

struct StallRules {
  double floor = kDefaultStallFloor;
  std::optional<double> startup_timeout = std::nullopt;  // --startup-timeout; nullopt: learned
  // From the job's ledger (earlier containers): the longest start-up, the longest save (which
  // counts as measured).
  std::optional<double> prior_longest_startup = std::nullopt;
  std::optional<double> prior_longest_save = std::nullopt;
  bool save_starts_known = false;  // save_started is fed
  // A checkpoint dir is watched: with save starts not known, until the first save is measured
  // the stall deadline is at least 2 x the start-up deadline (a save of unknown length may run).
  bool saves_expected = false;
};

struct StallVerdict {
  bool in_startup = false;  // no first step (or warm-up step) within the start-up deadline
  double since = 0;         // when the last progress was (a step, a save's end, the start)
  double waited = 0;        // seconds from `since` to the verdict
  double deadline = 0;      // the deadline it passed
  std::string reason;       // "no new step for 12.3 s (deadline 10.0 s: 2 x p99 step 0.40 s ...)"
};

class StallDetector {
 public:
  explicit StallDetector(StallRules rules)
      : rules_(std::move(rules)), longest_save_(rules_.prior_longest_save.value_or(0)) {}

  void generation_started(double t);
  void step(double t);
  void save_started(double t);
  // `seconds`: the save's measured write time, -1 when unknown.
  void save_ended(double t, double seconds);
  std::optional<StallVerdict> verdict(double t) const;

  // The start-up deadline in force (explicit, or learned).
  double startup_deadline() const;
  // The rules in force, for the log: "no first step within 600 s (learned: ...), then ...".
  std::string describe() const;
  // The longest start-up (generation start to first step) seen by this detector.
  std::optional<double> longest_startup() const { return longest_startup_; }

 private:
  double stall_deadline() const;
  double p99() const;

  StallRules rules_;
  std::optional<double> gen_start_, last_step_, save_since_;
  std::optional<double> last_save_end_;
  int gen_steps_ = 0;
  std::deque<double> intervals_;
  double longest_save_ = 0;
  std::optional<double> longest_startup_;
};

}  // namespace tv
