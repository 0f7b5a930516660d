#include "common/file_system.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "common/bounded_read.h"

namespace tv {
namespace fs = std::filesystem;

bool RealFileSystem::exists(const std::string& path) const {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool RealFileSystem::is_directory(const std::string& path) const {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

std::vector<std::string> RealFileSystem::list(const std::string& dir) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> RealFileSystem::read_link(const std::string& path) const {
  std::error_code ec;
  auto target = fs::read_symlink(path, ec);
  if (ec) return std::nullopt;
  return target.string();
}

namespace {

// A bounded read's contents, or nullopt with its reason in *why: the message starts with the path,
// which the caller names itself.
std::optional<std::string> contents_or_why(Result<std::string> text, const std::string& path,
                                           std::string* why) {
  if (text) return std::move(*text);
  const std::string& m = text.error().message;
  if (why) *why = m.starts_with(path + ": ") ? m.substr(path.size() + 2) : m;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> RealFileSystem::read(const std::string& path, std::size_t max_bytes,
                                                std::string* why) const {
  return contents_or_why(read_regular_file(path, max_bytes), path, why);
}

std::optional<std::string> RealFileSystem::read_tail(const std::string& path, std::size_t max_bytes,
                                                     std::string* why) const {
  return contents_or_why(read_regular_tail(path, max_bytes), path, why);
}

std::optional<std::int64_t> RealFileSystem::modified_ns(const std::string& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::optional<std::uint64_t> RealFileSystem::regular_size(const std::string& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_size);
}

std::optional<std::vector<std::string>> RealFileSystem::glob(const std::string& pattern) const {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
  std::vector<std::string> matches;
  for (std::size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) matches.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH) return std::nullopt;
  return matches;
}

std::optional<std::string> RealFileSystem::weakly_canonical(const std::string& path) const {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(path, ec);
  if (ec) return std::nullopt;
  return resolved.string();
}

std::string absolute_path(const std::string& path, const std::string& cwd) {
  const std::filesystem::path p(path);
  if (path.empty() || (p.is_relative() && cwd.empty())) return path;
  std::string out = (std::filesystem::path(cwd) / p).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace tv
