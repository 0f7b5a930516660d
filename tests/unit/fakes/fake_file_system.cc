#include "tests/unit/fakes/fake_file_system.h"

#include <fnmatch.h>

#include <algorithm>
#include <deque>
#include <filesystem>

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

std::optional<std::string> FakeFileSystem::read_tail(const std::string& path, std::size_t max_bytes,
                                                     std::string* why) const {
  auto it = files_.find(path);
  if (it == files_.end()) return read(path, max_bytes, why);  // its refusal
  return it->second.substr(it->second.size() - std::min(it->second.size(), max_bytes));
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

std::optional<std::vector<std::string>> FakeFileSystem::glob(const std::string& pattern) const {
  std::set<std::string> paths;  // every path held and every directory above one
  auto add = [&](const std::string& path) {
    for (auto end = path.size(); end != std::string::npos && end > 0;
         end = path.rfind('/', end - 1))
      if (!paths.insert(path.substr(0, end)).second) break;
  };
  for (const auto& [p, _] : files_) add(p);
  for (const auto& [p, _] : links_) add(p);
  for (const auto& p : nodes_) add(p);
  std::vector<std::string> matches;
  for (const auto& p : paths)
    if (::fnmatch(pattern.c_str(), p.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0) matches.push_back(p);
  return matches;
}

// Links are followed physically, as the kernel does: a ".." after a link is its target's parent.
// At most 40 links (Linux's MAXSYMLINKS), then a loop.
FakeFileSystem::Found FakeFileSystem::resolve(const std::string& path, std::string& out) const {
  namespace fs = std::filesystem;
  if (!fs::path(path).is_absolute()) return Found::kMissing;
  std::deque<std::string> rest;
  for (const auto& part : fs::path(path).relative_path()) rest.push_back(part.string());
  fs::path done = "/";
  for (int links = 0; !rest.empty();) {
    const std::string part = rest.front();
    rest.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      done = done.parent_path();
      continue;
    }
    const fs::path next = done / part;
    if (auto target = read_link(next.string())) {
      if (++links > 40) return Found::kLoop;
      const fs::path t(*target);
      std::vector<std::string> parts;
      for (const auto& q : t.relative_path()) parts.push_back(q.string());
      rest.insert(rest.begin(), parts.begin(), parts.end());
      if (t.is_absolute()) done = "/";
      continue;
    }
    if (!exists(next.string())) return Found::kMissing;
    done = next;
  }
  out = done.string();
  return Found::kThere;
}

// As libstdc++'s: the longest leading part that exists (through its links) is resolved, the rest
// appended and the whole made lexically normal.
std::optional<std::string> FakeFileSystem::weakly_canonical(const std::string& path) const {
  namespace fs = std::filesystem;
  std::string resolved;
  switch (resolve(path, resolved)) {
    case Found::kThere:
      return resolved;
    case Found::kLoop:
      return std::nullopt;
    case Found::kMissing:
      break;
  }
  const fs::path p(path);
  fs::path head;
  auto it = p.begin();
  for (; it != p.end(); ++it) {
    std::string ignored;
    const Found f = resolve((head / *it).string(), ignored);
    if (f == Found::kLoop) return std::nullopt;
    if (f == Found::kMissing) break;
    head /= *it;
  }
  fs::path out;
  if (!head.empty() && resolve(head.string(), resolved) == Found::kThere) out = resolved;
  for (; it != p.end(); ++it) out /= *it;
  return out.lexically_normal().string();
}

}  // namespace tv::testing
