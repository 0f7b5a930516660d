#include "common/output_sink.h"

#include <unistd.h>

#include <cerrno>

namespace tv {

OutputSink::OutputSink(int fd, std::size_t capacity_bytes)
    : fd_(fd), capacity_(capacity_bytes), writer_([this] { writer_loop(); }) {}

OutputSink::~OutputSink() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void OutputSink::push(std::string line) {
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  {
    std::lock_guard lock(mu_);
    if (queued_bytes_ + line.size() > capacity_ && !queue_.empty()) {
      ++dropped_;
      ++dropped_unreported_;
      return;
    }
    queued_bytes_ += line.size();
    queue_.push_back(std::move(line));
  }
  wake_.notify_one();
}

bool OutputSink::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return drained_.wait_for(lock, timeout, [this] { return queue_.empty() && !writing_; });
}

std::size_t OutputSink::dropped_lines() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void OutputSink::writer_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty() && stop_) return;
    // Take every queued line: one write(2) per batch, lines stay whole.
    std::string batch;
    for (const auto& l : queue_) batch += l;
    queue_.clear();
    queued_bytes_ = 0;
    if (dropped_unreported_) {
      batch += "[trainvisor] " + std::to_string(dropped_unreported_) +
               " worker output lines dropped: the output reader is slower than the workers\n";
      dropped_unreported_ = 0;
    }
    writing_ = true;
    lock.unlock();
    write_all(batch);
    lock.lock();
    writing_ = false;
    if (queue_.empty()) drained_.notify_all();
  }
}

void OutputSink::write_all(const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd_, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // reader gone (EPIPE) or fd closed: nothing useful to do
    off += static_cast<std::size_t>(n);
  }
}

// Leaked on purpose: they must outlive every static that might log at exit.
OutputSink& stdout_sink() {
  static OutputSink* sink = new OutputSink(STDOUT_FILENO, 64u << 20);
  return *sink;
}

OutputSink& stderr_sink() {
  static OutputSink* sink = new OutputSink(STDERR_FILENO, 64u << 20);
  return *sink;
}

void start_output_sinks() {
  stdout_sink();
  stderr_sink();
}

}  // namespace tv
