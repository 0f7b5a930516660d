#include "common/children.h"

#include <csignal>

#include "common/exit_codes.h"
#include "common/init.h"

namespace tv {

namespace {
// After SIGKILL a process ends at once unless the kernel holds it (uninterruptible I/O): wait
// that long at most, then report it killed without its status.
constexpr auto kReapAfterKill = std::chrono::seconds(5);
}  // namespace

ChildGroup::ChildGroup() = default;

ChildGroup::~ChildGroup() { kill_all(); }

Result<pid_t> ChildGroup::spawn(const SpawnRequest& req) {
  auto pid = Init::instance().spawn(req, [s = state_](pid_t pid, int status) {
    {
      std::lock_guard lock(s->mu);
      s->ended[pid] = status;
    }
    s->cv.notify_all();
  });
  if (pid) pids_.push_back(*pid);
  return pid;
}

bool ChildGroup::all_ended(const std::vector<pid_t>& pids) {
  for (pid_t p : pids)
    if (!state_->ended.count(p)) return false;
  return true;
}

void ChildGroup::kill_all() {
  std::lock_guard lock(state_->mu);
  for (pid_t p : pids_)
    if (!state_->ended.count(p)) ::kill(-p, SIGKILL);
}

std::vector<ChildEnd> ChildGroup::wait_all(Clock::time_point deadline) {
  std::unique_lock lock(state_->mu);
  const bool in_time = state_->cv.wait_until(lock, deadline, [&] { return all_ended(pids_); });
  std::vector<bool> killed(pids_.size(), false);
  if (!in_time) {
    for (size_t i = 0; i < pids_.size(); ++i)
      if (!state_->ended.count(pids_[i])) {
        ::kill(-pids_[i], SIGKILL);
        killed[i] = true;
      }
    state_->cv.wait_for(lock, kReapAfterKill, [&] { return all_ended(pids_); });
  }
  std::vector<ChildEnd> out;
  for (size_t i = 0; i < pids_.size(); ++i) {
    ChildEnd e{pids_[i], killed[i], exit_code_of(ErrorKind::kStoppedBySignal, SIGKILL)};
    if (auto it = state_->ended.find(pids_[i]); it != state_->ended.end())
      e.code = exit_code_from_status(it->second);
    out.push_back(e);
  }
  return out;
}

}  // namespace tv
