// LogFile: a file trainvisor appends a worker's output to (its per-rank stdout.log / stderr.log),
// through the LogWriter's thread (common/log_writer.h): the event loop never waits for the disk.
//
// Opened with O_APPEND | O_NONBLOCK | O_NOFOLLOW relative to its directory's descriptor (a
// directory trainvisor made, common/own_dir.h) and checked on the opened descriptor to be a regular
// file with no other hard link, so a FIFO, a device or a planted link in its place cannot block a
// thread or be written through (it is refused, said once). The worker's bytes are kept as written
// (no line is split or completed). When the disk is slower than the worker and the writer's
// budget is spent, bytes are dropped and counted: the first drop is said at once, the total at
// close(). The first write that fails (read-only file system, disk full) is logged once, plainly,
// with the path and the reason, and the file's later lines are dropped.
// Not thread-safe: one owner (the WorkerProcess).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/log_writer.h"

namespace tv {

class LogFile {
 public:
  explicit LogFile(LogWriter& writer = log_writer()) : writer_(writer) {}
  ~LogFile() { close(); }
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // Opens (creating) `name` in the directory `dir` for appending, on the writer's thread; `path`
  // is what messages show. A refusal is said there, once.
  void open(int dir, const std::string& name, const std::string& path);
  // A descriptor already open, owned from now on (tests).
  void adopt(int fd, const std::string& path);
  bool is_open() const { return file_ != nullptr; }
  // The bytes as the worker wrote them. Never waits for the disk.
  void append(std::string_view bytes);
  // The end of the stream: closed once what was queued is written; says what was dropped.
  void close();
  // True once opening or a write failed (the failure has been logged).
  bool failed() const { return file_ && file_->failed; }
  std::size_t dropped_bytes() const { return dropped_bytes_; }
  std::size_t dropped_lines() const { return dropped_lines_; }  // the newlines among them

 private:
  LogWriter& writer_;
  LogWriter::Handle file_;
  std::size_t dropped_bytes_ = 0;
  std::size_t dropped_lines_ = 0;
  bool closed_ = false;
};

}  // namespace tv
