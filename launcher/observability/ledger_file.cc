#include "launcher/observability/ledger_file.h"

#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/bounded_read.h"
#include "common/whole_file.h"

namespace tv {
namespace {

// "<path>: set aside as <path>.corrupt (<why>); the job's account starts again here".
void set_aside(const std::string& path, const std::string& why) {
  const std::string aside = path + ".corrupt";
  if (std::rename(path.c_str(), aside.c_str()) == 0) {
    spdlog::warn("job ledger {}: {}; set aside as {}; the job's account starts again here", path,
                 why, aside);
  } else {
    spdlog::warn("job ledger {}: {}; cannot set it aside ({}); the job's account starts again here",
                 path, why, std::strerror(errno));
  }
}

bool missing(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

// The ledger's directory locked for one read-modify-write (flock(2) on the directory itself, as
// the export's TargetLock: nothing is added to what the platform syncs; the kernel drops the lock
// of a holder that died), so of containers of one job started together none loses another's
// record. A holder keeps it for a read and a rename of a few KiB: waited for at most kLockWait,
// then the write goes ahead unlocked (one warning); a file system that cannot lock: unlocked.
class DirLock {
 public:
  static constexpr std::chrono::milliseconds kLockWait{2000};
  explicit DirLock(const std::string& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    const auto deadline = std::chrono::steady_clock::now() + kLockWait;
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) return;  // cannot lock here: unlocked
      if (std::chrono::steady_clock::now() >= deadline) {
        timed_out_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the only descriptor releases the lock
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  bool timed_out() const { return timed_out_; }

 private:
  int fd_;
  bool timed_out_ = false;
};

bool index_taken(const Ledger& l, int index) {
  return l.folded.containers > index ||
         std::any_of(l.records.begin(), l.records.end(),
                     [index](const ContainerRecord& r) { return r.index == index; });
}

}  // namespace

std::string ledger_file_name(const std::string& job_id) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : job_id) h = (h ^ c) * 1099511628211ull;
  return fmt::format(".trainvisor-ledger-{:016x}.json", h);
}

LedgerFile::LedgerFile(std::string path, Ledger prior)
    : path_(std::move(path)), prior_(std::move(prior)), index_(next_index(prior_)) {}

LedgerFile LedgerFile::open(const std::string& dir, const std::string& job_id) {
  const std::string path = dir + "/" + ledger_file_name(job_id);
  Ledger fresh;
  fresh.job_id = job_id;
  if (missing(path)) {
    spdlog::info("job ledger {}: container 1 of job '{}' (a new ledger)", path, job_id);
    return LedgerFile(path, fresh);
  }
  auto text = read_regular_file_nofollow(path, kLedgerFileCap);
  if (!text) {
    const std::string& m = text.error().message;
    set_aside(path, m.rfind(path + ": ", 0) == 0 ? m.substr(path.size() + 2) : m);
    return LedgerFile(path, fresh);
  }
  auto parsed = parse_ledger(*text);
  if (!parsed) {
    set_aside(path, parsed.error().message);
    return LedgerFile(path, fresh);
  }
  if (parsed->job_id != job_id) {
    set_aside(path,
              "the ledger of job '" + parsed->job_id + "', not of '" + job_id + "'; not merged");
    return LedgerFile(path, fresh);
  }
  LedgerFile f(path, std::move(*parsed));
  spdlog::info("job ledger {}: container {} of job '{}'", path, f.index_ + 1, job_id);
  return f;
}

// Another container of the job may have written since this one started (a replacement that
// overlaps the old container's grace period): its record is kept, this one's replaced.
void LedgerFile::refresh() {
  auto text = read_regular_file_nofollow(path_, kLedgerFileCap);
  if (!text) return;
  auto now = parse_ledger(*text);
  if (!now || now->job_id != prior_.job_id) return;
  if (!claimed_ && index_taken(*now, index_)) {  // another container of the job wrote it first
    const int was = index_;
    index_ = next_index(*now);
    for (auto& m : own_marks_) m.container = index_;
    spdlog::info(
        "job ledger {}: container {} of job '{}' (container {} was taken by another "
        "container of the job that started at the same time)",
        path_, index_ + 1, prior_.job_id, was + 1);
  }
  if (now->folded.containers > index_) return;
  std::erase_if(now->records, [this](const ContainerRecord& r) { return r.index == index_; });
  prior_ = std::move(*now);
}

std::vector<PoisonMark> read_ledger_marks(const std::string& dir, const std::string& job_id) {
  auto text = read_regular_file_nofollow(dir + "/" + ledger_file_name(job_id), kLedgerFileCap);
  if (!text) return {};
  auto parsed = parse_ledger(*text);
  if (!parsed || parsed->job_id != job_id) return {};
  return parsed->poisoned;
}

std::vector<PoisonMark> LedgerFile::marks() const {
  std::vector<PoisonMark> all = prior_.poisoned;
  for (const auto& m : own_marks_) add_mark(all, m);
  return all;
}

void LedgerFile::write(const ContainerRecord& current) {
  const DirLock lock(path_.substr(0, path_.rfind('/')));
  if (lock.timed_out() && !warned_lock_) {
    warned_lock_ = true;
    spdlog::warn("job ledger {}: its directory stayed locked for {} ms; written unlocked", path_,
                 DirLock::kLockWait.count());
  }
  refresh();
  Ledger l = prior_;
  l.poisoned = marks();
  ContainerRecord mine = current;
  mine.index = index_;  // refresh may have moved this container to the next free index
  put_record(l, mine);
  auto written = write_whole_file(path_, ledger_text(l));
  claimed_ = claimed_ || written.ok();
  if (written || warned_) return;
  warned_ = true;
  spdlog::warn("job ledger: {} (the job's account across containers is not kept)",
               written.error().message);
}

}  // namespace tv
