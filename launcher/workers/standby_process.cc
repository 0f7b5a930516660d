#include "launcher/workers/standby_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <utility>

#include "common/exit_codes.h"
#include "launcher/workers/standby_bootstrap_py.h"  // generated: kStandbyBootstrap

namespace tv {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

Result<std::unique_ptr<StandbyProcess>> StandbyProcess::start(boost::asio::io_context& io,
                                                              LoopTime& time, Spawner& spawner,
                                                              const Launch& l) {
  auto p = std::make_unique<StandbyProcess>(io, time, spawner);
  int sv[2], o[2], e[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return Error{ErrorKind::kConfig,
                 std::string("standby control socket: ") + std::strerror(errno)};
  p->ctl_.assign(sv[0]);
  if (::pipe2(o, O_CLOEXEC) != 0) {
    ::close(sv[1]);
    return Error{ErrorKind::kConfig, std::string("standby pipes: ") + std::strerror(errno)};
  }
  p->out_r_ = o[0];
  if (::pipe2(e, O_CLOEXEC) != 0) {
    ::close(sv[1]);
    ::close(o[1]);
    return Error{ErrorKind::kConfig, std::string("standby pipes: ") + std::strerror(errno)};
  }
  p->err_r_ = e[0];
  SpawnRequest req;
  req.executable = l.executable;
  // The bootstrap is part of the binary and goes on the command line (-c): code trainvisor runs
  // is never read back from a file that another user could replace (docs/supervision.md).
  req.argv = {l.executable,
              "-u",
              "-c",
              kStandbyBootstrap,
              l.command.module ? "module" : "script",
              l.command.target,
              join(l.imports)};
  req.env = l.env;
  req.stdin_fd = sv[1];
  req.stdout_fd = o[1];
  req.stderr_fd = e[1];
  req.ignore_user_signals = true;  // Slurm's step-wide SIGUSR1 reaches standbys too
  auto pid = spawner.spawn(req, l.on_exit);
  ::close(sv[1]);
  ::close(o[1]);
  ::close(e[1]);
  if (!pid) return pid.error();
  p->pid_ = *pid;
  p->launch_env_ = l.env;
  return p;
}

StandbyProcess::~StandbyProcess() { close_all(); }

void StandbyProcess::close_all() {
  boost::system::error_code ec;
  ctl_.close(ec);
  close_fd(out_r_);
  close_fd(err_r_);
}

long StandbyProcess::rss_mib() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string key;
  long kib = -1;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> kib;
      return kib / 1024;
    }
    in.ignore(4096, '\n');
  }
  return -1;
}

bool StandbyProcess::poll_ready() {
  char buf[512];
  ssize_t n = -1;
  while (ctl_.is_open() && (n = ::recv(ctl_.native_handle(), buf, sizeof buf, MSG_DONTWAIT)) > 0)
    said_.append(buf, static_cast<size_t>(n));
  if (ctl_.is_open() && n == 0) hung_up_ = true;
  size_t nl;
  while ((nl = said_.find('\n')) != std::string::npos) {
    const std::string line = said_.substr(0, nl);
    said_.erase(0, nl + 1);
    if (line == "R") ready_ = true;
    if (line.starts_with("E ")) failure_ = line.substr(2);
    if (line.starts_with("N ")) note_ = line.substr(2);
  }
  return ready_;
}

bool StandbyProcess::restore_priority(std::string* why) const {
  return spawner_.restore_priority(pid_, why);
}

bool StandbyProcess::activate(const std::string& message) {
  size_t off = 0;
  while (off < message.size()) {
    const ssize_t n =
        ::send(ctl_.native_handle(), message.data() + off, message.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {  // a full socket buffer: the standby is reading, wait for it
      pollfd pfd{ctl_.native_handle(), POLLOUT, 0};
      if (::poll(&pfd, 1, 5000) == 1) continue;
    }
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  boost::system::error_code ec;
  ctl_.close(ec);
  return true;
}

void StandbyProcess::release_pipes(int* out_r, int* err_r) {
  *out_r = std::exchange(out_r_, -1);
  *err_r = std::exchange(err_r_, -1);
}

void StandbyProcess::kill() const {
  if (pid_ > 0) spawner_.signal_group(pid_, SIGKILL);
}

}  // namespace tv
