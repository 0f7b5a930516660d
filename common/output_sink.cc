#include "common/output_sink.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log_writer.h"

namespace tv {
namespace {

constexpr std::size_t kMaxBlock = 256u << 10;
constexpr std::size_t kSharedBudget = 64u << 20;  // stdout and stderr together
constexpr std::size_t kFloorEach = 8u << 20;      // what each may always use of it

std::size_t page_size() {
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

std::size_t round_to_pages(std::size_t n) {
  const std::size_t p = page_size();
  return (n + p - 1) / p * p;
}

// An eighth of the budget, 256 KiB at most: a small budget still holds several blocks.
std::size_t block_size_for(std::size_t budget) {
  return round_to_pages(std::clamp(budget / 8, page_size(), kMaxBlock));
}

}  // namespace

bool OutputBudget::take(int slot, std::size_t n) {
  std::lock_guard lock(mu_);
  const std::size_t other = std::max(used_[1 - slot], floor_);
  if (other > total_ || used_[slot] + n > total_ - other) return false;
  used_[slot] += n;
  return true;
}

void OutputBudget::give(int slot, std::size_t n) {
  std::lock_guard lock(mu_);
  used_[slot] -= std::min(n, used_[slot]);
}

OutputSink::OutputSink(int fd, std::size_t capacity_bytes)
    : fd_(fd),
      own_budget_(capacity_bytes, 0),
      budget_(own_budget_),
      slot_(0),
      block_size_(block_size_for(capacity_bytes)),
      writer_([this] { writer_loop(); }) {}

OutputSink::OutputSink(int fd, OutputBudget& budget, int slot)
    : fd_(fd),
      own_budget_(0, 0),
      budget_(budget),
      slot_(slot),
      block_size_(block_size_for(budget.total())),
      writer_([this] { writer_loop(); }) {}

OutputSink::~OutputSink() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
  for (auto& b : queue_) ::munmap(b.data, b.size);
  if (spare_.data) ::munmap(spare_.data, spare_.size);
}

// Under mu_: a block with room for `need` bytes at the end of the queue, within the budget.
bool OutputSink::take_block(std::size_t need) {
  const std::size_t size = need <= block_size_ ? block_size_ : round_to_pages(need);
  if (!budget_.take(slot_, size)) return false;
  if (size == block_size_ && spare_.data) {
    queue_.push_back({spare_.data, spare_.size, 0});
    spare_ = {};
    return true;
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    budget_.give(slot_, size);
    return false;
  }
  queue_.push_back({static_cast<char*>(p), size, 0});
  return true;
}

// Under mu_: a written block back to the budget, kept as the spare or unmapped.
void OutputSink::release(OutputBlock& b) {
  budget_.give(slot_, b.size);
  if (!spare_.data && b.size == block_size_)
    spare_ = b;
  else
    ::munmap(b.data, b.size);
  b = {};
}

void OutputSink::push(std::string_view prefix, std::string_view line) {
  const bool add_newline = line.empty() || line.back() != '\n';
  const std::size_t n = prefix.size() + line.size() + (add_newline ? 1 : 0);
  {
    std::lock_guard lock(mu_);
    if ((queue_.empty() || queue_.back().room() < n) && !take_block(n)) {
      ++dropped_;
      // The first drop wakes the writer: with every block in its batch the queue may stay empty,
      // and the notice must still be written once the batch is.
      if (dropped_unreported_++ == 0) wake_.notify_one();
      return;
    }
    OutputBlock& b = queue_.back();
    // An empty string_view may hold a null pointer, which memcpy must never get (even for 0).
    if (!prefix.empty()) std::memcpy(b.data + b.used, prefix.data(), prefix.size());
    if (!line.empty()) std::memcpy(b.data + b.used + prefix.size(), line.data(), line.size());
    b.used += n;
    if (add_newline) b.data[b.used - 1] = '\n';
  }
  wake_.notify_one();
}

bool OutputSink::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return drained_.wait_for(lock, timeout,
                           [this] { return queue_.empty() && !writing_ && !dropped_unreported_; });
}

std::size_t OutputSink::dropped_lines() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void OutputSink::writer_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty() || dropped_unreported_; });
    if (queue_.empty() && !dropped_unreported_ && stop_) return;
    // Take every queued block (producers start a new one); each goes back once written.
    std::deque<OutputBlock> batch;
    batch.swap(queue_);
    std::string notice;
    if (dropped_unreported_) {
      notice = "[trainvisor] ";
      notice += std::to_string(dropped_unreported_);
      notice += " worker output lines dropped: the output reader is slower than the workers\n";
      dropped_unreported_ = 0;
    }
    writing_ = true;
    lock.unlock();
    for (auto& b : batch) {
      write_all(b.data, b.used);
      lock.lock();
      release(b);
      lock.unlock();
    }
    write_all(notice.data(), notice.size());
    lock.lock();
    writing_ = false;
    if (queue_.empty() && !dropped_unreported_) drained_.notify_all();
  }
}

void OutputSink::write_all(const char* data, std::size_t size) {
  std::size_t off = 0;
  while (off < size) {
    ssize_t n = ::write(fd_, data + off, size - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // reader gone (EPIPE) or fd closed: nothing useful to do
    off += static_cast<std::size_t>(n);
  }
}

// Leaked on purpose: they must outlive every static that might log at exit.
static OutputBudget& shared_budget() {
  static OutputBudget* budget = new OutputBudget(kSharedBudget, kFloorEach);
  return *budget;
}

OutputSink& stdout_sink() {
  static OutputSink* sink = new OutputSink(STDOUT_FILENO, shared_budget(), 0);
  return *sink;
}

OutputSink& stderr_sink() {
  static OutputSink* sink = new OutputSink(STDERR_FILENO, shared_budget(), 1);
  return *sink;
}

void start_output_sinks() {
  stdout_sink();
  stderr_sink();
  log_writer();
}

}  // namespace tv
