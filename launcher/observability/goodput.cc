#include "launcher/observability/goodput.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tv {
namespace {

std::optional<double> mean(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

const char* phase_name(Phase p) {
  static constexpr std::array<const char*, kPhaseCount> names = {
      "init", "preflight", "rendezvous", "running", "restarting", "draining"};
  return names[static_cast<std::size_t>(p)];
}

const char* badput_name(Badput b) {
  static constexpr std::array<const char*, kBadputCount> names = {
      "init",          "preflight", "rendezvous",       "startup", "restart",
      "lost_progress", "hang",      "checkpoint_stall", "draining"};
  return names[static_cast<std::size_t>(b)];
}

GoodputAccountant::GoodputAccountant(const Clock& clock, GoodputConfig config,
                                     std::optional<double> started_at)
    : clock_(clock), config_(config), t0_(started_at.value_or(clock.now())), phase_since_(t0_) {}

void GoodputAccountant::enter(Phase p) {
  const double now = clock_.now();
  phase_seconds_[static_cast<std::size_t>(phase_)] += now - phase_since_;
  phase_since_ = now;
  if (phase_ == Phase::kRunning && p != Phase::kRunning && !gens_.empty() && !gens_.back().stop)
    gens_.back().stop = now;
  phase_ = p;
}

void GoodputAccountant::resume_selected(std::optional<std::int64_t> step) {
  pending_resume_ = step ? Resume{true, *step} : Resume{false, -1};
  if (gens_.empty()) first_resume_ = pending_resume_;
}

void GoodputAccountant::generation_started(int generation) {
  const double now = clock_.now();
  if (!gens_.empty()) {
    if (!gens_.back().stop) gens_.back().stop = now;  // a new start without a failure seen first
    const Generation prev = gens_.back();
    account_restart(prev, prev.stop.value_or(now));
  }
  pending_resume_.reset();
  gap_from_.reset();
  enter(Phase::kRunning);
  Generation g;
  g.number = generation;
  g.start = now;
  gens_.push_back(g);
}

void GoodputAccountant::generation_failed(int generation) {
  if (gens_.empty() || gens_.back().number != generation || gens_.back().failed) return;
  gens_.back().failed = true;
  ++failures_;
  if (phase_ == Phase::kRunning) enter(Phase::kRestarting);
}

void GoodputAccountant::generation_hung(int generation, double silent_seconds) {
  if (gens_.empty() || phase_ != Phase::kRunning) return;
  Generation& g = gens_.back();
  if (g.number != generation || g.failed || g.hung_at) return;
  const double now = clock_.now();
  g.hung_at = now;
  // Without a step of its own: startup already holds this generation when the job prints steps.
  if (g.last_step)
    g.hang = std::max(0.0, now - g.last_step_at);
  else if (!progress_seen())
    g.hang = std::clamp(silent_seconds, 0.0, now - g.start);
  hang_seconds_ += g.hang;
  enter(Phase::kRestarting);  // stacks and stopping: the time every failure takes to stop
}

void GoodputAccountant::generation_startup_expired(int generation) {
  if (gens_.empty() || phase_ != Phase::kRunning) return;
  Generation& g = gens_.back();
  if (g.number != generation || g.failed || g.hung_at) return;
  // A warm-up step came: from the last step on, the wait was a hang's.
  if (g.first_step) return generation_hung(generation, clock_.now() - g.last_step_at);
  g.hung_at = clock_.now();
  g.startup_expired = true;
  enter(Phase::kRestarting);
}

void GoodputAccountant::ending(int exit_code) {
  exit_code_ = exit_code;
  if (phase_ != Phase::kDraining) enter(Phase::kDraining);
}

void GoodputAccountant::worker_started() { ++workers_up_; }

void GoodputAccountant::worker_exited(int exit_code) {
  workers_up_ = std::max(0, workers_up_ - 1);
  ++exits_[exit_code];
}

// The work of `prev` after the point the next generation resumes from is done again: lost.
void GoodputAccountant::account_restart(const Generation& prev, double failed_at) {
  const Resume resume = pending_resume_.value_or(Resume{});
  const bool known_resume =
      pending_resume_ && (resume.step >= 0 || (!resume.found && config_.checkpoints_watched));
  if (prev.last_step && known_resume) {
    const std::int64_t from = resume.found ? resume.step : 0;
    const std::int64_t steps = std::max<std::int64_t>(0, *prev.last_step - from);
    add_lost(static_cast<double>(steps) * rate(prev).value_or(0) + (failed_at - tail_from(prev)),
             steps);
  } else if (prev.last_step) {
    deferred_ = gens_.size() - 1;  // the next generation's first step tells where it resumed
  } else if (progress_seen()) {
    // No step in a job that prints them: all of it is already startup.
  } else if (config_.checkpoints_watched) {
    const double from =
        (resume.found && prev.checkpoint_state_at) ? *prev.checkpoint_state_at : prev.start;
    add_lost(failed_at - from - prev.hang, std::nullopt);
  } else {
    lost_known_ = false;
  }
}

void GoodputAccountant::account_deferred(std::int64_t resumed_step) {
  const Generation& prev = gens_[*deferred_];
  deferred_.reset();
  const std::int64_t steps = std::max<std::int64_t>(0, *prev.last_step - resumed_step);
  const double failed_at = prev.stop.value_or(prev.last_step_at);
  add_lost(static_cast<double>(steps) * rate(prev).value_or(0) + (failed_at - tail_from(prev)),
           steps);
}

// Where the lost time after a failed generation's last step begins: at that step, or at the hang
// verdict when it hung (the silence between is hang).
double GoodputAccountant::tail_from(const Generation& g) const {
  return g.hung_at ? std::max(*g.hung_at, g.last_step_at) : g.last_step_at;
}

void GoodputAccountant::add_lost(double seconds, std::optional<std::int64_t> steps) {
  lost_seconds_ += std::max(0.0, seconds);
  if (steps) lost_steps_ += *steps;
}

void GoodputAccountant::progress(const Progress& p) {
  if (gens_.empty() || p.step < 0) return;
  const double now = clock_.now();
  Generation& g = gens_.back();
  if (p.total) total_steps_ = p.total;
  if (p.tflops) framework_tflops_ = p.tflops;
  if (!g.first_step) {
    g.first_step = p.step;
    g.first_step_at = now;
    if (deferred_) account_deferred(p.step);
  }
  if (g.last_step && p.step <= *g.last_step) return;  // the same step from another rank
  if (gap_from_ && g.last_step) {
    const double gap = now - *gap_from_ - rate(g).value_or(0);
    if (gap > 0) gap_samples_.push_back(gap);
    gap_from_.reset();
  }
  g.last_step = p.step;
  g.last_step_at = now;
}

void GoodputAccountant::checkpoint_seen(const CheckpointSeen& c) {
  const double now = clock_.now();
  ++checkpoints_;
  last_checkpoint_at_ = now;
  last_bytes_ = c.bytes;
  if (c.write_seconds >= 0) {
    last_write_ = c.write_seconds;
    cost_samples_.push_back(c.write_seconds);
  }
  if (c.since_previous > 0) interval_samples_.push_back(c.since_previous);
  if (gens_.empty() || phase_ != Phase::kRunning) return;
  Generation& g = gens_.back();
  g.checkpoint_state_at = now - std::max(0.0, c.write_seconds);
  if (c.write_seconds > 0)
    stall_seconds_ += c.write_seconds;
  else if (g.last_step)
    gap_from_ = g.last_step_at;
}

std::optional<double> GoodputAccountant::rate(const Generation& g) const {
  if (g.first_step && g.last_step && *g.last_step > *g.first_step)
    return (g.last_step_at - g.first_step_at) / static_cast<double>(*g.last_step - *g.first_step);
  return job_rate();
}

std::optional<double> GoodputAccountant::job_rate() const {
  double seconds = 0;
  std::int64_t steps = 0;
  for (const auto& g : gens_)
    if (g.first_step && g.last_step && *g.last_step > *g.first_step) {
      seconds += g.last_step_at - g.first_step_at;
      steps += *g.last_step - *g.first_step;
    }
  if (steps == 0) return std::nullopt;
  return seconds / static_cast<double>(steps);
}

bool GoodputAccountant::progress_seen() const {
  return std::any_of(gens_.begin(), gens_.end(),
                     [](const Generation& g) { return g.first_step.has_value(); });
}

// From each generation's start to its first step; only once the job prints steps at all, or for
// a generation whose start-up deadline passed.
double GoodputAccountant::startup_seconds() const {
  const bool seen = progress_seen();
  const double now = clock_.now();
  double s = 0;
  for (const auto& g : gens_)
    if (seen || g.startup_expired)
      s += (g.first_step ? g.first_step_at : g.stop.value_or(now)) - g.start;
  return s;
}

std::optional<double> GoodputAccountant::longest_startup() const {
  std::optional<double> longest;
  for (const auto& g : gens_)
    if (g.first_step) longest = std::max(longest.value_or(0), g.first_step_at - g.start);
  return longest;
}

GoodputSnapshot GoodputAccountant::snapshot() const {
  const double now = clock_.now();
  GoodputSnapshot s;
  s.wall = now - t0_;
  s.phase = phase_;
  s.phase_seconds = phase_seconds_;
  s.phase_seconds[static_cast<std::size_t>(phase_)] += now - phase_since_;
  auto phase = [&](Phase p) { return s.phase_seconds[static_cast<std::size_t>(p)]; };
  auto bad = [&](Badput b) -> double& { return s.badput[static_cast<std::size_t>(b)]; };
  bad(Badput::kInit) = phase(Phase::kInit);
  bad(Badput::kPreflight) = phase(Phase::kPreflight);
  bad(Badput::kRendezvous) = phase(Phase::kRendezvous);
  bad(Badput::kRestart) = phase(Phase::kRestarting);
  bad(Badput::kDraining) = phase(Phase::kDraining);
  // Running splits into startup, hang, stall, lost and productive; none may take more than is
  // left.
  double left = phase(Phase::kRunning);
  for (auto [cause, seconds] :
       {std::pair{Badput::kStartup, startup_seconds()}, std::pair{Badput::kHang, hang_seconds_},
        std::pair{Badput::kCheckpointStall,
                  stall_seconds_ + std::accumulate(gap_samples_.begin(), gap_samples_.end(), 0.0)},
        std::pair{Badput::kLostProgress, lost_seconds_}}) {
    bad(cause) = std::clamp(seconds, 0.0, left);
    left -= bad(cause);
  }
  s.productive = left;
  s.goodput = s.wall > 0 ? s.productive / s.wall : 0;
  s.generation = gens_.empty() ? -1 : gens_.back().number;
  s.restarts = gens_.empty() ? 0 : static_cast<int>(gens_.size()) - 1;
  s.failures = failures_;
  s.workers_up = workers_up_;
  s.workers_expected = config_.nproc_per_node;
  s.worker_exits = exits_;
  s.exit_code = exit_code_;
  for (const auto& g : gens_)  // where the job is now: the newest generation that made progress
    if (g.last_step) s.step = g.last_step;
  s.total_steps = total_steps_;
  s.seconds_per_step = gens_.empty() ? std::nullopt : rate(gens_.back());
  s.longest_startup = longest_startup();
  s.progress_evidence = progress_seen();
  s.start_step = start_step();
  s.peak_flops_per_gpu = config_.peak_flops_per_gpu;
  s.gpu_name = config_.gpu_name;
  s.mfu = mfu(s.seconds_per_step);
  s.lost_steps = lost_steps_;
  s.lost_progress_known = lost_known_;
  fill_checkpoints(s, now);
  fill_advice(s);
  return s;
}

// --flops-per-step with the measured step time, else the framework's own TFLOP/s per GPU.
std::optional<double> GoodputAccountant::mfu(std::optional<double> seconds_per_step) const {
  const auto& peak = config_.peak_flops_per_gpu;
  if (!peak || *peak <= 0) return std::nullopt;
  if (config_.flops_per_step && config_.gpus > 0 && seconds_per_step && *seconds_per_step > 0)
    return *config_.flops_per_step / *seconds_per_step / (config_.gpus * *peak);
  if (framework_tflops_) return *framework_tflops_ * 1e12 / *peak;
  return std::nullopt;
}

std::optional<std::int64_t> GoodputAccountant::start_step() const {
  if (first_resume_ && first_resume_->found && first_resume_->step >= 0) return first_resume_->step;
  if (first_resume_ && !first_resume_->found && config_.checkpoints_watched) return 0;
  if (!gens_.empty()) return gens_.front().first_step;
  return std::nullopt;
}

void GoodputAccountant::fill_checkpoints(GoodputSnapshot& s, double now) const {
  s.checkpoints = checkpoints_;
  if (last_checkpoint_at_) s.checkpoint_age = now - *last_checkpoint_at_;
  s.last_write_seconds = last_write_;
  s.last_checkpoint_bytes = last_bytes_;
  s.checkpoint_cost = cost_samples_.empty() ? mean(gap_samples_) : mean(cost_samples_);
  s.checkpoint_interval = mean(interval_samples_);
  if (!cost_samples_.empty())
    s.longest_write_seconds = *std::max_element(cost_samples_.begin(), cost_samples_.end());
}

void GoodputAccountant::fill_advice(GoodputSnapshot& s) const {
  if (config_.mtbf_hours) {
    s.mtbf = *config_.mtbf_hours * 3600.0 / std::max(1, config_.nnodes);
    s.mtbf_source = "--mtbf-hours";
  } else if (failures_ > 0) {
    s.mtbf = s.wall / failures_;
    s.mtbf_source = "observed";
  }
  if (s.mtbf && s.checkpoint_cost && *s.checkpoint_cost > 0)
    s.advised_interval = std::sqrt(2.0 * *s.checkpoint_cost * *s.mtbf);
}

}  // namespace tv
