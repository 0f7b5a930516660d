#include "checkpoint/tree_walk.h"

#include <spdlog/spdlog.h>

#include <set>
#include <utility>

namespace tv {
namespace {

using DirId = std::pair<std::uint64_t, std::uint64_t>;

struct Pending {
  std::string path;
  std::string rel;
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
    stack_.push_back({root, ""});
    while (!stack_.empty()) {
      Pending p = std::move(stack_.back());
      stack_.pop_back();
      visit(p);
    }
  }

 private:
  void visit(const Pending& p) {
    auto entries = fs_.list(p.path);
    if (!entries) {
      spdlog::warn("checkpoint: skipping directory {}: {}", p.path, entries.error().message);
      return;
    }
    ListedDir dir{p.path, p.rel, {}, {}};
    for (const auto& e : *entries) classify(p, e, dir);
    tree_.dirs.push_back(std::move(dir));
  }

  void classify(const Pending& p, const DirEntry& e, ListedDir& dir) {
    const std::string path = join_path(p.path, e.name);
    if (e.type == EntryType::kFile) return dir.files.push_back(e.name);
    if (e.type == EntryType::kOther) return;
    auto st = fs_.stat(path);  // directories, links and unknown types: follow
    if (!st) {
      spdlog::warn("checkpoint: skipping {}: {}", path, st.error().message);
      return;
    }
    if (st->is_regular) return dir.files.push_back(e.name);
    if (!st->is_directory) return;
    if (!visited_.insert({st->device, st->inode}).second) {
      if (e.type == EntryType::kSymlink)
        spdlog::warn("checkpoint: not following {}: directory already visited (link loop?)", path);
      return;
    }
    dir.subdirs.push_back(e.name);
    stack_.push_back({path, p.rel.empty() ? e.name : p.rel + "/" + e.name});
  }

  CheckpointFs& fs_;
  Tree& tree_;
  std::set<DirId> visited_;
  std::vector<Pending> stack_;
};

}  // namespace

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

Tree walk_tree(CheckpointFs& fs, const std::string& root) {
  Tree tree{root, {}};
  Walker(fs, tree).run(root);
  return tree;
}

}  // namespace tv
