// Init and ChildGroup against real child processes: each exit reaches the owner that started the
// child, orphans are reaped and dropped, routed signals reach the route, deadlines kill.
#include "common/init.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/children.h"

namespace tv {
namespace {

using namespace std::chrono_literals;

SpawnRequest sh(const std::string& script, int out_fd = -1) {
  return SpawnRequest{
      "/bin/sh", {"sh", "-c", script}, Environment{{"PATH", "/usr/bin:/bin"}}, -1, out_fd, -1};
}

struct Waiter {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<int> value;
  void set(int v) {
    {
      std::lock_guard lock(mu);
      value = v;
    }
    cv.notify_all();
  }
  std::optional<int> wait(std::chrono::seconds limit = 30s) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, limit, [&] { return value.has_value(); });
    return value;
  }
};

int zombie_children() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %d", &state, &ppid) == 2 && state == 'Z' &&
        ppid == ::getpid())
      ++n;
  }
  return n;
}

// Waits until `pid` is gone: reaped, not only exited (the events, not a time; 30 s guards against
// a hang only). Its pidfd turns readable once it has exited; then a child started after that is
// reported through Init, whose pass of waitpid(-1) reaps every zombie there is before it reports
// an exit, so `pid` has been reaped by then if Init reaps it at all.
bool reaped(pid_t pid) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // reaped already
  pollfd exit_event{fd, POLLIN, 0};
  int ready;
  while ((ready = ::poll(&exit_event, 1, 30'000)) < 0 && errno == EINTR) {
  }
  ::close(fd);
  if (ready != 1) return false;
  auto later = std::make_shared<Waiter>();
  if (!Init::instance().spawn(sh("exit 0"), [later](pid_t, int) { later->set(0); }).ok() ||
      !later->wait())
    return false;
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// What spdlog logs at any level while it lives; wait_for blocks until a message holds `text`.
class LogWatch final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  static std::shared_ptr<LogWatch> install() {
    auto sink = std::make_shared<LogWatch>();
    sink->old_ = spdlog::default_logger();
    auto logger = std::make_shared<spdlog::logger>("watch", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
    return sink;
  }
  void uninstall() { spdlog::set_default_logger(old_); }
  bool wait_for(const std::string& text, std::chrono::seconds limit = 30s) {
    std::unique_lock lock(seen_mu_);
    return cv_.wait_for(lock, limit, [&] {
      for (const auto& m : seen_)
        if (m.find(text) != std::string::npos) return true;
      return false;
    });
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    {
      std::lock_guard lock(seen_mu_);
      seen_.emplace_back(msg.payload.data(), msg.payload.size());
    }
    cv_.notify_all();
  }
  void flush_() override {}

 private:
  std::shared_ptr<spdlog::logger> old_;
  std::mutex seen_mu_;
  std::condition_variable cv_;
  std::vector<std::string> seen_;
};

class InitTest : public ::testing::Test {
 protected:
  Init init;
};

TEST_F(InitTest, EachExitReachesTheOwnerThatStartedTheChild) {
  Waiter a, b;
  auto pa = init.spawn(sh("exit 7"), [&](pid_t, int st) { a.set(exit_code_from_status(st)); });
  auto pb = init.spawn(sh("kill -9 $$"), [&](pid_t, int st) { b.set(exit_code_from_status(st)); });
  ASSERT_TRUE(pa.ok() && pb.ok());
  EXPECT_EQ(a.wait(), 7);
  EXPECT_EQ(b.wait(), 128 + SIGKILL);
  EXPECT_EQ(init.live_children(), 0u);
}

TEST_F(InitTest, ExecErrorsAre127And126) {
  auto missing = init.spawn(SpawnRequest{"/no/such/program", {"x"}, {}, -1, -1, -1}, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().exit_code(), 127);
  auto dir = init.spawn(SpawnRequest{"/tmp", {"x"}, {}, -1, -1, -1}, nullptr);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().exit_code(), 126);
}

TEST_F(InitTest, OrphansComeBackAndAreReapedWithoutAnOwner) {
  int subreaper = 0;
  ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper);
  EXPECT_EQ(subreaper, 1);
  Waiter w;
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  // The sleeps outlive their parent: they are re-parented to us and must not stay zombies. Their
  // pids come back on the pipe; each is waited for until it is reaped (the event, not a time).
  ASSERT_TRUE(init.spawn(sh("sleep 0.2 & echo $!; sleep 0.2 & echo $!; exit 0", fds[1]),
                         [&](pid_t, int) { w.set(0); })
                  .ok());
  ::close(fds[1]);
  ASSERT_TRUE(w.wait().has_value());
  std::string pids;
  char buf[128];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) pids.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  std::istringstream in(pids);
  int orphans = 0;
  for (pid_t pid; in >> pid; ++orphans) EXPECT_TRUE(reaped(pid)) << pid;
  EXPECT_EQ(orphans, 2) << pids;
  EXPECT_EQ(zombie_children(), 0);
}

