// Read-only file access behind an interface, so pure logic (topology, checkpoint discovery) can be
// tested against in-memory trees. RealFileSystem is the one implementation that touches the OS.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace tv {

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual bool exists(const std::string& path) const = 0;
  virtual bool is_directory(const std::string& path) const = 0;
  // Whole file contents, or nullopt when it cannot be read (the reason in *why when given). The
  // real one reads only regular files, at most 4 MiB, and never blocks (common/bounded_read.h).
  virtual std::optional<std::string> read(const std::string& path,
                                          std::string* why = nullptr) const = 0;
};

class RealFileSystem final : public FileSystem {
 public:
  bool exists(const std::string& path) const override;
  bool is_directory(const std::string& path) const override;
  std::optional<std::string> read(const std::string& path, std::string* why) const override;
};

// For unit tests: a map from path to contents; directories are the parents of the files.
class FakeFileSystem final : public FileSystem {
 public:
  void add(const std::string& path, std::string contents) { files_[path] = std::move(contents); }
  bool exists(const std::string& path) const override;
  bool is_directory(const std::string& path) const override;
  std::optional<std::string> read(const std::string& path, std::string* why) const override;

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace tv
