#include "common/log_file.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace tv {

void LogFile::open(int dir, const std::string& name, const std::string& path) {
  file_ = writer_.open(dir, name, path);
}

void LogFile::adopt(int fd, const std::string& path) { file_ = writer_.adopt(fd, path); }

void LogFile::append(std::string_view bytes) {
  if (!file_ || closed_ || file_->failed || bytes.empty()) return;
  const std::size_t taken = writer_.write(file_, bytes);
  if (taken == bytes.size()) return;
  const std::string_view lost = bytes.substr(taken);
  if (dropped_bytes_ == 0)
    spdlog::warn(
        "log file {}: the log disk is slower than the worker's output: its bytes are dropped "
        "(and counted) while {} MiB wait to be written",
        file_->path, writer_.pending_bytes() >> 20);
  dropped_bytes_ += lost.size();
  dropped_lines_ += static_cast<std::size_t>(std::count(lost.begin(), lost.end(), '\n'));
}

void LogFile::close() {
  if (!file_ || closed_) return;
  closed_ = true;
  writer_.close(file_);
  if (dropped_bytes_)
    spdlog::warn(
        "log file {}: {} bytes of the worker's output ({} lines) dropped: the log disk was slower "
        "than the worker",
        file_->path, dropped_bytes_, dropped_lines_);
}

}  // namespace tv
