// The Supervisor's hang verdicts (docs/supervision.md, "Hangs"): --hang-timeout auto's events
// wired into the StallDetector (stall_detector.h, which decides), and what a verdict of either
// kind (silence, or the progress rules) does: the reason kept for the failure report, the goodput
// told, every rank's stacks collected, then the generation failed as hung.
#include <spdlog/spdlog.h>

#include "launcher/supervision/supervisor.h"

namespace tv {

double Supervisor::seconds_now() const {
  return std::chrono::duration<double>(time_.now().time_since_epoch()).count();
}

void Supervisor::progress_seen(std::int64_t step) {
  if (!stall_ || (top_step_ && step <= *top_step_)) return;
  top_step_ = step;
  stall_->step(seconds_now());
}

void Supervisor::checkpoint_save_started() {
  if (stall_) stall_->save_started(seconds_now());
}

void Supervisor::checkpoint_saved(double write_seconds) {
  if (stall_) stall_->save_ended(seconds_now(), write_seconds);
}

// Every heartbeat file changed since the last check is a step; then the node's verdict. The stall
// is the node's, not one rank's: the report names the first rank still running.
void Supervisor::check_stall() {
  const double now = seconds_now();
  for (auto& w : workers_)
    if (w && !w->wait_status && w->poll_heartbeat()) stall_->step(now);
  const auto v = stall_->verdict(now);
  if (!v) return;
  for (auto& w : workers_) {
    if (!w || w->wait_status) continue;
    spdlog::error("generation {}: {}: treating it as hung", group_.generation(), v->reason);
    return declare_hang(w->id().local_rank, v->reason, v->waited, v->in_startup);
  }
}

void Supervisor::declare_hang(int local_rank, const std::string& reason, double waited,
                              bool in_startup) {
  const int generation = group_.generation();
  if (!reason.empty()) hang_reason_[generation] = reason;
  if (cfg_.observer && in_startup) cfg_.observer->generation_startup_expired(generation);
  if (cfg_.observer && !in_startup) cfg_.observer->generation_hung(generation, waited);
  auto fail = [this, local_rank, generation] {
    if (group_.generation() == generation && group_.state() == GroupState::kHealthy &&
        group_.is_running(local_rank))
      group_.on_worker_hang(local_rank);
  };
  // Every rank's stacks first, before any signal that ends a worker (docs/supervision.md).
  if (cfg_.stacks) return stacks_then("on hang", fail);
  fail();
}

}  // namespace tv
