// Spawner: starts one worker process. The real one uses Boost.Process v2's default launcher
// (fork + execve, exec errors reported back through a CLOEXEC pipe, every other descriptor
// closed in the child) and detaches at once: the Reaper alone waits for children.
//
// Between fork and exec the child only: puts itself in its own process group (so signals reach
// everything the worker starts), asks for SIGKILL if trainvisor dies (PR_SET_PDEATHSIG), clears
// the signal mask and restores SIGPIPE to its default.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/result.h"

namespace tv {

struct SpawnRequest {
  std::string executable;         // resolved path
  std::vector<std::string> argv;  // argv[0] included (replaced by executable, as torchrun does)
  Environment env;
  int stdout_fd = -1;  // write ends; the spawner does not close them
  int stderr_fd = -1;
};

class Spawner {
 public:
  virtual ~Spawner() = default;
  // The child's pid (also its process group id), or exit 126/127 with the exec error.
  virtual Result<pid_t> spawn(const SpawnRequest& req) = 0;
};

class ProcessSpawner final : public Spawner {
 public:
  explicit ProcessSpawner(boost::asio::io_context& io) : io_(io) {}
  Result<pid_t> spawn(const SpawnRequest& req) override;

 private:
  boost::asio::io_context& io_;
};

}  // namespace tv
