// Read-only file access behind an interface: configuration files, sysfs and /dev nodes, so pure
// logic (topology, the SageMaker entry point, the EFA checks) can be unit-tested against in-memory
// trees (tests/unit/fakes/fake_file_system.h). RealFileSystem is the one implementation that
// touches the OS. Checkpoint discovery has its own seam (checkpoint/checkpoint_fs.h): it needs
// stat, byte ranges and a clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tv {

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // True for anything at path (a file, a directory, a device node; a link whose target exists).
  virtual bool exists(const std::string& path) const = 0;
  virtual bool is_directory(const std::string& path) const = 0;
  // Entry names in a directory, sorted; empty when it does not exist or cannot be read.
  virtual std::vector<std::string> list(const std::string& dir) const = 0;
  // Target of a symbolic link as written; nullopt when path is not a link.
  virtual std::optional<std::string> read_link(const std::string& path) const = 0;
  // Whole file contents, or nullopt when it cannot be read (the reason in *why when given, without
  // the path: the caller names the file). Each caller picks the cap that matches what it reads
  // (common/bounded_read.h: kSmallFileCap for sysfs, kConfigFileCap for configuration files). The
  // real one reads only regular files, at most max_bytes, and never blocks.
  virtual std::optional<std::string> read(const std::string& path, std::size_t max_bytes,
                                          std::string* why = nullptr) const = 0;
  // The last max_bytes of the regular file at path (all of it when smaller: a log's tail, its first
  // line possibly cut), or nullopt as read() gives it. The real one never blocks.
  virtual std::optional<std::string> read_tail(const std::string& path, std::size_t max_bytes,
                                               std::string* why = nullptr) const = 0;
  // When the contents at path last changed (its mtime, ns since the epoch; a link's target's);
  // nullopt when nothing is there.
  virtual std::optional<std::int64_t> modified_ns(const std::string& path) const = 0;
  // The size of the regular file at path (a link's target's); nullopt for anything else.
  virtual std::optional<std::uint64_t> regular_size(const std::string& path) const = 0;
  // What a glob(3) pattern matches now (GLOB_ERR), sorted; empty when nothing does; nullopt when
  // a directory it names cannot be read. A relative pattern's matches are relative.
  virtual std::optional<std::vector<std::string>> glob(const std::string& pattern) const = 0;
  // path with every link, "." and ".." resolved in the part of it that exists, the rest appended
  // lexically (std::filesystem::weakly_canonical: the path need not exist); nullopt when it cannot
  // be resolved (a loop of links, a part that cannot be looked at).
  virtual std::optional<std::string> weakly_canonical(const std::string& path) const = 0;
};

class RealFileSystem final : public FileSystem {
 public:
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
};

// `path` made absolute against `cwd` (trainvisor's current directory, which never changes: a worker
// that changes directory, as Hydra does, still finds its error file, heartbeat and checkpoints),
// lexically normal and without a trailing '/'. Pure: nothing is read, no link is followed. An
// empty path, or a relative one when `cwd` is "" (unknown), is returned as given.
std::string absolute_path(const std::string& path, const std::string& cwd);

}  // namespace tv
