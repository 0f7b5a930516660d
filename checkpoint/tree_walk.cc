#include "checkpoint/tree_walk.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace tv {
namespace {

using DirId = std::pair<std::uint64_t, std::uint64_t>;

struct Pending {
  std::string path;
  std::string rel;
  std::uint32_t parent = kNoDir;
  FileStat stat;  // st_size is a hint of how many names it holds
};

class Walker {
 public:
  Walker(CheckpointFs& fs, Tree& tree, bool cut) : fs_(fs), tree_(tree), cut_(cut) {}

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
    stack_.push_back({root, "", kNoDir, *st});
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
    dir.stat = p.stat;
    const auto index = static_cast<std::uint32_t>(tree_.dirs.size());
    Listing listing;
    auto listed = fs_.list_into(p.path, p.stat.size, listing);
    if (!listed) {
      spdlog::warn("checkpoint: skipping directory {}: {}", p.path, listed.error().message);
      return;
    }
    dir.files = std::move(listing.files);
    const std::vector<bool> skip =
        cut_ ? older_of_families(listing.others, index) : std::vector<bool>();
    // Links last: a directory is walked under its own name, not under a link beside it that
    // names it too (LeRobot's checkpoints/last -> 000100).
    for (const bool links : {false, true})
      for (std::size_t i = 0; i < listing.others.size(); ++i)
        if ((skip.empty() || !skip[i]) && (listing.others[i].type == EntryType::kSymlink) == links)
          classify(p, listing.others[i].name, listing.others[i].type, dir, index);
    if (p.parent != kNoDir) tree_.dirs[p.parent].children.push_back(index);
    tree_.dirs.push_back(std::move(dir));
  }

  // <prefix><digits>: the prefix and number, or false.
  static bool numbered(std::string_view n, std::string_view& prefix, std::int64_t& number) {
    std::size_t at = n.size();
    while (at > 0 && n[at - 1] >= '0' && n[at - 1] <= '9') --at;
    if (at == n.size() || n.size() - at > 18) return false;
    prefix = n.substr(0, at);
    number = 0;
    for (const char c : n.substr(at)) number = number * 10 + (c - '0');
    return true;
  }

  // The directory entries of large families that are not among their kNewestOfFamily
  // highest-numbered (nothing when no family reaches kFamilyCut).
  std::vector<bool> older_of_families(const std::vector<DirEntry>& others, std::uint32_t index) {
    if (others.size() < kFamilyCut) return {};
    std::map<std::string_view, std::vector<std::pair<std::int64_t, std::size_t>>> families;
    for (std::size_t i = 0; i < others.size(); ++i) {
      std::string_view prefix;
      std::int64_t number = 0;
      if (others[i].type == EntryType::kDirectory && numbered(others[i].name, prefix, number))
        families[prefix].push_back({number, i});
    }
    std::vector<bool> skip;
    for (auto& [prefix, members] : families) {
      if (members.size() < kFamilyCut) continue;
      std::nth_element(members.begin(), members.begin() + kNewestOfFamily, members.end(),
                       std::greater<>());
      if (skip.empty()) skip.assign(others.size(), false);
      for (std::size_t m = kNewestOfFamily; m < members.size(); ++m) skip[members[m].second] = true;
      if (tree_.cut_families.empty() || tree_.cut_families.back() != index)
        tree_.cut_families.push_back(index);
    }
    return skip;
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
      if (type != EntryType::kSymlink) return;
      if (is_above(p, *st))
        spdlog::warn("checkpoint: not following {}: it links to a directory above it (link loop)",
                     path);
      else  // a second name of a directory walked already: an ordinary `last` or `latest` link
        spdlog::debug("checkpoint: not following {}: its directory is walked under another name",
                      path);
      return;
    }
    if (!dir.subdirs.add(name)) return spdlog::warn("checkpoint: skipping {}: name too long", path);
    std::string rel = p.rel.empty() ? std::string(name) : p.rel + "/" + std::string(name);
    stack_.push_back({path, std::move(rel), index, *st});
  }

  // `st` is the directory being listed or one of the directories above it.
  bool is_above(const Pending& p, const FileStat& st) const {
    auto same = [&](const FileStat& d) { return d.device == st.device && d.inode == st.inode; };
    if (same(p.stat)) return true;
    for (std::uint32_t d = p.parent; d != kNoDir; d = tree_.dirs[d].parent)
      if (same(tree_.dirs[d].stat)) return true;
    return false;
  }

  CheckpointFs& fs_;
  Tree& tree_;
  bool cut_;
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

Tree walk_tree(CheckpointFs& fs, const std::string& root, bool newest_of_families) {
  Tree tree{root, {}, {}};
  Walker(fs, tree, newest_of_families).run(root);
  return tree;
}

}  // namespace tv
