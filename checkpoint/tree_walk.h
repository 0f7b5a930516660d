// One walk over a checkpoint directory: every directory reached (symlinked ones too, each
// directory once, so symlink loops end) with the names of the files in it. Directories that
// cannot be listed and dangling or looping links are logged once each and skipped.
// Names are kept in chunks per directory (NameList), so 100,000 files cost a few chunks and one
// array of offsets, not 100,000 strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/name_list.h"

namespace tv {

inline constexpr std::uint32_t kNoDir = 0xFFFFFFFF;

struct ListedDir {
  std::string path;                // as reached: root + "/" + relative path
  std::string rel;                 // relative to the root; "" for the root
  std::uint32_t parent = kNoDir;   // index in Tree::dirs
  NameList files;                  // regular files (or links to them), in listing order
  NameList subdirs;                // names of the directories walked into
  FileStat stat;                   // the directory's own stat, taken just before it was listed
  std::string_view name() const {  // last component of rel ("" for the root)
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? std::string_view(rel)
                                      : std::string_view(rel).substr(slash + 1);
  }
  // Indexes in Tree::dirs of the directories listed below it, ascending: a directory's
  // subdirectories without a pass over every directory of the tree.
  std::vector<std::uint32_t> children;
};

struct Tree {
  std::string root;
  std::vector<ListedDir> dirs;  // dirs[0] is the root when it could be listed
  // Directories in which a family of numbered checkpoint directories was cut to its newest
  // (WalkOptions::newest_of_families): only the kNewestOfFamily highest-numbered were walked.
  std::vector<std::uint32_t> cut_families;
  // Index of the directory at `path`, or kNoDir.
  std::uint32_t find(std::string_view path) const;
  // The directory `up` levels above dirs[i] (0: itself), or kNoDir.
  std::uint32_t ancestor(std::uint32_t i, int up) const;
};

// An empty Tree when root is missing or not a directory (logged at debug level only: a missing
// checkpoint directory is the normal first start).
// A family: at least kFamilyCut subdirectories of one directory named <prefix><digits> with the
// same prefix (iter_0000100, step-100, checkpoint-100, global_step100, 100, ...). With
// `newest_of_families`, only its kNewestOfFamily highest-numbered are walked (listed), the rest
// are neither stat'ed nor listed: the resume lookup of 10,000 Megatron iter_* directories lists 16.
// The caller walks again without it when the answer may lie in the rest (resume.cc).
inline constexpr std::size_t kFamilyCut = 256;
inline constexpr std::size_t kNewestOfFamily = 16;
Tree walk_tree(CheckpointFs& fs, const std::string& root, bool newest_of_families = false);

std::string join_path(const std::string& dir, std::string_view name);

}  // namespace tv
