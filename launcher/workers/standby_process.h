// StandbyProcess: the OS side of one warm standby (docs/standby.md) — its pid (also its process
// group), the control socket (the standby's fd 0) and the read ends of the stdout/stderr pipes it
// will write to once it is a worker. Started through the Supervisor's Spawner, like a worker (own
// process group, PR_SET_PDEATHSIG, no inherited descriptors); its exit comes to Launch::on_exit.
// It is killed through that Spawner, and its age is measured on the Supervisor's LoopTime.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/loop_time.h"
#include "common/result.h"
#include "launcher/workers/spawner.h"
#include "launcher/workers/standby.h"

namespace tv {

class StandbyProcess {
 public:
  struct Launch {
    std::string executable;  // the workers' interpreter (resolved)
    PythonCommand command;
    std::vector<std::string> imports;
    Environment env;          // the rank's import-time environment
    Spawner::OnExit on_exit;  // gets the standby's exit, on the event loop
  };
  static Result<std::unique_ptr<StandbyProcess>> start(boost::asio::io_context& io, LoopTime& time,
                                                       Spawner& spawner, const Launch& launch);

  StandbyProcess(boost::asio::io_context& io, LoopTime& time, Spawner& spawner)
      : time_(time), spawner_(spawner), ctl_(io), started_(time.now()) {}
  StandbyProcess(const StandbyProcess&) = delete;
  StandbyProcess& operator=(const StandbyProcess&) = delete;
  ~StandbyProcess();

  pid_t pid() const { return pid_; }
  // Calls `fn` (on the event loop) when the standby has said something; cancelled by the
  // destructor and by activate().
  template <class Fn>
  void on_readable(Fn fn) {
    if (ctl_.is_open())
      ctl_.async_wait(boost::asio::posix::stream_descriptor::wait_read, std::move(fn));
  }
  // Reads what the standby said so far (non-blocking): true once it said "ready".
  bool poll_ready();
  bool ready() const { return ready_; }
  // The control socket reached EOF (the standby is gone).
  bool hung_up() const { return hung_up_; }
  LoopClock::duration age() const { return time_.now() - started_; }
  // Resident memory (VmRSS) in MiB, -1 when unknown.
  long rss_mib() const;
  // The reason it gave for not becoming ready ("import torch failed: ..."), if any.
  const std::string& failure() const { return failure_; }
  // Why it imports nothing before the script runs (Isaac Sim: docs/standby.md), if it said so.
  const std::string& note() const { return note_; }
  // The environment it was started with (the rank's import-time one, as spawned).
  const Environment& launch_env() const { return launch_env_; }
  // Every thread of the standby back to trainvisor's own CPU and I/O priority, through the
  // Spawner (Spawner::restore_priority). False (the refusal in `why`) when the kernel refuses (no
  // CAP_SYS_NICE).
  bool restore_priority(std::string* why) const;
  // Sends the activation message and closes the control socket; false when the standby is gone.
  bool activate(const std::string& message);
  // Hands the pipes' read ends over (the caller owns them afterwards).
  void release_pipes(int* out_r, int* err_r);
  // SIGKILL to its process group; Init reaps it.
  void kill() const;

 private:
  void close_all();

  LoopTime& time_;
  Spawner& spawner_;
  pid_t pid_ = -1;
  boost::asio::posix::stream_descriptor ctl_;
  int out_r_ = -1, err_r_ = -1;
  std::string said_;
  bool ready_ = false;
  bool hung_up_ = false;
  LoopClock::time_point started_;
  std::string failure_;
  std::string note_;
  Environment launch_env_;
};

}  // namespace tv
