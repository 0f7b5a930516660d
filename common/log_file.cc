#include "common/log_file.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/own_dir.h"

namespace tv {
namespace {
constexpr std::size_t kFlushAt = 64 * 1024;
}

LogFile::~LogFile() {
  flush();
  if (fd_ >= 0) ::close(fd_);
}

bool LogFile::open(int dir, const std::string& name, const std::string& path) {
  path_ = path;
  std::string why;
  fd_ = open_own_append_file(dir, name, &why);
  if (fd_ < 0) {
    failed_ = true;
    spdlog::warn("log file {}: {}; its lines are not written there", path_, why);
    return false;
  }
  return true;
}

void LogFile::append(std::string_view bytes) {
  if (fd_ < 0 || failed_) return;
  buf_.append(bytes);
  if (buf_.size() >= kFlushAt) flush();
}

void LogFile::flush() {
  std::size_t done = 0;
  while (fd_ >= 0 && !failed_ && done < buf_.size()) {
    const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail("write failed", n < 0 ? errno : ENOSPC);
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  buf_.clear();
}

void LogFile::fail(const char* what, int err) {
  failed_ = true;
  spdlog::warn("log file {}: {} ({}); its later lines are dropped", path_, what,
               std::strerror(err));
}

}  // namespace tv
