// OutputSink: the one owner of a process output descriptor (stdout or stderr).
//
// Producers (the event loop forwarding worker lines, spdlog) push whole lines; a writer thread
// writes them, a block of lines per write(2), so a line is never split or interleaved with
// another (a reader that takes a partial write aside). push() never blocks: when the reader (a
// terminal, a log shipper) is slower than the workers and the memory of the sink's budget is in
// use, new lines are dropped and counted, and a notice with the count is written once the queue
// drains. A worker is therefore never slowed down by its launcher's output.
//
// Memory: lines are copied into blocks (OutputBlocks: mmap'd, 256 KiB, or one of a line's own
// size for a longer one), and the budget counts whole blocks, queued and being written alike,
// so what the budget allows is what the sink holds in RSS; a block is unmapped as soon as it is
// written (one spare per sink is kept, outside the budget). The two process-wide sinks share one
// budget of 64 MiB, of which each may always use 8 MiB (a stalled stdout never drops
// trainvisor's own log lines on a stderr that is read).
//
// Thread-safe. The two process-wide sinks live for the whole process (never destroyed).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tv {

// The bytes several sinks may hold together: sink `slot` (0 or 1) may take n more bytes while
// its own use plus n plus the other's use (at least `floor_each`) stays within `total`.
class OutputBudget {
 public:
  OutputBudget(std::size_t total, std::size_t floor_each) : total_(total), floor_(floor_each) {}
  bool take(int slot, std::size_t n);
  void give(int slot, std::size_t n);
  std::size_t total() const { return total_; }

 private:
  std::mutex mu_;
  const std::size_t total_;
  const std::size_t floor_;
  std::size_t used_[2] = {0, 0};
};

// A run of bytes in its own anonymous mapping: pages count in RSS once written, all of them go
// back to the system when it is released.
struct OutputBlock {
  char* data = nullptr;
  std::size_t size = 0;  // mapped bytes (a multiple of the page size)
  std::size_t used = 0;
  std::size_t room() const { return size - used; }
};

class OutputSink {
 public:
  // A sink with a budget of its own of `capacity_bytes`.
  OutputSink(int fd, std::size_t capacity_bytes);
  // A sink drawing on `budget` (which outlives it) as its `slot`.
  OutputSink(int fd, OutputBudget& budget, int slot);
  ~OutputSink();
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  // One line: `prefix` then `line`; a '\n' is added when `line` does not end with one. Never
  // blocks on the descriptor.
  void push(std::string_view line) { push(std::string_view(), line); }
  void push(std::string_view prefix, std::string_view line);
  // Waits until everything queued is written, at most `timeout`. Returns true when drained.
  bool flush(std::chrono::milliseconds timeout);
  std::size_t dropped_lines() const;

 private:
  bool take_block(std::size_t need);
  void release(OutputBlock& b);
  void writer_loop();
  void write_all(const char* data, std::size_t size);

  const int fd_;
  OutputBudget own_budget_;  // used when no shared budget is given
  OutputBudget& budget_;
  const int slot_;
  const std::size_t block_size_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<OutputBlock> queue_;  // the last one takes new lines
  OutputBlock spare_;              // one written block kept for the next lines
  std::size_t dropped_ = 0;
  std::size_t dropped_unreported_ = 0;
  bool writing_ = false;
  bool stop_ = false;
  std::thread writer_;
};

OutputSink& stdout_sink();
OutputSink& stderr_sink();
// Makes both sinks and the per-rank log files' writer (common/log_writer.h), and so their
// threads, now: main calls it before anything else, so no
// thread of trainvisor's is started once a worker could have spent the pids limit (a thread
// that cannot start then would be std::terminate in PID 1).
void start_output_sinks();

}  // namespace tv
