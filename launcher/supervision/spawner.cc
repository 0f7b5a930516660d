#include "launcher/supervision/spawner.h"

// GCC 12 reports a false array-bounds/stringop-overflow/restrict in Boost.Process 1.81's
// default_launcher::close_all_fds (`fd_whitelist = {0, 1, 2}` after inlining). Boost's code, not
// ours: silenced for this file only.
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wrestrict"

#include <sys/prctl.h>
#include <unistd.h>

#include <boost/process/v2/environment.hpp>
// Boost 1.81 header-only mode omits this implementation file (process_environment::on_setup).
#include <boost/process/v2/impl/environment.ipp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
#include <algorithm>
#include <csignal>

#include "common/exit_codes.h"

namespace tv {
namespace bp = boost::process::v2;

namespace {

// Closes every descriptor above stderr except the launcher's whitelist (its exec-error pipe).
// Boost 1.81's own close_all() skips the gaps between whitelisted descriptors (it compares an
// element with itself), which leaks descriptors into workers; this runs first and does it right.
void close_inherited_fds(std::vector<int>& keep) {  // sorted in place: no allocation after fork
  std::sort(keep.begin(), keep.end());
  unsigned from = 3;
  for (int fd : keep) {
    if (fd < 0 || static_cast<unsigned>(fd) < from) continue;
    if (static_cast<unsigned>(fd) > from) ::close_range(from, static_cast<unsigned>(fd) - 1, 0);
    from = static_cast<unsigned>(fd) + 1;
  }
  ::close_range(from, ~0U, 0);
}

// Runs in the child between fork and exec, after stdio is in place: async-signal-safe calls only.
struct ChildSetup {
  pid_t parent;
  template <class Launcher>
  bp::error_code on_exec_setup(Launcher& launcher, const bp::filesystem::path&, const char* const*) {
    close_inherited_fds(launcher.fd_whitelist);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(exit_code::kSignalBase + SIGKILL);  // parent already gone
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    return {};
  }
};

Error exec_error(const std::string& exe, const bp::error_code& ec) {
  const int code = ec.value() == ENOENT ? exit_code::kNotFound : exit_code::kNotExecutable;
  return Error{code, "cannot execute " + exe + ": " + ec.message()};
}

}  // namespace

Result<pid_t> ProcessSpawner::spawn(const SpawnRequest& req) {
  std::vector<std::string> args(req.argv.begin() + (req.argv.empty() ? 0 : 1), req.argv.end());
  bp::error_code ec;
  bp::posix::default_launcher launcher;
  auto proc = launcher(io_.get_executor(), ec, bp::filesystem::path(req.executable), args,
                       bp::process_stdio{nullptr, req.stdout_fd, req.stderr_fd},
                       bp::process_environment(req.env.to_envp()), ChildSetup{::getpid()});
  if (ec) return exec_error(req.executable, ec);
  const pid_t pid = proc.id();
  ::setpgid(pid, pid);  // also here, so the group exists before we ever signal it
  proc.detach();        // the Reaper waits, never Boost.Process
  return pid;
}

}  // namespace tv