TEST_F(InitTest, RoutedSignalsGoToTheRouteOnly) {
  Waiter got;
  {
    auto route = init.route_signals([&](int sig) { got.set(sig); });
    ::kill(::getpid(), SIGUSR1);
    EXPECT_EQ(got.wait(), SIGUSR1);
  }
  // Without a route USR1/USR2 are dropped (TERM/INT/HUP would end the process): Init says so,
  // and this process is still here to see it.
  auto log = LogWatch::install();
  ::kill(::getpid(), SIGUSR2);
  EXPECT_TRUE(log->wait_for("SIGUSR2 before any worker exists: ignored"));
  log->uninstall();
}

// Only TERM/INT/HUP stop the job: the stacks signal, USR1 and USR2 reach the route and leave
// stop_requested alone (issue 38: one `trainvisor stacks` kept every later generation from
// starting), and a child's exit is reaped, never routed.
TEST_F(InitTest, OnlyTermIntHupRequestAStop) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> got;
  auto route = init.route_signals([&](int sig) {
    {
      std::lock_guard lock(mu);
      got.push_back(sig);
    }
    cv.notify_all();
  });
  Waiter exited;
  ASSERT_TRUE(init.spawn(sh("exit 0"), [&](pid_t, int) { exited.set(0); }).ok());
  ASSERT_TRUE(exited.wait().has_value());
  for (int sig : {stacks_signal(), SIGUSR1, SIGUSR2}) {
    ::kill(::getpid(), sig);
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 30s, [&] { return !got.empty() && got.back() == sig; }));
    EXPECT_FALSE(init.stop_requested().load()) << sigabbrev_np(sig);
  }
  ::kill(::getpid(), SIGHUP);
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 30s, [&] { return got.back() == SIGHUP; }));
  EXPECT_TRUE(init.stop_requested().load());
  EXPECT_EQ(got, (std::vector<int>{stacks_signal(), SIGUSR1, SIGUSR2, SIGHUP}));  // no SIGCHLD
}

TEST_F(InitTest, ChildrenStartWithAnEmptySignalMaskAndTheirOwnGroup) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ChildGroup group;
  ASSERT_TRUE(group
                  .spawn(sh("grep SigBlk /proc/self/status; echo pgid=$(($(cut -d' ' -f5 "
                            "/proc/self/stat) == $$))",
                            fds[1]))
                  .ok());
  ::close(fds[1]);
  auto ends = group.wait_all(ChildGroup::Clock::now() + 30s);
  char buf[512] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof(buf) - 1);
  ::close(fds[0]);
  ASSERT_GT(n, 0);
  EXPECT_EQ(ends[0].code, 0);
  EXPECT_NE(std::string(buf).find("SigBlk:\t0000000000000000"), std::string::npos) << buf;
  EXPECT_NE(std::string(buf).find("pgid=1"), std::string::npos) << buf;
}

TEST_F(InitTest, ChildGroupKillsWhatRunsPastTheDeadline) {
  ChildGroup group;
  const auto quick = group.spawn(sh("exit 3"));
  ASSERT_TRUE(quick.ok());
  // It has ended before the deadline is set (reaped: its end is the group's), however slowly a
  // busy machine started it.
  ASSERT_TRUE(reaped(*quick));
  ASSERT_TRUE(group.spawn(sh("sleep 60")).ok());
  const auto t0 = ChildGroup::Clock::now();
  auto ends = group.wait_all(t0 + 300ms);
  EXPECT_LT(ChildGroup::Clock::now() - t0, 20s);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_FALSE(ends[0].timed_out);
  EXPECT_EQ(ends[0].code, 3);
  EXPECT_TRUE(ends[1].timed_out);
  EXPECT_EQ(ends[1].code, 128 + SIGKILL);
}

TEST_F(InitTest, ADestroyedChildGroupLeavesNothingRunning) {
  pid_t pid = -1;
  {
    ChildGroup group;
    auto p = group.spawn(sh("sleep 60"));
    ASSERT_TRUE(p.ok());
    pid = *p;
  }
  EXPECT_TRUE(reaped(pid));
}

TEST(ProcessTest, OnePathLookupWith127And126) {
  const Environment env{{"PATH", "/no/such/dir:/usr/bin:/bin"}};
  EXPECT_TRUE(find_executable("sh", env).ok());
  EXPECT_EQ(find_executable("no-such-command-xyz", env).error().exit_code(), 127);
  EXPECT_EQ(find_executable("/tmp", env).error().exit_code(), 126);
  EXPECT_EQ(find_executable("", env).error().exit_code(), 127);
}

}  // namespace
}  // namespace tv
