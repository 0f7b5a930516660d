#include "health/sysfs.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "common/bounded_read.h"

namespace tv {
namespace fs = std::filesystem;
namespace {

std::string rtrim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

std::vector<std::string> RealSysfs::list(const std::string& dir) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> RealSysfs::read(const std::string& path) const {
  auto text = read_regular_file(path, kSmallFileCap);
  if (!text) return std::nullopt;
  return rtrim(*text);
}

std::optional<std::string> RealSysfs::read_link(const std::string& path) const {
  std::error_code ec;
  auto target = fs::read_symlink(path, ec);
  if (ec) return std::nullopt;
  return target.string();
}

bool RealSysfs::exists(const std::string& path) const {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::vector<std::string> FakeSysfs::list(const std::string& dir) const {
  const std::string prefix = dir + "/";
  std::set<std::string> names;
  auto add = [&](const std::string& path) {
    if (path.rfind(prefix, 0) != 0) return;
    std::string rest = path.substr(prefix.size());
    names.insert(rest.substr(0, rest.find('/')));
  };
  for (const auto& [p, _] : files_) add(p);
  for (const auto& [p, _] : links_) add(p);
  for (const auto& p : nodes_) add(p);
  return {names.begin(), names.end()};
}

std::optional<std::string> FakeSysfs::read(const std::string& path) const {
  auto it = files_.find(path);
  if (it == files_.end()) return std::nullopt;
  return rtrim(it->second);
}

std::optional<std::string> FakeSysfs::read_link(const std::string& path) const {
  auto it = links_.find(path);
  if (it == links_.end()) return std::nullopt;
  return it->second;
}

bool FakeSysfs::exists(const std::string& path) const {
  if (files_.count(path) || links_.count(path) || nodes_.count(path)) return true;
  return !list(path).empty();
}

}  // namespace tv
