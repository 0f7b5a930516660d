#include "launcher/node/root_cause_wait.h"

#include <algorithm>
#include <csignal>
#include <utility>

namespace tv {

void RootCauseWait::wait(int local_rank, std::optional<WorkerEnd> first_seen,
                         std::chrono::milliseconds grace,
                         std::function<void(int local_rank)> overdue) {
  waited_ = Waited{local_rank, std::move(first_seen)};
  timer_.expires_after(std::min<std::chrono::milliseconds>(kWindow, grace));
  timer_.async_wait(
      [this, local_rank, overdue = std::move(overdue)](const boost::system::error_code& ec) {
        if (!ec && waited_ && waited_->local_rank == local_rank) overdue(local_rank);
      });
}

bool RootCauseWait::holds(int local_rank, int sig) const {
  return sig != SIGKILL && waited_ && waited_->local_rank == local_rank;
}

RootCauseWait::Ended RootCauseWait::ended(const WorkerEnd& end) {
  if (!waited_ || waited_->local_rank != end.local_rank) return {};
  Ended out{true, end.ok() ? waited_->first_seen : std::optional(end)};
  cancel();
  return out;
}

void RootCauseWait::cancel() {
  waited_.reset();
  timer_.cancel();
}

}  // namespace tv
