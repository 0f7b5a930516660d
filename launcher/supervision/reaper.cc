#include "launcher/supervision/reaper.h"

#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace tv {

Reaper::Reaper(boost::asio::io_context& io, OnExit on_exit)
    : sigchld_(io, SIGCHLD), on_exit_(std::move(on_exit)), pid1_(::getpid() == 1) {
  if (!pid1_ && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    spdlog::warn("cannot become child subreaper: orphaned grandchildren will not be reaped here");
  wait_signal();
}

void Reaper::wait_signal() {
  sigchld_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    reap_now();
    wait_signal();
  });
}

void Reaper::reap_now() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      on_exit_(pid, status);
      continue;
    }
    if (pid < 0 && errno == EINTR) continue;
    return;  // 0: children still running; ECHILD: none left
  }
}

int exit_code_from_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace tv
