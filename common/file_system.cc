#include "common/file_system.h"

#include <filesystem>

#include "common/bounded_read.h"

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
  auto text = read_regular_file(path, kConfigFileCap);
  if (!text) {
    // The message starts with the path; the caller names the file itself.
    const std::string& m = text.error().message;
    if (why) *why = m.starts_with(path + ": ") ? m.substr(path.size() + 2) : m;
    return std::nullopt;
  }
  return std::move(*text);
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
