#include "launcher/observability/ledger_file.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
  if (!now || now->job_id != prior_.job_id || now->folded.containers > index_) return;
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
  refresh();
  Ledger l = prior_;
  l.poisoned = marks();
  put_record(l, current);
  auto written = write_whole_file(path_, ledger_text(l));
  if (written || warned_) return;
  warned_ = true;
  spdlog::warn("job ledger: {} (the job's account across containers is not kept)",
               written.error().message);
}

}  // namespace tv
