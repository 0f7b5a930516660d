#include "launcher/node/work_dir.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/exit_codes.h"
#include "common/file_system.h"
#include "launcher/node/attempt_number.h"

namespace tv {
namespace {

// A --log-dir that other users can write without the sticky bit lets them rename what trainvisor
// makes there (attempt_<k>) and put their own in its place between two runs: said once.
void warn_if_shared(const std::string& dir, const std::string& origin) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !(st.st_mode & (S_IWGRP | S_IWOTH)) ||
      (st.st_mode & S_ISVTX))
    return;
  spdlog::warn(
      "{}=\"{}\": writable by other users without the sticky bit (mode {:04o}): they can rename "
      "the attempt directories trainvisor makes there; use a private directory or chmod +t it "
      "(docs/supervision.md, \"Files trainvisor creates\")",
      origin, dir, st.st_mode & 07777);
}

// The entries of `dir` that are directories of this user (not links, not another user's): an
// earlier container's attempt_<k>. A link or a stranger's directory planted at attempt_0 is not
// one, so generation 0 still opens attempt_0 and is refused there (78, docs/supervision.md).
std::vector<std::string> own_directories(const std::string& dir) {
  std::vector<std::string> out;
  for (auto& name : RealFileSystem().list(dir)) {
    struct stat st {};
    const std::string path = dir + "/" + name;
    if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid())
      out.push_back(std::move(name));
  }
  return out;
}

}  // namespace

WorkDir::~WorkDir() {
  std::error_code ec;
  if (temporary_) std::filesystem::remove_all(path_, ec);
}

Status WorkDir::open(const std::optional<OptionValue>& log_dir, const Environment& env,
                     const std::string& cwd) {
  if (log_dir) {
    const std::string path = absolute_path(log_dir->value, cwd);
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec)
      return Error{ErrorKind::kConfig, log_dir->origin + "=\"" + log_dir->value +
                                           "\": cannot create directory: " + ec.message()};
    warn_if_shared(path, log_dir->origin);
    path_ = path;
    first_attempt_ = first_free_attempt(own_directories(path_));
    if (first_attempt_ > 0)
      spdlog::info(
          "{} {}: attempt_0 to attempt_{} are an earlier run's; generation 0 writes attempt_{}",
          log_dir->origin, path_, first_attempt_ - 1, first_attempt_);
    return ok_status();
  }
  // Not std::filesystem::temp_directory_path(): it throws when TMPDIR is not a directory.
  const std::string tmpdir = env.has("TMPDIR") ? *env.get("TMPDIR") : "/tmp";
  std::string tmpl = tmpdir + "/trainvisor-XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    return Error{ErrorKind::kConfig,
                 std::string(env.has("TMPDIR") ? "TMPDIR" : "TMPDIR (unset)") + "=\"" + tmpdir +
                     "\": cannot create a temporary directory there (" + std::strerror(errno) +
                     "): expected a writable directory (or pass --log-dir)"};
  path_ = absolute_path(tmpl, cwd);
  temporary_ = true;
  return ok_status();
}

}  // namespace tv
