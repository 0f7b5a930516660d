#include "launcher/node/stop_save.h"

#include <time.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include "common/exit_codes.h"
#include "common/parse_number.h"

namespace tv {

namespace {
double seconds(LoopClock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

LoopClock::duration StopSave::window(LoopClock::duration grace) {
  const LoopClock::duration reserve = std::min<LoopClock::duration>(
      std::max<LoopClock::duration>(grace / 5, std::chrono::seconds(1)), grace / 2);
  return grace - reserve;
}

void StopSave::begin(int signal, std::int64_t wall_ns, LoopClock::time_point now,
                     LoopClock::duration grace, std::optional<SavedCheckpoint> newest) {
  waiting_ = true;
  stop_wall_ns_ = wall_ns;
  started_ = now;
  outcome_ = {};
  outcome_.signal = signal;
  outcome_.window_seconds = seconds(window(grace));
  if (newest && newest->step >= 0) outcome_.saved_step = newest->step;
  newest_ = std::move(newest);
}

bool StopSave::offer(const SavedCheckpoint& c, LoopClock::time_point now) {
  if (!waiting_ || c.mtime_ns < stop_wall_ns_) return false;
  // The one the watcher knew at the stop, reported again as it was: not a new save.
  if (newest_ && newest_->path == c.path && newest_->mtime_ns == c.mtime_ns) return false;
  waiting_ = false;
  outcome_.completed = true;
  outcome_.waited_seconds = seconds(now - started_);
  outcome_.path = c.path;
  outcome_.saved_step = c.step >= 0 ? std::optional<std::int64_t>(c.step) : std::nullopt;
  settle_lost();
  return true;
}

void StopSave::expire(LoopClock::time_point now) {
  if (!waiting_) return;
  waiting_ = false;
  outcome_.waited_seconds = seconds(now - started_);
  settle_lost();
}

void StopSave::set_last_step(std::optional<std::int64_t> step) {
  outcome_.step_at_end = step;
  settle_lost();
}

void StopSave::settle_lost() {
  if (outcome_.step_at_end && outcome_.saved_step)
    outcome_.lost_steps = std::max<std::int64_t>(*outcome_.step_at_end - *outcome_.saved_step, 0);
  else
    outcome_.lost_steps.reset();
}

namespace {
int signal_of(std::string name) {
  if (name.starts_with("SIG")) name = name.substr(3);
  for (int s = 1; s < NSIG; ++s)
    if (const char* a = sigabbrev_np(s); a && name == a) return s;
  if (name.starts_with("RTMIN+"))
    if (auto n = parse_integer<int>(name.substr(6), 0, SIGRTMAX - SIGRTMIN)) return SIGRTMIN + *n;
  if (auto n = parse_integer<int>(name, 1, SIGRTMAX)) return *n;
  return 0;
}
}  // namespace

Result<int> save_signal_number(const std::string& text) {
  const int s = signal_of(text);
  const auto bad = [&](const std::string& why) {
    return Error{ErrorKind::kConfig, "--save-signal \"" + text + "\": " + why};
  };
  if (s == 0) return bad("expected a signal name (USR1, SIGUSR2, RTMIN+2) or number");
  if (s == SIGTERM || s == SIGINT || s == SIGHUP)
    return bad("a stop signal; expected the signal the workers save on (USR1, USR2 ...)");
  if (s == SIGKILL || s == SIGSTOP || s == SIGCHLD)
    return bad("no worker can save on it; expected one it handles (USR1, USR2 ...)");
  return s;
}

std::int64_t coarse_wall_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace tv
