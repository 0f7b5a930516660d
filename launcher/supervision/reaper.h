// Reaper: the only caller of waitpid() in trainvisor.
//
// As PID 1 it reaps every process that dies in the container; otherwise it makes trainvisor a
// child subreaper (PR_SET_CHILD_SUBREAPER) so orphaned grandchildren come back to it. On each
// SIGCHLD (an Asio signal_set on the supervisor's event loop) it calls waitpid(-1, WNOHANG) until
// nothing is left and hands every status to `on_exit`; the supervisor ignores pids that are not
// its workers (orphans). Boost.Process is used to spawn only: its process objects are detached at
// once and never wait, so no exit status is ever taken by a second waiter (boostorg/process#187).
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <functional>

namespace tv {

class Reaper {
 public:
  using OnExit = std::function<void(pid_t pid, int wait_status)>;
  Reaper(boost::asio::io_context& io, OnExit on_exit);
  // Reaps whatever has exited now (also called after each spawn; cheap).
  void reap_now();
  bool is_pid1() const { return pid1_; }

 private:
  void wait_signal();

  boost::asio::signal_set sigchld_;
  OnExit on_exit_;
  bool pid1_;
};

// Launcher exit code for a wait status: the code, or 128+N for signal N.
int exit_code_from_status(int wait_status);

}  // namespace tv
