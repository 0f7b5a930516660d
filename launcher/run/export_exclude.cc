#include "launcher/run/export_exclude.h"

#include <filesystem>
#include <map>
#include <memory>

#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/incomplete.h"

namespace tv {
namespace {

namespace fs = std::filesystem;

// The directory to look in: `what` itself, or the directory above a file or a pattern's first
// wildcard.
std::string root_of(const std::string& what) {
  const auto wild = what.find_first_of("*?[");
  std::error_code ec;
  if (wild == std::string::npos && fs::is_directory(what, ec)) return what;
  const std::string head = wild == std::string::npos ? what : what.substr(0, wild);
  const auto slash = head.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : head.substr(0, slash);
}

std::string normal(const std::string& p) { return fs::path(p).lexically_normal().string(); }

}  // namespace

ExportExclude incomplete_checkpoints_under(const std::string& what, const std::string& format) {
  RealCheckpointFs cfs;
  auto why = std::make_shared<std::map<std::string, std::string>>();
  for (const auto& c : incomplete_checkpoints(cfs, root_of(what), format)) {
    const std::string reason = "an incomplete checkpoint: " + c.reason;
    (*why)[normal(c.path)] = reason;
    for (const auto& part : c.parts) (*why)[normal(part)] = reason;
  }
  if (why->empty()) return {};
  return [why](const std::string& path) -> std::optional<std::string> {
    auto it = why->find(normal(path));
    if (it == why->end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace tv
