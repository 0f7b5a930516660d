// --link-logs PATH: make PATH (the framework's log directory) a symlink to
// <checkpoint-dir>/<basename(PATH)>, safely when either side already exists (resume.h).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "checkpoint/resume.h"
#include "common/exit_codes.h"

namespace tv {
namespace {

namespace fs = std::filesystem;

Error link_error(const std::string& path, const std::string& why) {
  return Error{ErrorKind::kConfig, "--link-logs: cannot link '" + path + "': " + why};
}

bool points_to(const fs::path& link, const fs::path& target) {
  std::error_code ec;
  return fs::is_symlink(link, ec) && fs::equivalent(link, target, ec);
}

// symlink(target, tmp) + rename(tmp, link): atomic, and it never replaces a real directory.
Status make_link(const fs::path& link, const fs::path& target) {
  std::error_code ec;
  const fs::path tmp = link.string() + ".tv-link." + std::to_string(::getpid());
  fs::remove(tmp, ec);
  fs::create_directory_symlink(target, tmp, ec);
  if (!ec) fs::rename(tmp, link, ec);
  if (!ec) return ok_status();
  fs::remove(tmp);
  if (points_to(link, target)) return ok_status();  // someone else was quicker
  return link_error(link.string(), ec.message());
}

// A real directory at `link`: move what it holds into `target`, then remove it.
Status move_contents(const fs::path& from, const fs::path& target) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(from, ec)) {
    fs::path dest = target / e.path().filename();
    if (fs::exists(fs::symlink_status(dest, ec))) dest += ".moved-" + std::to_string(::getpid());
    fs::rename(e.path(), dest, ec);
    if (ec) return link_error(from.string(), "moving " + e.path().string() + ": " + ec.message());
  }
  if (ec) return link_error(from.string(), ec.message());
  fs::remove(from, ec);
  if (ec) return link_error(from.string(), ec.message());
  spdlog::info("checkpoint: moved the existing {} into {}", from.string(), target.string());
  return ok_status();
}

}  // namespace

Status link_logs(const std::string& spec, const std::string& checkpoint_dir) {
  if (spec.empty()) return link_error(spec, "expected the framework's log directory");
  std::error_code ec;
  fs::path link = fs::absolute(spec, ec);
  while (link.has_filename() == false && link.has_parent_path() && link != link.root_path())
    link = link.parent_path();  // "logs/" -> "logs"
  const fs::path target = fs::absolute(checkpoint_dir, ec) / link.filename();
  if (link.filename().empty() || link == link.root_path())
    return link_error(spec, "expected a directory with a name");
  fs::create_directories(target, ec);
  if (ec) return link_error(spec, "creating " + target.string() + ": " + ec.message());
  if (points_to(link, target)) return ok_status();
  if (fs::equivalent(link, target, ec)) return link_error(spec, "it is the target itself");
  const auto st = fs::symlink_status(link, ec);
  if (fs::is_directory(st)) {
    if (auto moved = move_contents(link, target); !moved) return moved;
  } else if (fs::exists(st) && !fs::is_symlink(st)) {
    return link_error(spec, "it exists and is not a directory");
  }
  fs::create_directories(link.parent_path(), ec);
  if (auto made = make_link(link, target); !made) return made;
  spdlog::info("checkpoint: {} -> {}", link.string(), target.string());
  return ok_status();
}

}  // namespace tv
