// The Supervisor's part of a confirmed save before a stop (--save-signal): the rules are
// launcher/supervision/stop_save.h's; here the signal, the wait and the stop after it.
#include <spdlog/spdlog.h>

#include <cstring>

#include "launcher/supervision/supervisor.h"

namespace tv {

void Supervisor::checkpoint_complete(const SavedCheckpoint& c) {
  newest_checkpoint_ = c;
  if (stop_save_.waiting() && stop_save_.offer(c, time_.now())) end_save();
}

void Supervisor::save_then_stop(int sig, int stop_with) {
  const auto now = time_.now();
  kill_at_ = now + cfg_.grace;
  stop_after_save_with_ = stop_with;
  const std::int64_t wall = cfg_.wall_clock_ns ? cfg_.wall_clock_ns() : coarse_wall_ns();
  stop_save_.begin(cfg_.save_signal, wall, now, cfg_.grace, newest_checkpoint_);
  const auto window = StopSave::window(cfg_.grace);
  spdlog::warn(
      "--save-signal: SIG{} to the workers; their SIG{} waits up to {} ms for a complete "
      "checkpoint newer than the stop",
      sigabbrev_np(cfg_.save_signal), sigabbrev_np(sig),
      std::chrono::duration_cast<std::chrono::milliseconds>(window).count());
  group_.forward(cfg_.save_signal);
  save_timer_.expires_at(now + window);
  save_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !stop_save_.waiting()) return;
    stop_save_.expire(time_.now());
    end_save();
  });
}

void Supervisor::end_save() {
  report_save();
  group_.stop(stop_after_save_with_);
}

// Once: the outcome to the log and the observer (the summary, the ledger).
void Supervisor::report_save() {
  save_timer_.cancel();
  stop_save_.expire(time_.now());  // nothing when the save was seen
  stop_save_.set_last_step(cfg_.progress_step ? cfg_.progress_step() : std::nullopt);
  const StopSaveOutcome& o = stop_save_.outcome();
  if (o.completed)
    spdlog::info("--save-signal: the save completed {:.2f} s after the stop: {} (step {})",
                 o.waited_seconds, o.path, o.saved_step ? std::to_string(*o.saved_step) : "?");
  else
    spdlog::warn(
        "--save-signal: no complete checkpoint newer than the stop within {:.2f} s; stopping the "
        "workers without it",
        o.waited_seconds);
  if (cfg_.observer) cfg_.observer->stop_save(o);
}

}  // namespace tv
