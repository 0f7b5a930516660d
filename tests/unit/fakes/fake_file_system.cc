#include "tests/unit/fakes/fake_file_system.h"

namespace tv::testing {
namespace {

std::optional<std::string> refuse(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

}  // namespace

bool FakeFileSystem::exists(const std::string& path) const {
  return files_.count(path) || links_.count(path) || nodes_.count(path) || is_directory(path);
}

bool FakeFileSystem::is_directory(const std::string& path) const { return !list(path).empty(); }

std::vector<std::string> FakeFileSystem::list(const std::string& dir) const {
  const std::string prefix = dir.ends_with('/') ? dir : dir + "/";
  std::set<std::string> names;
  auto add = [&](const std::string& path) {
    if (!path.starts_with(prefix) || path.size() == prefix.size()) return;
    const std::string rest = path.substr(prefix.size());
    names.insert(rest.substr(0, rest.find('/')));
  };
  for (const auto& [p, _] : files_) add(p);
  for (const auto& [p, _] : links_) add(p);
  for (const auto& p : nodes_) add(p);
  return {names.begin(), names.end()};
}

std::optional<std::string> FakeFileSystem::read_link(const std::string& path) const {
  auto it = links_.find(path);
  if (it == links_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> FakeFileSystem::read(const std::string& path, std::size_t max_bytes,
                                                std::string* why) const {
  auto it = files_.find(path);
  if (it != files_.end()) {
    if (it->second.size() > max_bytes)
      return refuse(why, "larger than " + std::to_string(max_bytes) + " bytes (" +
                             std::to_string(it->second.size()) + "); not read");
    return it->second;
  }
  if (nodes_.count(path)) return refuse(why, "not a regular file (a character device)");
  if (is_directory(path)) return refuse(why, "not a regular file (a directory)");
  return refuse(why, "cannot open (No such file or directory)");
}

// Links are not followed (as read's "No such file"); a directory implied by its paths has no mtime.
std::optional<std::int64_t> FakeFileSystem::modified_ns(const std::string& path) const {
  if (nodes_.count(path)) return 0;
  if (!files_.count(path)) return std::nullopt;
  const auto t = mtimes_.find(path);
  return t == mtimes_.end() ? 0 : t->second;
}

std::optional<std::uint64_t> FakeFileSystem::regular_size(const std::string& path) const {
  const auto it = files_.find(path);
  if (it == files_.end()) return std::nullopt;
  return it->second.size();
}

}  // namespace tv::testing
