#include "common/file_system.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tv {

bool RealFileSystem::exists(const std::string& path) const {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

bool RealFileSystem::is_directory(const std::string& path) const {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

std::optional<std::string> RealFileSystem::read(const std::string& path, std::string* why) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (why) *why = std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool FakeFileSystem::exists(const std::string& path) const {
  return files_.count(path) || is_directory(path);
}

bool FakeFileSystem::is_directory(const std::string& path) const {
  std::string prefix = path.ends_with('/') ? path : path + "/";
  auto it = files_.lower_bound(prefix);
  return it != files_.end() && it->first.starts_with(prefix);
}

std::optional<std::string> FakeFileSystem::read(const std::string& path, std::string* why) const {
  auto it = files_.find(path);
  if (it == files_.end()) {
    if (why) *why = "No such file or directory";
    return std::nullopt;
  }
  return it->second;
}

}  // namespace tv
