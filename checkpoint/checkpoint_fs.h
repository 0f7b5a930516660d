// CheckpointFs: the only way checkpoint discovery and the watcher touch the OS (listing a
// directory, stat, reading a byte range, the clock, sleeping). RealCheckpointFs is the one real
// implementation; unit tests use an in-memory fake with a fake clock, so they never sleep.
// Implementations must be safe to call from one thread at a time per instance.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/name_list.h"
#include "common/result.h"

namespace tv {

enum class EntryType { kFile, kDirectory, kSymlink, kOther, kUnknown };

struct DirEntry {
  std::string name;
  EntryType type = EntryType::kUnknown;  // from the directory listing (d_type); no stat needed
};

// One directory, listed: the regular files (d_type DT_REG) by name, every other entry
// (directories, links, unknown types, names NameList refuses) apart, to be looked at one by one.
struct Listing {
  NameList files;
  std::vector<DirEntry> others;
};

struct FileStat {
  bool is_directory = false;
  bool is_regular = false;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t btime_ns = 0;  // birth time; 0 when the file system does not report it
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t ctime_ns = 0;  // status change: moves with every mtime change, and cannot be set
};

class CheckpointFs {
 public:
  using EachEntry = std::function<void(std::string_view name, EntryType type)>;
  virtual ~CheckpointFs() = default;
  // Calls `each` for every entry of a directory, without "." and ".." (the real one reads them
  // into a Listing first, in one pass). Error message: strerror, after what failed but `open`.
  virtual Status list_each(const std::string& dir, const EachEntry& each) = 0;
  // The same into `out` (appending), without "." and "..". `dir_bytes` (the directory's st_size)
  // says how many names to expect. This one calls list_each; the real one lists a large ext4
  // directory in parallel parts (split_listing.h).
  virtual Status list_into(const std::string& dir, std::uint64_t dir_bytes, Listing& out);
  // The same, collected.
  Result<std::vector<DirEntry>> list(const std::string& dir);
  // stat(2), following symlinks.
  virtual Result<FileStat> stat(const std::string& path) = 0;
  // Up to `length` bytes at `offset` (fewer at the end of the file) of a regular file (the real one
  // opens with O_NONBLOCK and refuses FIFOs and devices).
  virtual Result<std::string> read_range(const std::string& path, std::uint64_t offset,
                                         std::uint64_t length) = 0;
  // Wall clock (same epoch as mtime_ns).
  virtual std::int64_t now_ns() = 0;
  virtual void sleep_for(std::chrono::milliseconds duration) = 0;

  // A stop request (the watcher's stop()): the walk and the watcher's pass over candidates end
  // early when it is set, so a SIGTERM is not kept waiting by a scan of 100,000 files.
  void set_stop(const std::atomic<bool>* stop) { stop_ = stop; }
  bool stopping() const { return stop_ != nullptr && stop_->load(std::memory_order_relaxed); }

 private:
  const std::atomic<bool>* stop_ = nullptr;
};

class RealCheckpointFs final : public CheckpointFs {
 public:
  // `split_large_dirs`: list a large ext4 directory in parallel slices (split_listing.h); false
  // for a background rescan, which should cost as little CPU as it can rather than finish soonest.
  explicit RealCheckpointFs(bool split_large_dirs = true) : split_(split_large_dirs) {}
  Status list_each(const std::string& dir, const EachEntry& each) override;
  Status list_into(const std::string& dir, std::uint64_t dir_bytes, Listing& out) override;
  Result<FileStat> stat(const std::string& path) override;
  Result<std::string> read_range(const std::string& path, std::uint64_t offset,
                                 std::uint64_t length) override;
  std::int64_t now_ns() override;
  void sleep_for(std::chrono::milliseconds duration) override;

 private:
  bool split_;
};

}  // namespace tv
