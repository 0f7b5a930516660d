#include "launcher/workers/stall_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace tv {

void StallDetector::generation_started(double t) {
  gen_start_ = t;
  last_step_.reset();
  save_since_.reset();
  last_save_end_.reset();
  gen_steps_ = 0;
}

void StallDetector::step(double t) {
  if (!gen_start_) return;
  if (gen_steps_ == 0) {
    const double startup = std::max(0.0, t - *gen_start_);
    longest_startup_ = std::max(longest_startup_.value_or(0), startup);
  } else {
    // A step time never spans a save that ended since the last step: the save is excused.
    const double from = std::max(*last_step_, last_save_end_.value_or(*last_step_));
    intervals_.push_back(std::max(0.0, t - from));
    if (intervals_.size() > kStallWindow) intervals_.pop_front();
  }
  ++gen_steps_;
  last_step_ = t;
}

void StallDetector::save_started(double t) {
  if (gen_start_ && !save_since_) save_since_ = t;
}

void StallDetector::save_ended(double t, double seconds) {
  if (!gen_start_) return;
  save_since_.reset();
  last_save_end_ = t;
  if (seconds > 0) longest_save_ = std::max(longest_save_, seconds);
}

double StallDetector::startup_deadline() const {
  if (rules_.startup_timeout) return *rules_.startup_timeout;
  const double longest =
      std::max(rules_.prior_longest_startup.value_or(0), longest_startup_.value_or(0));
  return std::max(kStartupFloor, kStartupFactor * longest);
}

std::string StallDetector::describe() const {
  const double longest =
      std::max(rules_.prior_longest_startup.value_or(0), longest_startup_.value_or(0));
  const std::string origin =
      rules_.startup_timeout ? std::string("--startup-timeout")
      : longest > 0
          ? fmt::format("learned: {} x the longest start-up seen, {:.1f} s, at least {:.0f} s",
                        kStartupFactor, longest, kStartupFloor)
          : fmt::format("none seen yet: at least {:.0f} s", kStartupFloor);
  return fmt::format(
      "no first step within {:.1f} s ({}), then no new step for max({} x p99 step time, {:.1f} s)",
      startup_deadline(), origin, kStallFactor, rules_.floor);
}

double StallDetector::p99() const {
  if (intervals_.empty()) return 0;
  std::vector<double> v(intervals_.begin(), intervals_.end());
  const auto at = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end());
  return v[at];
}

double StallDetector::stall_deadline() const {
  const double d = std::max(kStallFactor * p99(), rules_.floor);
  if (rules_.save_starts_known) return d;
  if (rules_.saves_expected && longest_save_ <= 0) return std::max(d, 2 * startup_deadline());
  return d + kSaveMargin * longest_save_;
}

std::optional<StallVerdict> StallDetector::verdict(double t) const {
  if (!gen_start_) return std::nullopt;
  if (save_since_) {
    const double cap = std::max(2 * startup_deadline(), 3 * longest_save_);
    if (t - *save_since_ < cap) return std::nullopt;
    return StallVerdict{false, *save_since_, t - *save_since_, cap,
                        fmt::format("a checkpoint save under way for {:.1f} s (at most {:.1f} s)",
                                    t - *save_since_, cap)};
  }
  const double since = std::max(
      {*gen_start_, last_step_.value_or(*gen_start_), last_save_end_.value_or(*gen_start_)});
  const double waited = t - since;
  if (gen_steps_ <= kWarmupSteps) {
    const double d = startup_deadline();
    if (waited < d) return std::nullopt;
    const std::string what = gen_steps_ == 0
                                 ? std::string("no first step")
                                 : fmt::format("no step after step {} of the warm-up", gen_steps_);
    return StallVerdict{
        true, since, waited, d,
        fmt::format("start-up: {} for {:.1f} s (start-up deadline {:.1f} s)", what, waited, d)};
  }
  const double d = stall_deadline();
  if (waited < d) return std::nullopt;
  return StallVerdict{
      false, since, waited, d,
      fmt::format("stall: no new step for {:.1f} s (deadline {:.1f} s: max({} x p99 step time "
                  "{:.2f} s, floor {:.1f} s){})",
                  waited, d, kStallFactor, p99(), rules_.floor,
                  rules_.save_starts_known || longest_save_ <= 0
                      ? std::string()
                      : fmt::format(" + {} x longest save {:.1f} s", kSaveMargin, longest_save_))};
}

}  // namespace tv
