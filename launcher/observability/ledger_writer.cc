#include "launcher/observability/ledger_writer.h"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "launcher/observability/ledger_marks.h"

namespace tv {

// Under `mutex` except `file`, which only the writing thread touches once it runs.
struct LedgerWriter::Shared {
  explicit Shared(LedgerFile f)
      : file(std::move(f)), prior(file.prior()), marks(file.marks()), index(file.index()) {}
  LedgerFile file;
  std::mutex mutex;
  std::condition_variable wake;  // a record to write, or the end
  std::condition_variable idle;  // nothing queued, nothing being written
  std::optional<ContainerRecord> next;
  std::vector<PoisonMark> new_marks;
  bool writing = false;
  bool ending = false;
  Ledger prior;
  std::vector<PoisonMark> marks;
  int index;
};

LedgerWriter::LedgerWriter(LedgerFile file)
    : path_(file.path()), s_(std::make_shared<Shared>(std::move(file))) {
  std::thread([s = s_] { run(s); }).detach();
}

LedgerWriter::~LedgerWriter() {
  std::lock_guard lock(s_->mutex);
  s_->ending = true;
  s_->wake.notify_all();
}

int LedgerWriter::index() const {
  std::lock_guard lock(s_->mutex);
  return s_->index;
}

Ledger LedgerWriter::prior() const {
  std::lock_guard lock(s_->mutex);
  return s_->prior;
}

std::vector<PoisonMark> LedgerWriter::marks() const {
  std::lock_guard lock(s_->mutex);
  return s_->marks;
}

void LedgerWriter::mark(PoisonMark m) {
  std::lock_guard lock(s_->mutex);
  add_mark(s_->marks, m);
  s_->new_marks.push_back(std::move(m));
}

void LedgerWriter::write(ContainerRecord current) {
  std::lock_guard lock(s_->mutex);
  s_->next = std::move(current);
  s_->wake.notify_all();
}

bool LedgerWriter::finish(ContainerRecord current, std::chrono::milliseconds deadline) {
  std::unique_lock lock(s_->mutex);
  s_->next = std::move(current);
  s_->ending = true;
  s_->wake.notify_all();
  if (s_->idle.wait_for(lock, deadline, [this] { return !s_->next && !s_->writing; })) return true;
  spdlog::warn(
      "job ledger {}: its last write has not finished {} ms after the run's end; exiting without "
      "it (a slow or hung file system?)",
      path_, deadline.count());
  return false;
}

bool LedgerWriter::wait_idle(std::chrono::milliseconds deadline) const {
  std::unique_lock lock(s_->mutex);
  return s_->idle.wait_for(lock, deadline, [this] { return !s_->next && !s_->writing; });
}

void LedgerWriter::run(const std::shared_ptr<Shared>& sp) {
  Shared& s = *sp;
  std::unique_lock lock(s.mutex);
  for (;;) {
    s.wake.wait(lock, [&s] { return s.next || s.ending; });
    if (!s.next) return;
    ContainerRecord record = std::move(*s.next);
    s.next.reset();
    std::vector<PoisonMark> marks = std::move(s.new_marks);
    s.new_marks.clear();
    s.writing = true;
    lock.unlock();
    for (auto& m : marks) s.file.mark(std::move(m));
    s.file.write(record);  // reads the file again first: the other containers' records
    Ledger prior = s.file.prior();
    std::vector<PoisonMark> all = s.file.marks();
    const int index = s.file.index();
    lock.lock();
    s.prior = std::move(prior);
    s.marks = std::move(all);
    s.index = index;
    for (const auto& m : s.new_marks) add_mark(s.marks, m);  // marked meanwhile
    s.writing = false;
    if (!s.next) s.idle.notify_all();
  }
}

}  // namespace tv
