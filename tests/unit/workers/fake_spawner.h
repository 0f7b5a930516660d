// FakeSpawner: the Supervisor's Spawner (launcher/workers/spawner.h) with no process behind
// it. spawn() records the request (argv, environment) and keeps a copy of the output pipes' write
// ends as the "child" would; the test writes the child's output (write) and ends it (exit: the
// write ends are closed, so the reader sees EOF, and the exit is posted to the loop as Init's
// reaper posts it). Every signal is recorded; a signal in `dies_on` (SIGKILL by default) ends the
// child as the kernel would. Its stdin (a warm standby's control socket) is kept too: the test
// writes to and reads from it with write_stdin/read_stdin. Pipes are not processes: real
// descriptors are fine here.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"
#include "launcher/workers/spawner.h"

namespace tv::testing {

class FakeSpawner final : public Spawner {
 public:
  struct Child {
    pid_t pid = -1;
    SpawnRequest req;
    OnExit on_exit;
    UniqueFd in{-1}, out{-1}, err{-1};  // the child's stdin, stdout and stderr
    std::vector<int> signals;           // to its process group, in order (SIGCONT included)
    std::vector<int> process_signals;
    bool exited = false;
  };

  explicit FakeSpawner(boost::asio::io_context& io) : io_(io) {}

  Result<pid_t> spawn(const SpawnRequest& req, OnExit on_exit) override {
    if (fail_next) {
      Error e = *fail_next;
      fail_next.reset();
      return e;
    }
    auto c = std::make_unique<Child>();
    c->pid = next_pid_++;
    c->req = req;
    c->on_exit = std::move(on_exit);
    // The caller closes its ends right after spawn, as after a real fork.
    if (req.stdin_fd >= 0) c->in = UniqueFd(::fcntl(req.stdin_fd, F_DUPFD_CLOEXEC, 0));
    if (req.stdout_fd >= 0) c->out = UniqueFd(::fcntl(req.stdout_fd, F_DUPFD_CLOEXEC, 0));
    if (req.stderr_fd >= 0) c->err = UniqueFd(::fcntl(req.stderr_fd, F_DUPFD_CLOEXEC, 0));
    const pid_t pid = c->pid;
    order_.push_back(pid);
    children_.emplace(pid, std::move(c));
    return pid;
  }

  void signal_group(pid_t pid, int sig) override {
    Child* c = find(pid);
    if (!c || c->exited) return;  // ESRCH: a group that is gone is no error
    c->signals.push_back(sig);
    if (dies_on.contains(sig)) exit(pid, W_EXITCODE(0, sig));
  }

  int signal_process(pid_t pid, int sig) override {
    Child* c = find(pid);
    if (!c || c->exited) return ESRCH;
    c->process_signals.push_back(sig);
    return 0;
  }

  int kill_leftovers(const std::set<pid_t>& spare) override {
    ++leftover_cleanups;
    last_spared = spare;
    return 0;
  }

  bool restore_priority(pid_t pid, std::string* why) override {
    priority_restored.push_back(pid);
    if (priority_refused.empty()) return true;
    *why = priority_refused;
    return false;
  }

  // The test's side. The child writes `text` to its stdout (or stderr).
  void write(pid_t pid, std::string_view text, bool to_stderr = false) {
    Child& c = child(pid);
    const UniqueFd& fd = to_stderr ? c.err : c.out;
    if (!fd.valid() || ::write(fd.get(), text.data(), text.size()) != ssize_t(text.size()))
      throw std::runtime_error("fake child " + std::to_string(pid) + ": cannot write");
  }
  // The child ends with `wait_status` (W_EXITCODE(code, 0), or W_EXITCODE(0, sig)): its pipes
  // close (unless `pipes_held`: a grandchild that survives it keeps them open, until
  // close_pipes), and its exit reaches the owner on the loop. Once only.
  void exit(pid_t pid, int wait_status, bool pipes_held = false) {
    Child& c = child(pid);
    if (c.exited) return;
    c.exited = true;
    if (!pipes_held) close_pipes(pid);
    boost::asio::post(io_, [fn = c.on_exit, pid, wait_status] { fn(pid, wait_status); });
  }
  // The child's side of its stdin (a socket for a standby): what it says, what it was sent.
  void write_stdin(pid_t pid, std::string_view text) {
    const UniqueFd& fd = child(pid).in;
    if (!fd.valid() || ::write(fd.get(), text.data(), text.size()) != ssize_t(text.size()))
      throw std::runtime_error("fake child " + std::to_string(pid) + ": cannot write its stdin");
  }
  std::string read_stdin(pid_t pid) {
    std::string got;
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(child(pid).in.get(), buf, sizeof buf, MSG_DONTWAIT)) > 0)
      got.append(buf, static_cast<size_t>(n));
    return got;
  }
  void exit_code(pid_t pid, int code) { exit(pid, W_EXITCODE(code, 0)); }
  void close_pipes(pid_t pid) {
    Child& c = child(pid);
    c.in = UniqueFd(-1);
    c.out = UniqueFd(-1);
    c.err = UniqueFd(-1);
  }

  Child& child(pid_t pid) {
    Child* c = find(pid);
    if (!c) throw std::out_of_range("no fake child " + std::to_string(pid));
    return *c;
  }
  // Every pid spawn() gave out, in order.
  const std::vector<pid_t>& spawned() const { return order_; }
  std::vector<pid_t> live() const {
    std::vector<pid_t> out;
    for (pid_t p : order_)
      if (!children_.at(p)->exited) out.push_back(p);
    return out;
  }

  std::set<int> dies_on{SIGKILL};
  std::optional<Error> fail_next;  // the next spawn() fails with it
  int leftover_cleanups = 0;
  std::set<pid_t> last_spared;
  std::vector<pid_t> priority_restored;
  std::string priority_refused;  // non-empty: restore_priority fails with it

 private:
  Child* find(pid_t pid) {
    auto it = children_.find(pid);
    return it == children_.end() ? nullptr : it->second.get();
  }
  boost::asio::io_context& io_;
  pid_t next_pid_ = 1000;
  std::vector<pid_t> order_;
  std::map<pid_t, std::unique_ptr<Child>> children_;
};

}  // namespace tv::testing
