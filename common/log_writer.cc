#include "common/log_writer.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/own_dir.h"

namespace tv {
namespace {
constexpr std::size_t kChunk = 64u << 10;
constexpr std::size_t kProcessBudget = 32u << 20;  // every per-rank log file together

void warn_failed(LogWriter::File& f, const std::string& what) {
  f.failed = true;
  spdlog::warn("log file {}: {}; its later lines are dropped", f.path, what);
}
}  // namespace

LogWriter::LogWriter(std::size_t budget_bytes)
    : budget_(budget_bytes), thread_([this] { writer_loop(); }) {}

LogWriter::~LogWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();  // the thread ends once the queue is done
}

LogWriter::Handle LogWriter::open(int dir, const std::string& name, const std::string& path) {
  auto file = std::make_shared<File>();
  file->path = path;
  const int copy = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) {
    warn_failed(*file, std::string("cannot open (") + std::strerror(errno) + ")");
    return file;
  }
  push({Kind::kOpen, file, name, copy});
  return file;
}

LogWriter::Handle LogWriter::adopt(int fd, const std::string& path) {
  auto file = std::make_shared<File>();
  file->path = path;
  file->fd = fd;
  return file;
}

void LogWriter::push(Op op) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(op));
  }
  wake_.notify_one();
}

std::size_t LogWriter::write(const Handle& file, std::string_view bytes) {
  std::size_t taken = 0;
  {
    std::lock_guard lock(mu_);
    while (taken < bytes.size()) {
      Op* last = queue_.empty() ? nullptr : &queue_.back();
      if (!last || last->kind != Kind::kWrite || last->file != file ||
          last->data.size() == kChunk) {
        if (used_ + kChunk > budget_) break;  // the disk is behind: the rest is dropped
        used_ += kChunk;
        queue_.push_back({Kind::kWrite, file, {}, -1});
        queue_.back().data.reserve(kChunk);
        last = &queue_.back();
      }
      const std::size_t n = std::min(bytes.size() - taken, kChunk - last->data.size());
      last->data.append(bytes.substr(taken, n));
      taken += n;
    }
    pending_ += taken;
  }
  if (taken) wake_.notify_one();
  return taken;
}

void LogWriter::close(const Handle& file) { push({Kind::kClose, file, {}, -1}); }

bool LogWriter::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return drained_.wait_for(lock, timeout, [this] { return queue_.empty() && !busy_; });
}

std::size_t LogWriter::pending_bytes() const {
  std::lock_guard lock(mu_);
  return pending_;
}

// One operation at a time, taken off the queue first: producers keep appending to the last one.
void LogWriter::writer_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_
    Op op = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    perform(op);
    lock.lock();
    if (op.kind == Kind::kWrite) {
      used_ -= kChunk;
      pending_ -= op.data.size();
    }
    busy_ = false;
    if (queue_.empty()) drained_.notify_all();
  }
}

void LogWriter::perform(Op& op) {
  File& f = *op.file;
  switch (op.kind) {
    case Kind::kOpen: {
      std::string why;
      f.fd = open_own_append_file(op.dir, op.data, &why);
      ::close(op.dir);
      if (f.fd < 0) {
        f.failed = true;
        spdlog::warn("log file {}: {}; its lines are not written there", f.path, why);
      }
      return;
    }
    case Kind::kWrite: {
      std::size_t done = 0;
      while (f.fd >= 0 && !f.failed && done < op.data.size()) {
        const ssize_t n = ::write(f.fd, op.data.data() + done, op.data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
          warn_failed(f,
                      std::string("write failed (") + std::strerror(n < 0 ? errno : ENOSPC) + ")");
        else
          done += static_cast<std::size_t>(n);
      }
      return;
    }
    case Kind::kClose:
      if (f.fd >= 0) ::close(f.fd);
      f.fd = -1;
      return;
  }
}

// Leaked on purpose, as the output sinks: a worker's last bytes may still be queued at exit.
LogWriter& log_writer() {
  static LogWriter* writer = new LogWriter(kProcessBudget);
  return *writer;
}

}  // namespace tv
