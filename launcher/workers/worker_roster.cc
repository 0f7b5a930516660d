#include "launcher/workers/worker_roster.h"

#include <boost/asio/post.hpp>

#include "common/process.h"
#include "launcher/job/root_cause.h"

namespace tv {

void WorkerRoster::new_generation(int nproc) {
  by_rank_.assign(static_cast<size_t>(nproc), nullptr);
}

namespace {
constexpr auto kDrainWindow = std::chrono::milliseconds(200);
}  // namespace

void WorkerRoster::add(const WorkerPtr& w, pid_t pid) {
  // weak: the WorkerProcess owns this callback, a shared_ptr here would keep it alive forever.
  w->attach(pid, [this, weak = std::weak_ptr<WorkerProcess>(w)] {
    if (auto self = weak.lock()) streams_closed(self);
  });
  by_rank_.at(static_cast<size_t>(w->id().local_rank)) = w;
  by_pid_[pid] = w;
}

bool WorkerRoster::exited(pid_t pid, int status, WallTime reaped_at) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return false;
  WorkerPtr w = std::move(it->second);
  by_pid_.erase(it);
  w->wait_status = status;
  w->reaped_at = reaped_at;
  if (!w->streams_open()) {
    post_over(w);
    return true;
  }
  // Let the last lines arrive (they matter for the root cause), but never wait on a pipe that a
  // surviving grandchild keeps open.
  w->drain_timer.expires_after(kDrainWindow);
  w->drain_timer.async_wait([this, w](const boost::system::error_code&) { over(w); });
  return true;
}

void WorkerRoster::streams_closed(const WorkerPtr& w) {
  if (!w->wait_status) return;
  w->drain_timer.cancel();
  post_over(w);
}

void WorkerRoster::post_over(const WorkerPtr& w) {
  boost::asio::post(io_, [this, w] { over(w); });
}

void WorkerRoster::over(const WorkerPtr& w) {
  if (w->over || !w->wait_status) return;
  w->over = true;
  // Everything it wrote before it died is in its pipes by now: read it before anything is decided
  // (the drain window may have ended with a pipe a grandchild holds, or unread).
  w->drain();
  WorkerEnd end;
  end.local_rank = w->id().local_rank;
  end.exit_code = exit_code_from_status(*w->wait_status);
  end.signal = signal_from_status(*w->wait_status);
  on_over_(w, end);
}

const WorkerRoster::WorkerPtr& WorkerRoster::at(int local_rank) const {
  return by_rank_.at(static_cast<size_t>(local_rank));
}

void WorkerRoster::signal(int local_rank, int sig) const {
  if (const auto& w = at(local_rank)) w->signal(sig);
}

WorkerEnd WorkerRoster::end_of(int local_rank) const {
  WorkerEnd end;
  end.local_rank = local_rank;
  const auto& w = at(local_rank);
  if (w && w->wait_status) {
    end.exit_code = exit_code_from_status(*w->wait_status);
    end.signal = signal_from_status(*w->wait_status);
  }
  return end;
}

std::vector<WorkerLook> WorkerRoster::running(bool take_heartbeats) const {
  std::vector<WorkerLook> out;
  for (const auto& w : unreaped()) {
    const bool changed = take_heartbeats && w->take_heartbeat_change();
    out.push_back({w->id().local_rank, w->id().rank, w->silent_for(), changed});
  }
  return out;
}

std::vector<WorkerRoster::WorkerPtr> WorkerRoster::unreaped() const {
  std::vector<WorkerPtr> out;
  for (const auto& w : by_rank_)
    if (w && !w->wait_status) out.push_back(w);
  return out;
}

std::vector<StacksCollection::Worker> WorkerRoster::stack_targets() const {
  std::vector<StacksCollection::Worker> out;
  for (const auto& w : by_rank_)
    if (w && !w->wait_status && w->pid() > 0)
      out.push_back({w->id().rank, w->pid(), w->id().stacks_file});
  return out;
}

// One that has not been reaped yet counts only with an error file, as of `now`.
LocalFailure WorkerRoster::failure_time(const WorkerProcess& w, WallTime now) const {
  const auto written = error_file_written(fs_, w.id().error_file);
  return {w.id().local_rank, written, w.wait_status ? w.reaped_at : written.value_or(now),
          !w.wait_status};
}

std::optional<LocalFailure> WorkerRoster::earliest_failure(
    int generation, WallTime now, const std::function<bool(int)>& is_running) const {
  std::vector<LocalFailure> candidates;
  for (const auto& w : by_rank_) {
    if (!w || w->id().generation != generation) continue;
    const LocalFailure time = failure_time(*w, now);
    if (w->wait_status) {
      if (end_of(time.local_rank).ok()) continue;
    } else if (!time.error_written || !is_running(time.local_rank)) {
      continue;
    }
    candidates.push_back(time);
  }
  return earliest_local_failure(candidates);
}

std::int64_t WorkerRoster::failed_at_ns(const WorkerEnd& end, WallTime now) const {
  auto when = now;
  const auto& w = at(end.local_rank);
  if (w && w->wait_status && !end.hang && !end.start_failed) when = failure_time(*w, now).when();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
}

void WorkerRoster::close_pipes() const {
  for (const auto& w : by_rank_)
    if (w) w->close_pipes();
}

void WorkerRoster::release() {
  for (const auto& w : by_rank_)
    if (w) {
      w->close_pipes();
      w->drain_timer.cancel();
    }
  by_rank_.clear();
  by_pid_.clear();
}

}  // namespace tv
