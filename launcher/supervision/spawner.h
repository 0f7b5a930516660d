// Spawner: the supervisor's seam for starting one worker and learning when it has been reaped.
// The real one (InitSpawner) is Init::spawn (common/init.h), the one spawner of the process:
// Boost.Process's launcher, exec errors as 126/127, the child in its own process group with
// PR_SET_PDEATHSIG=SIGKILL, an empty signal mask and SIGPIPE default, every other descriptor
// closed. Init's signal thread reaps; InitSpawner posts each exit to the event loop, so the owner
// sees it as an event there, and drops exits that arrive after it was destroyed.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <mutex>

#include "common/process.h"
#include "common/result.h"

namespace tv {

class Spawner {
 public:
  using OnExit = std::function<void(pid_t pid, int wait_status)>;
  virtual ~Spawner() = default;
  // The child's pid (also its process group id), or exit 126/127 with the exec error. `on_exit`
  // runs on the owner's event loop once the child has been reaped.
  virtual Result<pid_t> spawn(const SpawnRequest& req, OnExit on_exit) = 0;
};

class InitSpawner final : public Spawner {
 public:
  explicit InitSpawner(boost::asio::io_context& io);
  ~InitSpawner() override;
  Result<pid_t> spawn(const SpawnRequest& req, OnExit on_exit) override;

 private:
  struct Mailbox {
    explicit Mailbox(boost::asio::io_context* loop) : io(loop) {}
    std::mutex mu;
    boost::asio::io_context* io;  // null once the spawner is gone
  };
  std::shared_ptr<Mailbox> box_;
};

}  // namespace tv
