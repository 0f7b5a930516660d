// One walk over a checkpoint directory: every directory reached (symlinked ones too, each
// directory once, so symlink loops end) with the names of the files in it. Directories that
// cannot be listed and dangling or looping links are logged once each and skipped.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_fs.h"

namespace tv {

struct ListedDir {
  std::string path;                  // as reached: root + "/" + relative path
  std::string rel;                   // relative to the root; "" for the root
  std::vector<std::string> files;    // regular files (or links to them), unsorted
  std::vector<std::string> subdirs;  // names of the directories walked into
};

struct Tree {
  std::string root;
  std::vector<ListedDir> dirs;  // dirs[0] is the root when it could be listed
};

// An empty Tree when root is missing or not a directory (logged at debug level only: a missing
// checkpoint directory is the normal first start).
Tree walk_tree(CheckpointFs& fs, const std::string& root);

std::string join_path(const std::string& dir, const std::string& name);

}  // namespace tv
