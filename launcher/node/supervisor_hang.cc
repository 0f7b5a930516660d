// The Supervisor's side of the hang rules (docs/supervision.md, "Hangs"): HangCheck
// (hang_check.h) decides; here its events are fed from the loop (a progress step, a save the
// watcher saw), its timer looks at the running workers, and a verdict is carried out: the
// goodput told, every rank's stacks collected, then the generation failed as hung.
#include <spdlog/spdlog.h>

#include "launcher/node/supervisor.h"

namespace tv {

double Supervisor::seconds_now() const {
  return std::chrono::duration<double>(time_.now().time_since_epoch()).count();
}

void Supervisor::progress_seen(std::int64_t step) { hangs_.progress_seen(seconds_now(), step); }

void Supervisor::checkpoint_save_started() { hangs_.save_started(seconds_now()); }

void Supervisor::checkpoint_saved(double write_seconds) {
  hangs_.save_ended(seconds_now(), write_seconds);
}

void Supervisor::schedule_hang_check() {
  hang_timer_.expires_after(hangs_.tick());
  hang_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    check_hangs();
    schedule_hang_check();
  });
}

// Only a healthy group is judged, and never while its stacks are being collected.
void Supervisor::check_hangs() {
  if (workers_.group().state() != GroupState::kHealthy || stacks_.busy()) return;
  // The heartbeats as last read (HeartbeatReads: off the loop), then the next read.
  auto looks = workers_.roster().running(true);
  heartbeats_.read(workers_.roster().unreaped());
  if (auto v = hangs_.check(workers_.group().generation(), seconds_now(), looks)) declare_hang(*v);
}

void Supervisor::declare_hang(const HangVerdict& v) {
  const int generation = workers_.group().generation();
  spdlog::error("{}", v.log);
  if (cfg_.observer && v.in_startup) cfg_.observer->generation_startup_expired(generation);
  if (cfg_.observer && !v.in_startup) cfg_.observer->generation_hung(generation, v.waited);
  auto fail = [this, local_rank = v.local_rank, generation] {
    if (workers_.group().generation() == generation &&
        workers_.group().state() == GroupState::kHealthy && workers_.group().is_running(local_rank))
      workers_.group().on_worker_hang(local_rank);
  };
  // Every rank's stacks first, before any signal that ends a worker (docs/supervision.md).
  if (cfg_.stacks) return stacks_then("on hang", fail);
  fail();
}

}  // namespace tv
