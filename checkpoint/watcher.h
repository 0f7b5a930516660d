// CheckpointWatcher: reports each new complete checkpoint under a directory (path, size, seconds
// it took to write, seconds since the previous one) from its own thread. It uses inotify where it
// works and, always, a polling rescan every `poll_interval`, because on Lustre (FSx), NFS and EFS
// inotify does not see writes made by other nodes. Checkpoints already complete at start() are
// not reported; new ones are logged at debug level only (the caller logs what it wants from
// on_new). Never blocks the caller: start() and stop() return promptly (stop joins the
// thread, which wakes at once; a thread still inside a file call kStopWait later, a hung NFS
// directory, is left behind: no callback runs after stop() returns, and it ends with the process).
// `on_new` runs on the watcher's thread; post it into your own loop.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "checkpoint/resume.h"

namespace tv {

struct CheckpointEvent {
  Checkpoint checkpoint;
  double write_seconds;           // -1 when unknown
  double since_previous_seconds;  // -1 if first
};

// How long stop() waits for the thread to finish a file call before leaving it behind.
inline constexpr std::chrono::milliseconds kStopWait{500};

class CheckpointWatcher {
 public:
  CheckpointWatcher(std::string dir, std::string format,
                    std::function<void(const CheckpointEvent&)> on_new,
                    std::chrono::milliseconds poll_interval = std::chrono::seconds(2),
                    bool force_polling = false);
  ~CheckpointWatcher();
  CheckpointWatcher(const CheckpointWatcher&) = delete;
  CheckpointWatcher& operator=(const CheckpointWatcher&) = delete;

  // Before start(): called (on the watcher's thread) once for each checkpoint seen being written,
  // new or rewritten, before it is complete; --hang-timeout auto excuses the save while it runs.
  void on_save_started(std::function<void(const Checkpoint&)> f) { on_started_ = std::move(f); }
  // Before start(): called (on the watcher's thread) once its first scan is over, with how many
  // checkpoints it found complete there already (never reported) and the scan's seconds.
  void on_first_scan(std::function<void(std::size_t complete, double seconds)> f) {
    on_first_scan_ = std::move(f);
  }
  void start();
  void stop();  // joins the thread (or leaves it behind after kStopWait); idempotent
  // True once the thread is watching with inotify (false: polling only).
  bool using_inotify() const;

 private:
  struct Shared;  // what the thread uses: it may outlive this object (left behind)
  static void run(const std::shared_ptr<Shared>& s);

  std::string dir_;
  std::string format_;
  std::function<void(const CheckpointEvent&)> on_new_;
  std::function<void(const Checkpoint&)> on_started_;
  std::function<void(std::size_t, double)> on_first_scan_;
  std::chrono::milliseconds poll_interval_;
  bool force_polling_;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace tv
