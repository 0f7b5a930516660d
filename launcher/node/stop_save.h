// A confirmed save before a stop (--save-signal SIG, docs/checkpoints.md "A save confirmed before
// a stop"): on a stop signal the Supervisor sends SIG to the workers and holds their SIGTERM until
// the checkpoint watcher reports a complete checkpoint newer than the stop, or until the save
// window is over; then it stops them as without it, SIGKILL still at the stop + the grace period.
// Pure: times come in (the loop's, and the wall clock's for the checkpoints' mtimes).
//
//   newer than the stop: its completion time (Checkpoint::mtime_ns: newest file, marker, rename)
//                        is at or after the stop on the coarse wall clock, the clock the kernel
//                        stamps files with, so a file written after the stop is never older.
//   save window:         the grace period less what the workers get after their SIGTERM:
//                        a fifth of it, at least 1 s, at most half of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/loop_time.h"
#include "common/result.h"

namespace tv {

// A complete checkpoint as the watcher reported it.
struct SavedCheckpoint {
  std::string path;
  std::int64_t step = -1;     // -1: not known
  std::int64_t mtime_ns = 0;  // when it became complete, wall clock
};

// How the save went, for the log, the summary and the job's ledger.
struct StopSaveOutcome {
  int signal = 0;
  bool completed = false;
  double waited_seconds = 0;                // from the stop to the save (or the window's end)
  double window_seconds = 0;                // what the grace period left for it
  std::string path;                         // the saved checkpoint ("" when none)
  std::optional<std::int64_t> saved_step;   // its step (the newest before the stop, if none)
  std::optional<std::int64_t> step_at_end;  // the workers' last progress step
  std::optional<std::int64_t> lost_steps;   // step_at_end - saved_step, when both are known
};

class StopSave {
 public:
  // The part of `grace` the save may take.
  static LoopClock::duration window(LoopClock::duration grace);

  // The stop: `wall_ns` on the coarse wall clock, `now` the loop's; `newest` the newest complete
  // checkpoint the watcher had reported before it (its step stands when no save comes).
  void begin(int signal, std::int64_t wall_ns, LoopClock::time_point now, LoopClock::duration grace,
             std::optional<SavedCheckpoint> newest);
  bool waiting() const { return waiting_; }
  // A checkpoint the watcher reported; true when it is the save (the wait is over).
  bool offer(const SavedCheckpoint& c, LoopClock::time_point now);
  // The window is over (or the workers are gone) without a save.
  void expire(LoopClock::time_point now);
  // The workers' last progress step, for the steps lost.
  void set_last_step(std::optional<std::int64_t> step);
  const StopSaveOutcome& outcome() const { return outcome_; }

 private:
  void settle_lost();
  bool waiting_ = false;
  std::int64_t stop_wall_ns_ = 0;
  LoopClock::time_point started_{};
  std::optional<SavedCheckpoint> newest_;
  StopSaveOutcome outcome_;
};

// --save-signal's value: a name (USR1, SIGUSR1, RTMIN+2) or a number; the stop signals (TERM,
// INT, HUP), those no process can handle (KILL, STOP) and CHLD are refused (78 naming
// --save-signal).
Result<int> save_signal_number(const std::string& text);

// CLOCK_REALTIME_COARSE in ns: the clock file timestamps come from.
std::int64_t coarse_wall_ns();

}  // namespace tv
