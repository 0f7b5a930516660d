// Spawner: the supervisor's seam for every process operation of its event loop: starting a child
// and learning when it has been reaped, signalling a child's process group or one process, and
// killing what the workers left behind. The Supervisor, WorkerProcess, GpuHealthWatch and the
// warm standbys reach processes only through it, so a unit test hands them a fake
// (tests/unit/workers/fake_spawner.h) and no process is touched.
//
// The real one (InitSpawner) is Init::spawn (common/init.h), the one spawner of the process:
// Boost.Process's launcher, exec errors as 126/127, the child in its own process group with
// PR_SET_PDEATHSIG=SIGKILL, an empty signal mask and SIGPIPE default, every other descriptor
// closed. Init's signal thread reaps; InitSpawner posts each exit to the event loop, so the owner
// sees it as an event there, and drops exits that arrive after it was destroyed. Its signals are
// kill(2); its leftover cleanup is kill_descendants (launcher/workers/descendants.h) sparing
// Init::own_children and what started before Init; its
// priority restore is setpriority and ioprio_set on every thread in /proc/PID/task.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

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
  // `sig` to the process group `pid` leads (spawn made it), and to `pid` itself when it has moved
  // to another group; a group that is gone is no error.
  virtual void signal_group(pid_t pid, int sig) = 0;
  // `sig` to the one process `pid`: 0, or the errno of the refusal.
  virtual int signal_process(pid_t pid, int sig) = 0;
  // SIGKILLs what the workers left behind (launcher/workers/descendants.h: never what
  // trainvisor started for itself or had before the run, nor `spare` and what is below them) and
  // waits (bounded) until they have died; how many were signalled.
  virtual int kill_leftovers(const std::set<pid_t>& spare) = 0;
  // Every thread of `pid` and of the processes below it (an interpreter wrapper's Python child)
  // back to trainvisor's own CPU and I/O priority (a warm standby becoming a worker); false, with
  // the refusal in `why`, when the kernel refuses (no CAP_SYS_NICE).
  virtual bool restore_priority(pid_t pid, std::string* why) = 0;
};

class InitSpawner final : public Spawner {
 public:
  explicit InitSpawner(boost::asio::io_context& io);
  ~InitSpawner() override;
  Result<pid_t> spawn(const SpawnRequest& req, OnExit on_exit) override;
  void signal_group(pid_t pid, int sig) override;
  int signal_process(pid_t pid, int sig) override;
  int kill_leftovers(const std::set<pid_t>& spare) override;
  bool restore_priority(pid_t pid, std::string* why) override;

 private:
  struct Mailbox {
    explicit Mailbox(boost::asio::io_context* loop) : io(loop) {}
    std::mutex mu;
    boost::asio::io_context* io;  // null once the spawner is gone
  };
  std::shared_ptr<Mailbox> box_;
};

}  // namespace tv
