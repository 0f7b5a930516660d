// Read-only access to sysfs and /dev, behind an interface so the EFA checks can be unit-tested
// against a fake tree. RealSysfs is the one implementation that touches the OS.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tv {

class Sysfs {
 public:
  virtual ~Sysfs() = default;
  // Entry names in a directory (sorted); empty when it does not exist.
  virtual std::vector<std::string> list(const std::string& dir) const = 0;
  // File contents with trailing whitespace removed; nullopt when unreadable.
  virtual std::optional<std::string> read(const std::string& path) const = 0;
  // Target of a symbolic link; nullopt when not a link.
  virtual std::optional<std::string> read_link(const std::string& path) const = 0;
  virtual bool exists(const std::string& path) const = 0;
};

class RealSysfs final : public Sysfs {
 public:
  std::vector<std::string> list(const std::string& dir) const override;
  std::optional<std::string> read(const std::string& path) const override;
  std::optional<std::string> read_link(const std::string& path) const override;
  bool exists(const std::string& path) const override;
};

// For unit tests: files, links and bare paths (device nodes) in maps; directories are implied.
class FakeSysfs final : public Sysfs {
 public:
  void add_file(const std::string& path, std::string contents) {
    files_[path] = std::move(contents);
  }
  void add_link(const std::string& path, std::string target) { links_[path] = std::move(target); }
  void add_node(const std::string& path) { nodes_.insert(path); }
  std::vector<std::string> list(const std::string& dir) const override;
  std::optional<std::string> read(const std::string& path) const override;
  std::optional<std::string> read_link(const std::string& path) const override;
  bool exists(const std::string& path) const override;

 private:
  std::map<std::string, std::string> files_;
  std::map<std::string, std::string> links_;
  std::set<std::string> nodes_;
};

}  // namespace tv
