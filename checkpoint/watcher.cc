#include "checkpoint/watcher.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
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

CheckpointWatcher::CheckpointWatcher(std::string dir, std::string format,
                                     std::function<void(const CheckpointEvent&)> on_new,
                                     std::chrono::milliseconds poll_interval, bool force_polling)
    : dir_(std::move(dir)),
      format_(std::move(format)),
      on_new_(std::move(on_new)),
      poll_interval_(poll_interval),
      force_polling_(force_polling) {}

CheckpointWatcher::~CheckpointWatcher() { stop(); }

void CheckpointWatcher::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    spdlog::warn("checkpoint watcher: eventfd failed: {}; not watching", std::strerror(errno));
    return;
  }
  thread_ = std::thread([this] { run(); });
}

void CheckpointWatcher::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;  // a scan under way (the walk, the pass over candidates) ends at once
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  thread_.join();
  ::close(wake_fd_);
  wake_fd_ = -1;
}

void CheckpointWatcher::run() {
  RealCheckpointFs fs(false);  // rescans beside training: one pass, no listing threads
  fs.set_stop(&stopping_);
  WatchState state(dir_, format_);
  std::optional<Inotify> inotify;
  if (!force_polling_) {
    inotify.emplace();
    if (inotify->fd() < 0) inotify.reset();
  }
  const auto began = std::chrono::steady_clock::now();
  try {
    state.baseline(fs);
  } catch (const std::exception& e) {
    spdlog::warn("checkpoint watcher: scanning {} failed: {}", dir_, e.what());
  }
  if (on_first_scan_ && !stopping_)
    on_first_scan_(state.complete(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
  for (;;) {
    if (inotify) inotify->watch(state.directories());
    inotify_active_ = inotify.has_value();
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {inotify ? inotify->fd() : -1, POLLIN, 0}};
    const auto wait = state.settling() ? std::min(poll_interval_, kSecondLook) : poll_interval_;
    const int r = ::poll(fds, 2, static_cast<int>(wait.count()));
    if (r < 0 && errno != EINTR) break;
    if ((fds[0].revents & POLLIN) || stopping_) break;
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
        if (on_new_) on_new_(event);
      }
      for (const auto& started : state.take_started())
        if (on_started_) on_started_(started);
    } catch (const std::exception& e) {
      spdlog::warn("checkpoint watcher: scanning {} failed: {}", dir_, e.what());
    }
  }
}

}  // namespace tv
