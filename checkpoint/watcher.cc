#include "checkpoint/watcher.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/watch_state.h"

namespace tv {
namespace {

constexpr std::uint32_t kMask =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_ONLYDIR;

// A checkpoint whose bytes are complete is looked at again this soon, to see it unchanged.
constexpr std::chrono::milliseconds kSecondLook{250};

// The inotify side: one fd, a watch per directory, close-after-write paths handed back.
class Inotify {
 public:
  Inotify() : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}
  ~Inotify() {
    if (fd_ >= 0) ::close(fd_);
  }
  Inotify(const Inotify&) = delete;
  Inotify& operator=(const Inotify&) = delete;
  int fd() const { return fd_; }

  void watch(const std::vector<std::string>& dirs) {
    for (const auto& d : dirs) {
      if (watched_.count(d)) continue;
      const int wd = ::inotify_add_watch(fd_, d.c_str(), kMask);
      if (wd < 0) {
        spdlog::debug("checkpoint watcher: no inotify watch on {}: {}", d, std::strerror(errno));
        continue;
      }
      watched_.insert(d);
      dirs_[wd] = d;
    }
  }

  // Drains pending events; returns the files closed after writing.
  std::vector<std::string> drain() {
    std::vector<std::string> closed;
    alignas(inotify_event) char buf[16384];
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        if (e->mask & IN_IGNORED) forget(e->wd);
        if ((e->mask & IN_CLOSE_WRITE) && e->len > 0 && dirs_.count(e->wd))
          closed.push_back(dirs_[e->wd] + "/" + e->name);
      }
    }
    return closed;
  }

 private:
  void forget(int wd) {
    watched_.erase(dirs_[wd]);
    dirs_.erase(wd);
  }
  int fd_;
  std::map<int, std::string> dirs_;
  std::set<std::string> watched_;
};

}  // namespace

// The thread's state. The callbacks run under `gate` and only while not `abandoned`: once stop()
// has left the thread behind, nothing it finds reaches the caller (whose loop may be gone).
struct CheckpointWatcher::Shared {
  std::string dir;
  std::string format;
  std::function<void(const CheckpointEvent&)> on_new;
  std::function<void(const Checkpoint&)> on_started;
  std::function<void(std::size_t, double)> on_first_scan;
  std::chrono::milliseconds poll_interval{};
  bool force_polling = false;
  std::atomic<bool> inotify_active{false};
  std::atomic<bool> stopping{false};  // set by stop(): a scan under way ends early
  int wake_fd = -1;                   // eventfd: stop() wakes the thread through it
  std::mutex gate;
  bool abandoned = false;
  bool finished = false;  // under gate: run() is over
  std::condition_variable finished_cv;

  ~Shared() {
    if (wake_fd >= 0) ::close(wake_fd);
  }
  // Runs `f` (a callback) unless the thread was left behind.
  template <class F>
  void tell(F&& f) {
    std::lock_guard lock(gate);
    if (!abandoned) f();
  }
};

CheckpointWatcher::CheckpointWatcher(std::string dir, std::string format,
                                     std::function<void(const CheckpointEvent&)> on_new,
                                     std::chrono::milliseconds poll_interval, bool force_polling)
    : dir_(std::move(dir)),
      format_(std::move(format)),
      on_new_(std::move(on_new)),
      poll_interval_(poll_interval),
      force_polling_(force_polling) {}

CheckpointWatcher::~CheckpointWatcher() { stop(); }

bool CheckpointWatcher::using_inotify() const { return shared_ && shared_->inotify_active.load(); }

void CheckpointWatcher::start() {
  if (thread_.joinable()) return;
  auto s = std::make_shared<Shared>();
  s->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wake_fd < 0) {
    spdlog::warn("checkpoint watcher: eventfd failed: {}; not watching", std::strerror(errno));
    return;
  }
  s->dir = dir_;
  s->format = format_;
  s->on_new = on_new_;
  s->on_started = on_started_;
  s->on_first_scan = on_first_scan_;
  s->poll_interval = poll_interval_;
  s->force_polling = force_polling_;
  shared_ = s;
  thread_ = std::thread([s] {
    run(s);
    std::lock_guard lock(s->gate);
    s->finished = true;
    s->finished_cv.notify_all();
  });
}

void CheckpointWatcher::stop() {
  if (!thread_.joinable()) return;
  Shared& s = *shared_;
  s.stopping = true;  // a scan under way (the walk, the pass over candidates) ends at once
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(s.wake_fd, &one, sizeof one);
  std::unique_lock lock(s.gate);
  if (s.finished_cv.wait_for(lock, kStopWait, [&s] { return s.finished; })) {
    lock.unlock();
    thread_.join();
  } else {
    // Inside a file call that does not return (a hung NFS directory): left behind, silenced.
    s.abandoned = true;
    lock.unlock();
    spdlog::warn(
        "checkpoint watcher: a file call under {} has not returned {} ms after the stop; the "
        "watcher is left behind (a hung file system?)",
        dir_, kStopWait.count());
    thread_.detach();
  }
  shared_.reset();
}

void CheckpointWatcher::run(const std::shared_ptr<Shared>& sp) {
  Shared& s = *sp;
  RealCheckpointFs fs(false);  // rescans beside training: one pass, no listing threads
  fs.set_stop(&s.stopping);
  WatchState state(s.dir, s.format);
  std::optional<Inotify> inotify;
  if (!s.force_polling) {
    inotify.emplace();
    if (inotify->fd() < 0) inotify.reset();
  }
  const auto began = std::chrono::steady_clock::now();
  try {
    state.baseline(fs);
  } catch (const std::exception& e) {
    spdlog::warn("checkpoint watcher: scanning {} failed: {}", s.dir, e.what());
  }
  if (s.on_first_scan && !s.stopping) {
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    s.tell([&] { s.on_first_scan(state.complete(), took); });
  }
  for (;;) {
    if (inotify) inotify->watch(state.directories());
    s.inotify_active = inotify.has_value();
    pollfd fds[2] = {{s.wake_fd, POLLIN, 0}, {inotify ? inotify->fd() : -1, POLLIN, 0}};
    const auto wait = state.settling() ? std::min(s.poll_interval, kSecondLook) : s.poll_interval;
    const int r = ::poll(fds, 2, static_cast<int>(wait.count()));
    if (r < 0 && errno != EINTR) break;
    if ((fds[0].revents & POLLIN) || s.stopping) break;
    if (inotify && (fds[1].revents & POLLIN)) {
      state.note_change();  // an event in any watched directory (or a lost queue): walk
      for (const auto& path : inotify->drain()) state.note_closed(fs, path);
    }
    try {
      for (const auto& event : state.scan(fs)) {
        const Checkpoint& c = event.checkpoint;
        spdlog::debug(
            "checkpoint: new {} ({} bytes, written in {:.3f} s, {:.3f} s after the previous)",
            c.path, c.bytes, event.write_seconds, event.since_previous_seconds);
        if (s.on_new) s.tell([&] { s.on_new(event); });
      }
      for (const auto& started : state.take_started())
        if (s.on_started) s.tell([&] { s.on_started(started); });
    } catch (const std::exception& e) {
      spdlog::warn("checkpoint watcher: scanning {} failed: {}", s.dir, e.what());
    }
  }
}

}  // namespace tv
