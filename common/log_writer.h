// LogWriter: the one thread that opens, writes and closes the per-rank log files
// (common/log_file.h), so a slow or hung log disk never holds up the thread that runs the event
// loop (heartbeats, /healthz, signals) and never blocks a worker.
//
// Producers (the event loop) queue bytes; they are copied into chunks of 64 KiB, each counted
// whole against one budget for every file together (32 MiB for the process-wide writer), queued
// and being written alike. When the budget is spent, write() takes no more bytes (the caller
// counts them as dropped) until the disk catches up: memory stays bounded whatever the disk does.
// A file's operations run in the order queued: open (openat relative to a copy of the
// directory's descriptor), its writes, close.
//
// Thread-safe. The process-wide writer lives for the whole process (never destroyed); its thread
// starts with the output sinks (start_output_sinks), before any worker.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tv {

class LogWriter {
 public:
  // One file's state: the descriptor and whether it failed are the writer thread's.
  struct File {
    std::string path;  // for messages
    int fd = -1;
    std::atomic<bool> failed{false};  // opening or a write failed (said once, on the thread)
  };
  using Handle = std::shared_ptr<File>;

  explicit LogWriter(std::size_t budget_bytes);
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // `name` in the directory `dir` (a copy of the descriptor is taken now), opened on the thread
  // with open_own_append_file (common/own_dir.h); a refusal is logged there, once.
  Handle open(int dir, const std::string& name, const std::string& path);
  // A descriptor already open (the writer closes it).
  Handle adopt(int fd, const std::string& path);
  // Queues the bytes, or the part of them the budget allows: returns how many were taken (the
  // first ones). Never blocks on the disk.
  std::size_t write(const Handle& file, std::string_view bytes);
  // After what was queued for it: the descriptor is closed (on the thread).
  void close(const Handle& file);
  // Waits until everything queued is done, at most `timeout`; true when it is.
  bool flush(std::chrono::milliseconds timeout);
  // Bytes queued and not yet written (what flush() would wait for).
  std::size_t pending_bytes() const;

 private:
  enum class Kind { kOpen, kWrite, kClose };
  struct Op {
    Kind kind;
    Handle file;
    std::string data;  // kWrite: bytes (a chunk reserved whole); kOpen: the name
    int dir = -1;      // kOpen: the copy of the directory's descriptor
  };
  void push(Op op);
  void writer_loop();
  void perform(Op& op);

  const std::size_t budget_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<Op> queue_;
  std::size_t used_ = 0;     // chunks' bytes, queued and being written
  std::size_t pending_ = 0;  // bytes to write, queued and being written
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

LogWriter& log_writer();

}  // namespace tv
