// SaveBeforeStop: --save-signal on the event loop (docs/checkpoints.md, "A save confirmed before a
// stop"). On a stop it sends the save signal to the workers, waits on its timer for the complete
// checkpoint newer than the stop that the watcher reports, then stops the workers with the stop's
// signal, saved or not; the SIGKILL stays at the stop + the grace period (kill_at). Once, it tells
// the log and the observer how the save went. The rules are StopSave's (stop_save.h, pure); the
// workers are reached through the hooks (the Supervisor's WorkerGroup).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "common/loop_time.h"
#include "launcher/node/stop_save.h"

namespace tv {

class SaveBeforeStop {
 public:
  struct Hooks {
    std::function<void(int sig)> forward;  // the save signal, to every running worker
    std::function<void(int sig)> stop;     // the stop after the wait: sig, then SIGKILL
    std::function<std::optional<std::int64_t>()> last_step;  // the workers' last progress step
    std::function<void(const StopSaveOutcome&)> told;  // the outcome (the observer); may be null
  };
  // `save_signal`: --save-signal's (0: off); `wall_ns`: the clock compared with checkpoints'
  // mtimes (coarse_wall_ns when null).
  SaveBeforeStop(boost::asio::io_context& io, LoopTime& time, int save_signal,
                 LoopClock::duration grace, std::function<std::int64_t()> wall_ns, Hooks hooks);

  // A complete checkpoint the watcher reported: the newest known, and the save being waited for.
  void checkpoint_complete(const SavedCheckpoint& c);
  // The stop signal `sig` arrived: the save signal now, stop_with once saved or the window ends.
  void begin(int sig, int stop_with);
  // The run ends while the wait is on (the workers ended before a save was seen): it is told.
  void run_ended();
  // When the workers get SIGKILL: the stop + the grace period, once a save's stop has begun.
  std::optional<LoopClock::time_point> kill_at() const { return kill_at_; }

 private:
  void end_wait();
  void tell();

  LoopTimer timer_;  // the save window's end
  LoopTime& time_;
  int save_signal_;
  LoopClock::duration grace_;
  std::function<std::int64_t()> wall_ns_;
  Hooks hooks_;
  StopSave save_;
  std::optional<SavedCheckpoint> newest_;  // the watcher's newest report
  std::optional<LoopClock::time_point> kill_at_;
  int stop_with_ = 0;
};

}  // namespace tv
