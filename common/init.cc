#include "common/init.h"

// GCC 12 reports a false array-bounds/stringop-overflow/restrict in Boost.Process 1.81's
// default_launcher::close_all_fds (`fd_whitelist = {0, 1, 2}` after inlining). Boost's code, not
// ours: silenced for this file only. GCC's names only: clang does not know the last two and
// would fail on them under -Werror (-Wunknown-warning-option).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <fcntl.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/process/v2/environment.hpp>
#include <charconv>
#include <condition_variable>
#include <ctime>
#include <string_view>
// Boost 1.81 header-only mode omits this implementation file (process_environment::on_setup).
#include <boost/process/v2/impl/environment.ipp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
#include <csignal>
#include <cstdlib>
#include <vector>

#include "common/bounded_read.h"
#include "common/exit_codes.h"
#include "common/log.h"

namespace tv {
namespace bp = boost::process::v2;

namespace {
// The standard signals Init forwards to the workers: every one tini forwards (all but SIGCHLD, the
// synchronous faults it leaves to the kernel and SIGTTIN/SIGTTOU, which it ignores), less SIGPIPE,
// which trainvisor ignores for its own writes (docs/supervision.md, "Signals").
constexpr int kForwarded[] = {SIGUSR1,   SIGUSR2, SIGQUIT,  SIGALRM, SIGSTKFLT,
                              SIGCONT,   SIGTSTP, SIGURG,   SIGXCPU, SIGXFSZ,
                              SIGVTALRM, SIGPROF, SIGWINCH, SIGIO,   SIGPWR};
}  // namespace

int stacks_signal() { return SIGRTMIN + 8; }

bool is_forwarded_signal(int sig) {
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return sig != stacks_signal();
  return std::find(std::begin(kForwarded), std::end(kForwarded), sig) != std::end(kForwarded);
}

sigset_t owned_signal_set() {
  sigset_t set;
  ::sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) ::sigaddset(&set, s);
  for (int s : kForwarded) ::sigaddset(&set, s);
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) ::sigaddset(&set, s);  // the stacks signal too
  return set;
}

std::string signal_name(int sig) {
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

namespace {

Init* g_init = nullptr;
rlimit g_start_nofile{};  // RLIMIT_NOFILE when Init was made: every child gets it back

// Closes every descriptor above stderr except the launcher's whitelist (its exec-error pipe).
// Boost 1.81's own close_all() skips the gaps between whitelisted descriptors (it compares an
// element with itself), which leaks descriptors into children; this runs first and does it right.
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

// SpawnRequest::background: nice 19, a weight of 15 against a worker's 1024, so the GPU watch
// and the side queries never delay a worker on a busy node yet still get their millisecond a
// poll (SCHED_IDLE, a weight of 3, starved the watch for seconds on a loaded 2-core host).
constexpr int kBackgroundNice = 19;

// Runs in the child between fork and exec, after stdio is in place: async-signal-safe calls only.
struct ChildSetup {
  pid_t parent;
  rlimit nofile;  // the open-file limit trainvisor started with (node 0 raises its own)
  bool ignore_user_signals;
  bool background;
  template <class Launcher>
  bp::error_code on_exec_setup(Launcher& launcher, const bp::filesystem::path&,
                               const char* const*) {
    close_inherited_fds(launcher.fd_whitelist);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(exit_code_of(ErrorKind::kStoppedBySignal, SIGKILL));  // parent already gone
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (nofile.rlim_max > 0) ::setrlimit(RLIMIT_NOFILE, &nofile);
    if (ignore_user_signals) {
      ::signal(SIGUSR1, SIG_IGN);
      ::signal(SIGUSR2, SIG_IGN);
    }
    if (background) ::setpriority(PRIO_PROCESS, 0, kBackgroundNice);
    return {};
  }
  // exec failed (the errno is already on its way to the parent): leave without running the
  // parent's atexit handlers and static destructors in this copy of it.
  template <class Launcher>
  void on_exec_error(Launcher&, const bp::filesystem::path&, const char* const*,
                     const bp::error_code&) {
    ::_exit(exit_code_of(ErrorKind::kCannotExecute));
  }
};

Error exec_error(const std::string& exe, const bp::error_code& ec) {
  // Out of descriptors: trainvisor's own limit (its pipes to the child), not the command's fault.
  if (ec.value() == EMFILE || ec.value() == ENFILE)
    return Error{ErrorKind::kOsError, "cannot start " + exe + ": " + ec.message() +
                                          " (trainvisor's own RLIMIT_NOFILE or the system's)"};
  const ErrorKind kind = ec.value() == ENOENT ? ErrorKind::kNotFound : ErrorKind::kCannotExecute;
  return Error{kind, "cannot execute " + exe + ": " + ec.message()};
}

boost::asio::io_context& fork_context() {  // Boost.Process wants one for notify_fork only
  static boost::asio::io_context ctx;
  return ctx;
}

struct NullFd {  // /dev/null for the standard streams a request leaves at -1
  int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  ~NullFd() {
    if (fd >= 0) ::close(fd);
  }
  int operator()(int wanted) const { return wanted >= 0 ? wanted : fd; }
};

// The clock of /proc/PID/stat's starttime: ticks of sysconf(_SC_CLK_TCK) since boot.
std::uint64_t boot_ticks_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  const auto hz = static_cast<std::uint64_t>(std::max(1L, ::sysconf(_SC_CLK_TCK)));
  return static_cast<std::uint64_t>(ts.tv_sec) * hz +
         static_cast<std::uint64_t>(ts.tv_nsec) / (1000000000ULL / hz);
}

// The children the process had when it was exec'd: /proc/self/task/PID/children (only the main
// thread exists yet; the kernel may lack the file: then only the start time tells them apart).
std::set<pid_t> children_now() {
  std::set<pid_t> kids;
  const auto pid = std::to_string(::getpid());
  const auto list = read_regular_file("/proc/" + pid + "/task/" + pid + "/children", kSmallFileCap);
  if (!list) return kids;
  for (std::string_view rest = *list; !rest.empty();) {
    pid_t kid = 0;
    const auto [next, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kid);
    if (ec != std::errc()) break;
    if (kid > 0) kids.insert(kid);
    rest.remove_prefix(static_cast<size_t>(next - rest.data()));
    if (!rest.empty()) rest.remove_prefix(1);
  }
  return kids;
}

}  // namespace

