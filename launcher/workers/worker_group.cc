#include "launcher/workers/worker_group.h"

#include <csignal>
#include <stdexcept>

#include "common/exit_codes.h"

namespace tv {

const char* to_string(GroupState s) {
  switch (s) {
    case GroupState::kInit:
      return "init";
    case GroupState::kHealthy:
      return "healthy";
    case GroupState::kStopping:
      return "stopping";
    case GroupState::kSucceeded:
      return "succeeded";
    case GroupState::kStopped:
      return "stopped";
  }
  return "?";
}

WorkerGroup::WorkerGroup(int nproc, GroupActions& actions)
    : actions_(actions), running_(static_cast<size_t>(nproc), false) {}

int WorkerGroup::running() const {
  int n = 0;
  for (bool r : running_) n += r ? 1 : 0;
  return n;
}

void WorkerGroup::start(const GenerationPlan& plan) {
  if (state_ == GroupState::kHealthy || state_ == GroupState::kStopping)
    throw std::logic_error("WorkerGroup::start while workers of the last generation run");
  generation_ = plan.generation;
  state_ = GroupState::kHealthy;
  std::vector<WorkerEnd> failed_starts;
  for (size_t r = 0; r < running_.size(); ++r) {
    WorkerEnd end;
    end.local_rank = static_cast<int>(r);
    running_[r] = actions_.start_worker(end.local_rank, plan, &end);
    if (!running_[r]) failed_starts.push_back(end);
  }
  for (const auto& end : failed_starts) worker_over(end);
}

void WorkerGroup::worker_over(const WorkerEnd& end) {
  running_.at(end.local_rank) = false;
  if (state_ == GroupState::kHealthy) {
    if (!end.ok()) return fail(end);
    if (running() == 0) {
      state_ = GroupState::kSucceeded;
      actions_.cleanup_descendants();
      actions_.group_succeeded(generation_);
    }
    return;
  }
  if (state_ == GroupState::kStopping && running() == 0) enter_stopped();
}

void WorkerGroup::on_worker_hang(int local_rank) {
  if (state_ != GroupState::kHealthy || !running_.at(local_rank)) return;
  WorkerEnd end;
  end.local_rank = local_rank;
  end.exit_code = exit_code_of(ErrorKind::kHang);
  end.hang = true;
  fail(end);
}

void WorkerGroup::fail(const WorkerEnd& end) {
  state_ = GroupState::kStopping;  // first: a re-entrant stop() from the report is a no-op
  actions_.group_failed(generation_, end);
  signal_or_enter_stopped(SIGTERM);
}

void WorkerGroup::stop(int sig) {
  switch (state_) {
    case GroupState::kHealthy:
      return begin_stopping(sig);
    case GroupState::kStopping:
      return;
    case GroupState::kInit:
    case GroupState::kSucceeded:
    case GroupState::kStopped:
      state_ = GroupState::kStopped;
      return actions_.group_stopped(generation_);
  }
}

void WorkerGroup::begin_stopping(int sig) {
  state_ = GroupState::kStopping;
  signal_or_enter_stopped(sig);
}

void WorkerGroup::signal_or_enter_stopped(int sig) {
  if (running() == 0) return enter_stopped();
  for (size_t r = 0; r < running_.size(); ++r)
    if (running_[r]) actions_.signal_worker(static_cast<int>(r), sig);
  actions_.arm_grace_timer();
}

void WorkerGroup::enter_stopped() {
  actions_.cancel_grace_timer();
  actions_.cleanup_descendants();
  state_ = GroupState::kStopped;
  actions_.group_stopped(generation_);
}

void WorkerGroup::on_grace_expired() {
  if (state_ == GroupState::kStopping) kill_now();
}

void WorkerGroup::kill_now() {
  for (size_t r = 0; r < running_.size(); ++r)
    if (running_[r]) actions_.signal_worker(static_cast<int>(r), SIGKILL);
}

void WorkerGroup::forward(int sig) {
  for (size_t r = 0; r < running_.size(); ++r)
    if (running_[r]) actions_.signal_worker(static_cast<int>(r), sig);
}

}  // namespace tv
