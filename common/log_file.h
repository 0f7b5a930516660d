// LogFile: a file trainvisor appends lines to (a worker's per-rank stdout.log / stderr.log).
//
// Opened with O_APPEND | O_NONBLOCK | O_NOFOLLOW relative to its directory's descriptor (a
// directory trainvisor made, common/own_dir.h) and checked on the opened descriptor to be a regular
// file with no other hard link, so a FIFO, a device or a planted link in its place cannot block the
// event loop or be written through (it is refused). The worker's bytes are kept as written (no
// line is split or completed), buffered and written with write(2); the first write that fails
// (read-only file system, disk full) is logged once, plainly, with the path and the reason, and the
// file's later lines are dropped. Not thread-safe: one owner (the WorkerProcess).
#pragma once

#include <string>
#include <string_view>

namespace tv {

class LogFile {
 public:
  LogFile() = default;
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // Opens (creating) `name` in the directory `dir` for appending; `path` is what messages show.
  // False, with one log line saying why, when it cannot.
  bool open(int dir, const std::string& name, const std::string& path);
  bool is_open() const { return fd_ >= 0; }
  // The bytes as the worker wrote them.
  void append(std::string_view bytes);
  void flush();
  // True once a write failed (the failure has been logged).
  bool failed() const { return failed_; }

 private:
  void fail(const char* what, int err);

  std::string path_;
  std::string buf_;
  int fd_ = -1;
  bool failed_ = false;
};

}  // namespace tv
