// The in-memory FileSystem of the unit tests (topology, supervision, health, plan): files,
// symbolic links and device nodes in maps; directories are implied by the paths under them. A link
// exists and has its target for read_link, but is not followed (reading it is "No such file"; a
// glob does not look below it) except by weakly_canonical, which resolves links by their text as
// the real one does. glob matches its own paths with fnmatch(3), a "/" and a leading "." only
// literally, as glob(3) does. It has no current directory: a relative path is not there. Its other
// answers, refusals included, are the real one's (tests/unit/common/file_system_test.cc compares
// the two).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/file_system.h"

namespace tv::testing {

class FakeFileSystem final : public FileSystem {
 public:
  void add_file(const std::string& path, std::string contents) {
    files_[path] = std::move(contents);
  }
  void add_link(const std::string& path, std::string target) { links_[path] = std::move(target); }
  // A device node such as /dev/infiniband/uverbs0: it exists, it is not a regular file.
  void add_node(const std::string& path) { nodes_.insert(path); }
  // A file's mtime (modified_ns): a file added with none has 0; touching one makes it exist.
  void touch(const std::string& path, std::int64_t ns) {
    files_.try_emplace(path);
    mtimes_[path] = ns;
  }

  bool exists(const std::string& path) const override;
  bool is_directory(const std::string& path) const override;
  std::vector<std::string> list(const std::string& dir) const override;
  std::optional<std::string> read_link(const std::string& path) const override;
  std::optional<std::string> read(const std::string& path, std::size_t max_bytes,
                                  std::string* why) const override;
  std::optional<std::string> read_tail(const std::string& path, std::size_t max_bytes,
                                       std::string* why) const override;
  std::optional<std::int64_t> modified_ns(const std::string& path) const override;
  std::optional<std::uint64_t> regular_size(const std::string& path) const override;
  std::optional<std::vector<std::string>> glob(const std::string& pattern) const override;
  std::optional<std::string> weakly_canonical(const std::string& path) const override;
  // Appends to a file (making it exist): a worker writing its stacks or its log.
  void append(const std::string& path, const std::string& text) { files_[path] += text; }

 private:
  enum class Found { kThere, kMissing, kLoop };
  // An absolute path with every link, "." and ".." resolved, where every part of it exists.
  Found resolve(const std::string& path, std::string& out) const;

  std::map<std::string, std::string> files_;
  std::map<std::string, std::string> links_;
  std::set<std::string> nodes_;
  std::map<std::string, std::int64_t> mtimes_;
};

}  // namespace tv::testing
