// A root cause still exiting: RootCauseJudge (root_cause_judge.h) chose a worker that wrote its
// error file first and is still in its teardown (Python and CUDA exit), while a peer's collateral
// failure ended first. Its own exit status belongs in the report, so the Supervisor waits for it:
// its SIGTERM is held for a window (2 s, at most the grace period), then it gets it; SIGKILL at
// the grace period's end is never held. One wait at a time; a new generation cancels it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include "common/loop_time.h"
#include "launcher/workers/worker_group.h"

namespace tv {

class RootCauseWait {
 public:
  static constexpr auto kWindow = std::chrono::milliseconds(2000);

  RootCauseWait(boost::asio::io_context& io, LoopTime& time) : timer_(io, time) {}

  // Waits for `local_rank`'s exit; `first_seen`: the group's own first failure, reported instead
  // when the waited one exits 0 after all. `overdue` runs once, when min(kWindow, grace) passes
  // first (the Supervisor sends the held SIGTERM).
  void wait(int local_rank, std::optional<WorkerEnd> first_seen, std::chrono::milliseconds grace,
            std::function<void(int local_rank)> overdue);
  bool waiting() const { return waited_.has_value(); }
  // Whether `sig` to `local_rank` waits: a SIGTERM (any but SIGKILL) to the one waited for.
  bool holds(int local_rank, int sig) const;

  struct Ended {
    bool waited = false;              // it was the one waited for; the wait is over
    std::optional<WorkerEnd> report;  // the failure to report: its own, else first_seen
  };
  Ended ended(const WorkerEnd& end);
  void cancel();

 private:
  struct Waited {
    int local_rank = 0;
    std::optional<WorkerEnd> first_seen;
  };
  std::optional<Waited> waited_;
  LoopTimer timer_;
};

}  // namespace tv
