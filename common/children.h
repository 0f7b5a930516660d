// ChildGroup: the children of one synchronous owner (a preflight check, the NCCL probe ranks, a
// query of a vendor library), started through Init::spawn and waited for with a deadline. Init
// hands each exit here (no polling, no waitpid of our own); a child still running at the deadline
// has its process group SIGKILLed and is reported as timed out. Whatever is still running when
// the group is destroyed is SIGKILLed too, so no child outlives its owner.
//
// Thread safety: one owner thread per group; exits arrive from Init's signal thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common/process.h"
#include "common/result.h"

namespace tv {

struct ChildEnd {
  pid_t pid = -1;
  bool timed_out = false;  // killed at the deadline
  int code = -1;           // exit code, or 128+N for signal N
};

class ChildGroup {
 public:
  using Clock = std::chrono::steady_clock;
  ChildGroup();
  ~ChildGroup();
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  Result<pid_t> spawn(const SpawnRequest& req);
  // Waits for every child started here until `deadline`, then kills the rest; in spawn order.
  std::vector<ChildEnd> wait_all(Clock::time_point deadline);
  // SIGKILLs the process group of every child still running (does not wait).
  void kill_all();

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::map<pid_t, int> ended;  // pid -> wait status
  };
  bool all_ended(const std::vector<pid_t>& pids);

  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::vector<pid_t> pids_;
};

}  // namespace tv
