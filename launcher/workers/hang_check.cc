#include "launcher/workers/hang_check.h"

#include <fmt/format.h>

#include <algorithm>

namespace tv {

HangCheck::HangCheck(std::chrono::milliseconds silence, std::optional<StallRules> stall)
    : silence_(silence) {
  if (!stall) return;
  stall_.emplace(*stall);
  stall_floor_ = std::chrono::milliseconds(static_cast<long>(stall->floor * 1000));
}

std::chrono::milliseconds HangCheck::tick() const {
  // The progress rules' floor is the shortest stall they can judge.
  const auto period = stall_ ? stall_floor_ : silence_;
  return std::clamp(period / 4, std::chrono::milliseconds(50), std::chrono::milliseconds(1000));
}

std::optional<std::string> HangCheck::generation_started(double now) {
  if (!stall_) return std::nullopt;
  stall_->generation_started(now);
  top_step_.reset();
  return stall_->describe();
}

void HangCheck::progress_seen(double now, std::int64_t step) {
  if (!stall_ || (top_step_ && step <= *top_step_)) return;
  top_step_ = step;
  stall_->step(now);
}

void HangCheck::save_started(double now) {
  if (stall_) stall_->save_started(now);
}

void HangCheck::save_ended(double now, double seconds) {
  if (stall_) stall_->save_ended(now, seconds);
}

std::optional<HangVerdict> HangCheck::check(int generation, double now,
                                            const std::vector<WorkerLook>& running) {
  if (stall_) return check_stall(generation, now, running);
  if (silence_.count() > 0) return check_silence(running);
  return std::nullopt;
}

// --hang-timeout S: the first running worker silent for S is hung.
std::optional<HangVerdict> HangCheck::check_silence(const std::vector<WorkerLook>& running) const {
  for (const auto& w : running) {
    if (w.silent < silence_) continue;
    return HangVerdict{w.local_rank, "", w.silent.count(), false,
                       fmt::format("rank {}: no output and no heartbeat for {} ms: treating it "
                                   "as hung",
                                   w.rank, silence_.count())};
  }
  return std::nullopt;
}

// Every heartbeat file changed since the last look is a step; then the node's verdict. The stall
// is the node's, not one rank's: the report names the first rank still running.
std::optional<HangVerdict> HangCheck::check_stall(int generation, double now,
                                                  const std::vector<WorkerLook>& running) {
  for (const auto& w : running)
    if (w.heartbeat_changed) stall_->step(now);
  const auto v = stall_->verdict(now);
  if (!v || running.empty()) return std::nullopt;
  reasons_[generation] = v->reason;
  return HangVerdict{running.front().local_rank, v->reason, v->waited, v->in_startup,
                     fmt::format("generation {}: {}: treating it as hung", generation, v->reason)};
}

std::optional<std::string> HangCheck::reason_of(int generation) const {
  auto it = reasons_.find(generation);
  if (it == reasons_.end()) return std::nullopt;
  return it->second;
}

double HangCheck::node_silence(const std::vector<WorkerLook>& running) {
  std::optional<std::chrono::duration<double>> least;
  for (const auto& w : running) least = std::min(least.value_or(w.silent), w.silent);
  return least ? least->count() : 0.0;
}

}  // namespace tv