Init::Init()
    : pid1_(::getpid() == 1), started_ticks_(boot_ticks_now()), inherited_(children_now()) {
  if (g_init) std::abort();  // one per process
  if (::getrlimit(RLIMIT_NOFILE, &g_start_nofile) != 0) g_start_nofile = {};
  ::signal(SIGCHLD, SIG_DFL);  // never SIG_IGN: that would reap children behind our back
  ::signal(SIGPIPE, SIG_IGN);  // a closed socket or pipe is an error code, not a death
  const sigset_t set = owned_signal_set();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (!pid1_ && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    spdlog::warn("cannot become child subreaper: orphaned grandchildren will not be reaped here");
  g_init = this;
  thread_ = std::thread([this] { loop(); });
}

Init::~Init() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  ::pthread_kill(thread_.native_handle(), SIGCHLD);  // wakes sigwaitinfo
  thread_.join();
  g_init = nullptr;
}

Init& Init::instance() {
  if (!g_init) {
    std::fprintf(stderr, "trainvisor: internal error: no Init object\n");
    std::abort();
  }
  return *g_init;
}

void Init::loop() {
  const sigset_t set = owned_signal_set();
  for (;;) {
    siginfo_t info{};
    const int sig = ::sigwaitinfo(&set, &info);
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (sig == SIGCHLD)
      reap();
    else if (sig > 0)
      on_signal(sig);
  }
}

void Init::reap() {
  std::vector<std::pair<OnExit, std::pair<pid_t, int>>> ended;
  {
    std::lock_guard lock(mu_);
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid < 0 && errno == EINTR) continue;
      if (pid <= 0) break;  // 0: children still running; ECHILD: none left
      auto it = children_.find(pid);
      if (it == children_.end()) continue;  // an orphan: reaped, nothing to report
      ended.emplace_back(std::move(it->second), std::make_pair(pid, status));
      children_.erase(it);
    }
  }
  for (auto& [fn, ps] : ended)
    if (fn) fn(ps.first, ps.second);
}

