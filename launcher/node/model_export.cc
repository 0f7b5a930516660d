#include "launcher/node/model_export.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/exit_codes.h"

namespace tv {
namespace {

namespace fs = std::filesystem;
constexpr const char* kStagingPrefix = ".trainvisor-export-";
constexpr const char* kApart = ": expected a source outside the export directory";

Error failed(const std::string& what) { return Error{ErrorKind::kCannotCreate, what}; }

std::string reason(const std::error_code& ec) { return ec.message(); }

struct Source {
  fs::path path;
  bool follow = false;  // the path named itself (a file or a link to one): followed
};

bool is_glob(const std::string& what) { return what.find_first_of("*?[") != std::string::npos; }

// What `pattern` matches now, each match as glob(3) run in `cwd` names it (a relative pattern's
// relative); nullopt when a directory it names cannot be read.
std::optional<std::vector<std::string>> glob_in(const std::string& pattern, const FileSystem& files,
                                                const std::string& cwd) {
  if (cwd.empty() || fs::path(pattern).is_absolute()) return files.glob(pattern);
  const std::string dir = cwd.ends_with('/') ? cwd : cwd + "/";
  std::string escaped;  // cwd's own wildcards are its name's letters
  for (const char c : dir) {
    if (std::strchr("*?[\\", c)) escaped += '\\';
    escaped += c;
  }
  auto matches = files.glob(escaped + pattern);
  if (matches)
    for (auto& m : *matches)
      if (m.starts_with(dir)) m.erase(0, dir.size());
  return matches;
}

// A glob's matches, none followed: a match is below the path named, as a directory's entry is.
Result<std::vector<Source>> glob_sources(const std::string& what, const FileSystem& files,
                                         const std::string& cwd) {
  auto matches = glob_in(what, files, cwd);
  if (!matches) return failed("--export " + what + ": cannot read a directory it names");
  if (matches->empty())
    return failed("--export " + what + ": matched nothing: expected the files to export");
  std::vector<Source> out;
  for (auto& m : *matches) out.push_back({std::move(m), false});
  return out;
}

// The sources `what` names: a directory's entries, a file, or a pattern's matches. Only the path
// named is followed when it is a link (the seeds' `logs` is one); nothing below it ever is.
Result<std::vector<Source>> sources(const std::string& what, const FileSystem& files,
                                    const std::string& cwd) {
  if (is_glob(what)) return glob_sources(what, files, cwd);
  std::vector<Source> out;
  std::error_code ec;
  const auto st = fs::status(what, ec);  // the named source may be a link (logs -> checkpoints)
  if (ec || !fs::exists(st))
    return failed("--export " + what + ": " + (ec ? reason(ec) : "no such file or directory") +
                  ": expected the directory or file to export");
  if (!fs::is_directory(st)) return std::vector<Source>{{what, true}};
  for (auto it = fs::directory_iterator(what, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    out.push_back({it->path(), false});
  if (ec) return failed("--export " + what + ": cannot list it: " + reason(ec));
  return out;
}

}  // namespace

bool is_trainvisor_file(const std::string& name) { return name.starts_with(".trainvisor-"); }

namespace {

// `p`, a relative one against `cwd`, with every link resolved that exists (the path need not
// exist yet).
fs::path resolved(const fs::path& p, const FileSystem& files, const std::string& cwd) {
  const fs::path absolute = cwd.empty() ? p : fs::path(cwd) / p;
  if (auto r = files.weakly_canonical(absolute.string())) return *r;
  return absolute.lexically_normal();
}

bool holds(const fs::path& outer, const fs::path& inner) {
  const auto [end, rest] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return end == outer.end();
}

// Copies `src` to `dst` without following a link (`follow`: src is the path named, a file that
// may be a link itself).
Status copy_entry(const fs::path& src, const fs::path& dst, bool follow, ExportReport& r,
                  const ExportExclude& exclude) {
  if (!follow && is_trainvisor_file(src.filename().string())) {
    r.own.push_back(src.string());
    return ok_status();
  }
  if (exclude)
    if (auto why = exclude(src.lexically_normal().string())) {
      r.left_out.push_back(src.string() + " (" + *why + ")");
      return ok_status();
    }
  std::error_code ec;
  const auto st = follow ? fs::status(src, ec) : fs::symlink_status(src, ec);
  if (ec) return failed(src.string() + ": " + reason(ec));
  if (fs::is_symlink(st) || !(fs::is_regular_file(st) || fs::is_directory(st))) {
    r.skipped.push_back(src.string());
    return ok_status();
  }
  if (fs::is_regular_file(st)) {
    fs::copy_file(src, dst, fs::copy_options::overwrite_existing, ec);
    if (ec) return failed(src.string() + " -> " + dst.string() + ": " + reason(ec));
    ++r.files;
    r.bytes += fs::file_size(dst, ec);
    return ok_status();
  }
  fs::create_directory(dst, ec);
  if (ec) return failed(dst.string() + ": " + reason(ec));
  for (auto it = fs::directory_iterator(src, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (auto s = copy_entry(it->path(), dst / it->path().filename(), false, r, exclude); !s)
      return s;
  if (ec) return failed(src.string() + ": cannot list it: " + reason(ec));
  return ok_status();
}

// The target directory locked against another node's export into it (flock(2) on the directory
// itself: nothing is added to what SageMaker uploads). Nodes that share one export directory (a
// shared file system) export one after the other, each whole, so neither removes the other's
// staging nor renames into a place the other is filling; the kernel drops the lock of a holder
// that died. A file system without flock on directories is exported into unlocked, as before.
class TargetLock {
 public:
  explicit TargetLock(const fs::path& target)
      : fd_(::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) return;
    spdlog::info("export: waiting for another export into {} to finish (a node sharing it)",
                 target.string());
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~TargetLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the only descriptor releases the lock
  }
  TargetLock(const TargetLock&) = delete;
  TargetLock& operator=(const TargetLock&) = delete;

 private:
  int fd_;
};

// A staging directory of an export that was interrupted (a signal, a lost node) is removed.
void remove_stale_staging(const fs::path& target) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(target, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (it->path().filename().string().starts_with(kStagingPrefix)) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
}

// Each staged entry replaces the target's entry of that name: a file by one rename, a directory by
// moving the old one into the staging directory first.
Status move_into_place(const fs::path& staging, const fs::path& target, ExportReport& r) {
  std::error_code ec;
  std::vector<fs::path> staged;
  for (auto it = fs::directory_iterator(staging, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    staged.push_back(it->path());
  if (ec) return failed(staging.string() + ": " + reason(ec));
  for (const auto& s : staged) {
    const fs::path dst = target / s.filename();
    std::error_code absent;  // symlink_status reports a missing dst as an error too
    if (fs::is_directory(fs::symlink_status(dst, absent)))
      fs::rename(dst, staging / (".old-" + s.filename().string()), ec);
    if (!ec) fs::rename(s, dst, ec);
    if (ec) {
      std::string done = r.moved.empty() ? "none" : "";
      for (const auto& m : r.moved) done += (done.empty() ? "" : ", ") + m;
      return failed(s.string() + " -> " + dst.string() + ": " + reason(ec) +
                    " (already in place: " + done + ")");
    }
    r.moved.push_back(s.filename().string());
  }
  return ok_status();
}

}  // namespace

std::optional<std::string> export_overlap(const std::string& what, const std::string& target,
                                          const FileSystem& files, const std::string& cwd) {
  const fs::path into = resolved(target, files, cwd);
  const bool glob = is_glob(what);
  std::vector<fs::path> named;
  if (glob) {
    for (auto& m : glob_in(what, files, cwd).value_or(std::vector<std::string>{}))
      named.emplace_back(std::move(m));  // what matches now; nothing yet is no overlap
  } else {
    named.emplace_back(what);
  }
  for (const auto& src : named) {
    // The path named is followed (a link to the logs); a match never is: its directory is.
    const fs::path dir = src.has_parent_path() ? src.parent_path() : fs::path(".");
    const fs::path from =
        glob ? resolved(dir, files, cwd) / src.filename() : resolved(src, files, cwd);
    const std::string s = src.string(), head = "--export " + what + ": ";
    const std::string noun = glob ? "the match " : "the source ";
    if (from == into)
      return head + "the export directory " + target + " is " + noun + s + " itself" + kApart;
    if (holds(from, into))
      return head + noun + s + " holds the export directory " + target + kApart;
    if (glob && from.parent_path() == into)
      return head + "the match " + s + " is already in the export directory " + target + kApart;
  }
  return std::nullopt;
}

Result<ExportReport> export_model(const std::string& what, const std::string& target,
                                  const FileSystem& files, const std::string& cwd,
                                  const ExportExclude& exclude) {
  auto srcs = sources(what, files, cwd);
  if (!srcs) return srcs.error();
  std::error_code ec;
  fs::create_directories(target, ec);
  if (ec) return failed(target + ": cannot create the export directory: " + reason(ec));
  if (auto overlap = export_overlap(what, target, files, cwd)) return failed(*overlap);
  const TargetLock lock(target);  // held until the staging directory is gone
  remove_stale_staging(target);
  std::string tmpl = (fs::path(target) / (std::string(kStagingPrefix) + "XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    return failed(target + ": cannot write there (" + std::strerror(errno) +
                  "): nothing was exported");
  const fs::path staging = tmpl;
  ExportReport r;
  Status s = ok_status();
  for (const auto& src : *srcs) {
    s = copy_entry(src.path, staging / src.path.filename(), src.follow, r, exclude);
    if (!s) break;
  }
  if (s) s = move_into_place(staging, target, r);
  fs::remove_all(staging, ec);
  if (!s)
    return failed(s.error().message + (r.moved.empty() ? "; " + target + " is as it was" : ""));
  return r;
}

}  // namespace tv
