// One walk over a checkpoint directory: every directory reached (symlinked ones too, each
// directory once, so symlink loops end) with the names of the files in it. Directories that
// cannot be listed and dangling or looping links are logged once each and skipped.
// Names are kept in chunks per directory (NameList), so 100,000 files cost a few chunks and one
// array of offsets, not 100,000 strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_fs.h"

namespace tv {

// Names in chunks that never move, so adding never copies what is already there (a directory
// of 100,000 checkpoints touches each byte of its names once). Each name is one length byte and
// its bytes; chunks double from 256 bytes to 64 KiB, so a directory of two files costs 256
// bytes. Indexes are stable.
class NameList {
 public:
  static constexpr std::size_t kMaxName = 255;  // NAME_MAX: no directory entry is longer
  // false, and nothing added, for a name longer than kMaxName.
  bool add(std::string_view name);
  // Room for `names` offsets, so that a large directory's offset array is not copied as it grows
  // (a hint: more names are still added, fewer leave the rest untouched).
  void reserve(std::size_t names) { at_.reserve(names); }
  std::size_t size() const { return at_.size(); }
  bool empty() const { return at_.empty(); }
  std::string_view operator[](std::size_t i) const {
    const std::uint32_t at = at_[i];
    const char* p = chunks_[at >> kShift].get() + (at & (kLargest - 1));
    return {p + 1, static_cast<unsigned char>(*p)};
  }
  bool contains(std::string_view name) const {
    for (std::size_t i = 0; i < size(); ++i)
      if ((*this)[i] == name) return true;
    return false;
  }

 private:
  static constexpr unsigned kShift = 16;
  static constexpr std::size_t kLargest = std::size_t{1} << kShift;
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::size_t capacity_ = 0;       // of the last chunk
  std::size_t used_ = 0;           // of the last chunk
  std::vector<std::uint32_t> at_;  // chunk << kShift | offset of the length byte
};

inline constexpr std::uint32_t kNoDir = 0xFFFFFFFF;

struct ListedDir {
  std::string path;                // as reached: root + "/" + relative path
  std::string rel;                 // relative to the root; "" for the root
  std::uint32_t parent = kNoDir;   // index in Tree::dirs
  NameList files;                  // regular files (or links to them), in listing order
  NameList subdirs;                // names of the directories walked into
  std::string_view name() const {  // last component of rel ("" for the root)
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? std::string_view(rel)
                                      : std::string_view(rel).substr(slash + 1);
  }
};

struct Tree {
  std::string root;
  std::vector<ListedDir> dirs;  // dirs[0] is the root when it could be listed
  // Index of the directory at `path`, or kNoDir.
  std::uint32_t find(std::string_view path) const;
  // The directory `up` levels above dirs[i] (0: itself), or kNoDir.
  std::uint32_t ancestor(std::uint32_t i, int up) const;
};

// An empty Tree when root is missing or not a directory (logged at debug level only: a missing
// checkpoint directory is the normal first start).
Tree walk_tree(CheckpointFs& fs, const std::string& root);

std::string join_path(const std::string& dir, std::string_view name);

}  // namespace tv