void Init::on_signal(int sig) {
  if (is_stop_signal(sig)) {  // never the stacks signal: it changes nothing
    int none = 0;
    stop_signal_.compare_exchange_strong(none, sig);
    stop_requested_ = true;
  }
  std::lock_guard route_lock(route_mu_);
  if (route_) return route_(sig);
  if (!is_stop_signal(sig)) {
    spdlog::debug("{} before any worker exists: ignored", signal_name(sig));
    return;
  }
  shutdown_now(sig);
}

int Init::pending_stop_signal() const {
  if (const int taken = stop_signal_.load()) return taken;
  sigset_t pending;
  if (::sigpending(&pending) != 0) return 0;
  for (int sig : {SIGTERM, SIGINT, SIGHUP})
    if (::sigismember(&pending, sig) == 1) return sig;
  return stop_signal_.load();  // taken meanwhile
}

void Init::shutdown_now(int sig) {
  std::string phase;
  std::vector<pid_t> pids;
  {
    std::lock_guard lock(mu_);
    phase = phase_;
    for (const auto& [pid, _] : children_) pids.push_back(pid);
  }
  spdlog::warn(
      "received SIG{} during {}: {}exiting {}", sigabbrev_np(sig), phase,
      pids.empty() ? "" : "killing " + std::to_string(pids.size()) + " child process(es), ",
      exit_code_of(ErrorKind::kStoppedBySignal, sig));
  for (pid_t pid : pids) ::kill(-pid, SIGKILL);
  flush_logs();
  ::_exit(exit_code_of(ErrorKind::kStoppedBySignal, sig));
}

Result<pid_t> Init::spawn(const SpawnRequest& req, OnExit on_exit) {
  std::vector<std::string> args(req.argv.begin() + (req.argv.empty() ? 0 : 1), req.argv.end());
  const NullFd null;
  bp::error_code ec;
  bp::posix::default_launcher launcher;
  std::lock_guard lock(mu_);  // no waitpid between the fork and the registration below
  auto proc =
      launcher(fork_context().get_executor(), ec, bp::filesystem::path(req.executable), args,
               bp::process_stdio{null(req.stdin_fd), null(req.stdout_fd), null(req.stderr_fd)},
               bp::process_environment(req.env.to_envp()),
               ChildSetup{::getpid(), g_start_nofile, req.ignore_user_signals, req.background});
  if (ec) return exec_error(req.executable, ec);
  const pid_t pid = proc.id();
  ::setpgid(pid, pid);  // also here, so the group exists before anyone signals it
  proc.detach();        // Init reaps, never Boost.Process (boostorg/process#187)
  children_.emplace(pid, std::move(on_exit));
  return pid;
}

Init::Route Init::route_signals(OnSignal fn) {
  std::lock_guard lock(route_mu_);
  route_ = std::move(fn);
  return Route(this);
}

Init::Route::~Route() {
  if (!init_) return;
  std::lock_guard lock(init_->route_mu_);
  init_->route_ = nullptr;
}

int Init::wait_for_stop_signal(const std::function<void()>& start) {
  std::mutex mu;
  std::condition_variable cv;
  int stop = 0;
  Route route = route_signals([&](int sig) {
    if (!is_stop_signal(sig)) return;
    {
      std::lock_guard lock(mu);
      if (stop == 0) stop = sig;
    }
    cv.notify_one();
  });
  if (start) start();
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return stop != 0; });
  const int sig = stop;
  lock.unlock();  // the route runs under route_mu_ and takes mu: never both held here
  // The command is ending now: a later stop signal changes nothing. timeout(1) sends its signal
  // to the process and again to its process group, and the second one, arriving once the first
  // was taken, would otherwise find no route and end a clean stop with 128+N.
  {
    std::lock_guard route_lock(route_mu_);
    route_ = [](int) {};
  }
  route.init_ = nullptr;  // leave the quiet route in place
  return sig;
}

void Init::set_phase(std::string phase) {
  std::lock_guard lock(mu_);
  phase_ = std::move(phase);
}

size_t Init::live_children() const {
  std::lock_guard lock(mu_);
  return children_.size();
}

std::set<pid_t> Init::own_children() const {
  std::set<pid_t> own = inherited_;
  std::lock_guard lock(mu_);
  for (const auto& [pid, _] : children_) own.insert(pid);
  return own;
}

}  // namespace tv
