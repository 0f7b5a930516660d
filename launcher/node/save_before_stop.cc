#include "launcher/node/save_before_stop.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <string>

namespace tv {

SaveBeforeStop::SaveBeforeStop(boost::asio::io_context& io, LoopTime& time, int save_signal,
                               LoopClock::duration grace, std::function<std::int64_t()> wall_ns,
                               Hooks hooks)
    : timer_(io, time),
      time_(time),
      save_signal_(save_signal),
      grace_(grace),
      wall_ns_(std::move(wall_ns)),
      hooks_(std::move(hooks)) {}

void SaveBeforeStop::checkpoint_complete(const SavedCheckpoint& c) {
  newest_ = c;
  if (save_.waiting() && save_.offer(c, time_.now())) end_wait();
}

void SaveBeforeStop::begin(int sig, int stop_with) {
  const auto now = time_.now();
  kill_at_ = now + grace_;
  stop_with_ = stop_with;
  save_.begin(save_signal_, wall_ns_ ? wall_ns_() : coarse_wall_ns(), now, grace_, newest_);
  const auto window = StopSave::window(grace_);
  spdlog::warn(
      "--save-signal: SIG{} to the workers; their SIG{} waits up to {} ms for a complete "
      "checkpoint newer than the stop",
      sigabbrev_np(save_signal_), sigabbrev_np(sig),
      std::chrono::duration_cast<std::chrono::milliseconds>(window).count());
  hooks_.forward(save_signal_);
  timer_.expires_at(now + window);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !save_.waiting()) return;
    save_.expire(time_.now());
    end_wait();
  });
}

void SaveBeforeStop::run_ended() {
  if (save_.waiting()) tell();
}

void SaveBeforeStop::end_wait() {
  tell();
  hooks_.stop(stop_with_);
}

// Once: the outcome to the log and the observer (the summary, the ledger).
void SaveBeforeStop::tell() {
  timer_.cancel();
  save_.expire(time_.now());  // nothing when the save was seen
  save_.set_last_step(hooks_.last_step ? hooks_.last_step() : std::nullopt);
  const StopSaveOutcome& o = save_.outcome();
  if (o.completed)
    spdlog::info("--save-signal: the save completed {:.2f} s after the stop: {} (step {})",
                 o.waited_seconds, o.path, o.saved_step ? std::to_string(*o.saved_step) : "?");
  else
    spdlog::warn(
        "--save-signal: no complete checkpoint newer than the stop within {:.2f} s; stopping the "
        "workers without it",
        o.waited_seconds);
  if (hooks_.told) hooks_.told(o);
}

}  // namespace tv
