#include "checkpoint/tree_walk.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

namespace tv {
namespace {

using DirId = std::pair<std::uint64_t, std::uint64_t>;

struct Pending {
  std::string path;
  std::string rel;
  std::uint32_t parent = kNoDir;
  std::uint64_t bytes = 0;  // the directory's st_size: a hint of how many names it holds
};

class Walker {
 public:
  Walker(CheckpointFs& fs, Tree& tree) : fs_(fs), tree_(tree) {}

  void run(const std::string& root) {
    auto st = fs_.stat(root);
    if (!st && st.error().message != "No such file or directory") {
      spdlog::warn("checkpoint: cannot read {}: {}", root, st.error().message);
      return;
    }
    if (!st || !st->is_directory) {
      spdlog::debug("checkpoint: {} is not a directory; nothing to resume", root);
      return;
    }
    visited_.insert({st->device, st->inode});
    stack_.push_back({root, "", kNoDir, st->size});
    while (!stack_.empty() && !fs_.stopping()) {
      Pending p = std::move(stack_.back());
      stack_.pop_back();
      visit(p);
    }
  }

 private:
  void visit(const Pending& p) {
    ListedDir dir;
    dir.path = p.path;
    dir.rel = p.rel;
    dir.parent = p.parent;
    const auto index = static_cast<std::uint32_t>(tree_.dirs.size());
    Listing listing;
    auto listed = fs_.list_into(p.path, p.bytes, listing);
    if (!listed) {
      spdlog::warn("checkpoint: skipping directory {}: {}", p.path, listed.error().message);
      return;
    }
    dir.files = std::move(listing.files);
    for (const auto& other : listing.others) classify(p, other.name, other.type, dir, index);
    tree_.dirs.push_back(std::move(dir));
  }

  static void add(NameList& list, const Pending& p, std::string_view name) {
    if (!list.add(name)) spdlog::warn("checkpoint: skipping {}/{}: name too long", p.path, name);
  }

  void classify(const Pending& p, std::string_view name, EntryType type, ListedDir& dir,
                std::uint32_t index) {
    if (type == EntryType::kFile) return add(dir.files, p, name);
    if (type == EntryType::kOther) return;
    const std::string path = join_path(p.path, name);
    auto st = fs_.stat(path);  // directories, links and unknown types: follow
    if (!st) {
      spdlog::warn("checkpoint: skipping {}: {}", path, st.error().message);
      return;
    }
    if (st->is_regular) return add(dir.files, p, name);
    if (!st->is_directory) return;
    if (!visited_.insert({st->device, st->inode}).second) {
      if (type == EntryType::kSymlink)
        spdlog::warn("checkpoint: not following {}: directory already visited (link loop?)", path);
      return;
    }
    if (!dir.subdirs.add(name)) return spdlog::warn("checkpoint: skipping {}: name too long", path);
    std::string rel = p.rel.empty() ? std::string(name) : p.rel + "/" + std::string(name);
    stack_.push_back({path, std::move(rel), index, st->size});
  }

  CheckpointFs& fs_;
  Tree& tree_;
  std::set<DirId> visited_;
  std::vector<Pending> stack_;
};

}  // namespace

std::string join_path(const std::string& dir, std::string_view name) {
  std::string out;
  out.reserve(dir.size() + 1 + name.size());
  out = dir;
  if (!out.empty() && out.back() != '/') out += '/';
  out += name;
  return out;
}

std::uint32_t Tree::find(std::string_view path) const {
  for (std::size_t i = 0; i < dirs.size(); ++i)
    if (dirs[i].path == path) return static_cast<std::uint32_t>(i);
  return kNoDir;
}

std::uint32_t Tree::ancestor(std::uint32_t i, int up) const {
  for (; up > 0 && i != kNoDir; --up) i = dirs[i].parent;
  return i;
}

Tree walk_tree(CheckpointFs& fs, const std::string& root) {
  Tree tree{root, {}};
  Walker(fs, tree).run(root);
  return tree;
}

}  // namespace tv
