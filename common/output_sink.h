// OutputSink: the one owner of a process output descriptor (stdout or stderr).
//
// Producers (the event loop forwarding worker lines, spdlog) push whole lines; a writer thread
// writes them with one write(2) per batch of complete lines, so a line is never split or
// interleaved with another. push() never blocks: when the reader (a terminal, a log shipper) is
// slower than the workers and more than `capacity` bytes are queued, new lines are dropped and
// counted, and a notice with the count is written once the queue drains. A worker is therefore
// never slowed down by its launcher's output.
//
// Thread-safe. The two process-wide sinks live for the whole process (never destroyed).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace tv {

class OutputSink {
 public:
  OutputSink(int fd, std::size_t capacity_bytes);
  ~OutputSink();
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  // `line` should end with '\n' (one is added when missing). Never blocks on the descriptor.
  void push(std::string line);
  // Waits until everything queued is written, at most `timeout`. Returns true when drained.
  bool flush(std::chrono::milliseconds timeout);
  std::size_t dropped_lines() const;

 private:
  void writer_loop();
  void write_all(const std::string& data);

  const int fd_;
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  std::size_t dropped_ = 0;
  std::size_t dropped_unreported_ = 0;
  bool writing_ = false;
  bool stop_ = false;
  std::thread writer_;
};

OutputSink& stdout_sink();
OutputSink& stderr_sink();
// Makes both sinks, and so their writer threads, now: main calls it before anything else, so no
// thread of trainvisor's is started once a worker could have spent the pids limit (a thread
// that cannot start then would be std::terminate in PID 1).
void start_output_sinks();

}  // namespace tv
