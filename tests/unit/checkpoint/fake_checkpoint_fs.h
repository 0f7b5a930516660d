// In-memory CheckpointFs with a fake clock, for unit tests: files, directories, symlinks,
// permission-denied paths. sleep_for advances the clock and runs an optional hook (to change
// the tree "while" the code under test waits).
#pragma once

#include <zlib.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_fs.h"
#include "common/exit_codes.h"

namespace tv::testing {

class FakeCheckpointFs final : public CheckpointFs {
 public:
  static constexpr std::int64_t kSecond = 1'000'000'000;

  void add_dir(const std::string& path) {
    if (path.empty() || nodes_.count(path)) return;
    add_dir(parent(path));
    touch_parent(path);
    nodes_[path] = Node{Node::kDir, "", now_, 0, next_inode_++, "", now_};
  }
  // A file modified at `mtime` (default: now - 1 hour, i.e. long settled).
  void add_file(const std::string& path, std::string contents, std::int64_t mtime = -1) {
    add_dir(parent(path));
    const std::int64_t t = mtime < 0 ? now_ - 3600 * kSecond : mtime;
    if (!nodes_.count(path)) touch_parent(path);  // a new name changes its directory
    nodes_[path] = Node{Node::kFile, std::move(contents), t, t, next_inode_++, "", now_};
  }
  void add_symlink(const std::string& path, const std::string& target) {
    add_dir(parent(path));
    touch_parent(path);
    nodes_[path] = Node{Node::kLink, "", now_, 0, next_inode_++, target, now_};
  }
  void remove(const std::string& path) {
    if (nodes_.erase(path)) touch_parent(path);
  }
  // Sets a node's mtime as `touch -d` or a sync tool does (the ctime moves to now, as it must).
  void set_mtime(const std::string& path, std::int64_t mtime) {
    nodes_.at(path).mtime = mtime;
    nodes_.at(path).ctime = now_;
  }
  // File system calls, counted (what a steady scan costs).
  int stats = 0;
  int lists = 0;
  int reads = 0;
  void deny(const std::string& path) { denied_.push_back(path); }
  void set_now(std::int64_t ns) { now_ = ns; }
  std::int64_t now() const { return now_; }
  std::function<void()> on_sleep;
  int sleeps = 0;

  Status list_each(const std::string& dir, const EachEntry& each) override {
    ++lists;
    auto r = resolve(dir);
    if (!r) return r.error();
    if (is_denied(*r)) return denied();
    auto it = nodes_.find(*r);
    if (it == nodes_.end() || it->second.type != Node::kDir) return enoent();
    const std::string prefix = *r + "/";
    for (auto c = nodes_.lower_bound(prefix); c != nodes_.end() && c->first.starts_with(prefix);
         ++c) {
      const std::string name = c->first.substr(prefix.size());
      if (name.find('/') != std::string::npos) continue;
      each(name, c->second.type == Node::kFile  ? EntryType::kFile
                 : c->second.type == Node::kDir ? EntryType::kDirectory
                                                : EntryType::kSymlink);
    }
    return ok_status();
  }
  Result<FileStat> stat(const std::string& path) override {
    ++stats;
    auto r = resolve(path);
    if (!r) return r.error();
    if (is_denied(parent(*r))) return denied();
    auto it = nodes_.find(*r);
    if (it == nodes_.end()) return enoent();
    const Node& n = it->second;
    return FileStat{n.type == Node::kDir,
                    n.type == Node::kFile,
                    n.contents.size(),
                    n.mtime,
                    n.btime,
                    1,
                    n.inode,
                    n.ctime};
  }
  Result<std::string> read_range(const std::string& path, std::uint64_t offset,
                                 std::uint64_t length) override {
    ++reads;
    auto r = resolve(path);
    if (!r) return r.error();
    if (is_denied(*r) || is_denied(parent(*r))) return denied();
    auto it = nodes_.find(*r);
    if (it == nodes_.end()) return enoent();
    const std::string& c = it->second.contents;
    if (offset >= c.size()) return std::string();
    return c.substr(offset, length);
  }
  std::int64_t now_ns() override { return now_; }
  void sleep_for(std::chrono::milliseconds d) override {
    ++sleeps;
    now_ += std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    if (on_sleep) on_sleep();
  }

 private:
  struct Node {
    enum Type { kFile, kDir, kLink } type;
    std::string contents;
    std::int64_t mtime;
    std::int64_t btime;
    std::uint64_t inode;
    std::string target;
    std::int64_t ctime = 0;
  };
  // A directory's mtime and ctime move when a name in it is added or removed.
  void touch_parent(const std::string& path) {
    auto it = nodes_.find(parent(path));
    if (it != nodes_.end() && it->second.type == Node::kDir)
      it->second.mtime = it->second.ctime = now_;
  }
  static std::string parent(const std::string& p) {
    auto s = p.rfind('/');
    return s == std::string::npos || s == 0 ? "" : p.substr(0, s);
  }
  static Error enoent() { return Error{ErrorKind::kFailed, "No such file or directory"}; }
  static Error denied() { return Error{ErrorKind::kFailed, "Permission denied"}; }
  bool is_denied(const std::string& p) const {
    for (const auto& d : denied_)
      if (p == d || p.starts_with(d + "/")) return true;
    return false;
  }
  // Replaces symlinked prefixes until none is left (40 rounds, like ELOOP).
  Result<std::string> resolve(std::string path) const {
    for (int round = 0; round < 40; ++round) {
      bool changed = false;
      for (std::string pre = path; !pre.empty(); pre = parent(pre)) {
        auto it = nodes_.find(pre);
        if (it != nodes_.end() && it->second.type == Node::kLink) {
          path = it->second.target + path.substr(pre.size());
          changed = true;
          break;
        }
      }
      if (!changed) return path;
    }
    return Error{ErrorKind::kFailed, "Too many levels of symbolic links"};
  }

  std::map<std::string, Node> nodes_;
  std::vector<std::string> denied_;
  std::int64_t now_ = 1'700'000'000 * kSecond;
  std::uint64_t next_inode_ = 1;
};

// A minimal but well-formed zip archive (one stored entry): what torch.save's format looks like
// to the end-record check.
inline std::string make_zip(const std::string& payload = "data", const std::string& comment = "") {
  auto u16 = [](std::string& s, unsigned v) {
    s += char(v & 0xff);
    s += char((v >> 8) & 0xff);
  };
  auto u32 = [&](std::string& s, std::uint32_t v) {
    u16(s, v & 0xffff);
    u16(s, v >> 16);
  };
  const std::string name = "archive/data.pkl";
  const auto crc = static_cast<std::uint32_t>(
      ::crc32(0L, reinterpret_cast<const Bytef*>(payload.data()), payload.size()));
  std::string z;
  u32(z, 0x04034b50);
  u16(z, 20);
  u16(z, 0);
  u16(z, 0);
  u16(z, 0);
  u16(z, 0);
  u32(z, crc);
  u32(z, payload.size());
  u32(z, payload.size());
  u16(z, name.size());
  u16(z, 0);
  z += name + payload;
  const std::uint32_t cd_offset = z.size();
  std::string cd;
  u32(cd, 0x02014b50);
  u16(cd, 20);
  u16(cd, 20);
  u16(cd, 0);
  u16(cd, 0);
  u16(cd, 0);
  u16(cd, 0);
  u32(cd, crc);
  u32(cd, payload.size());
  u32(cd, payload.size());
  u16(cd, name.size());
  u16(cd, 0);
  u16(cd, 0);
  u16(cd, 0);
  u16(cd, 0);
  u32(cd, 0);
  u32(cd, 0);
  cd += name;
  z += cd;
  u32(z, 0x06054b50);
  u16(z, 0);
  u16(z, 0);
  u16(z, 1);
  u16(z, 1);
  u32(z, cd.size());
  u32(z, cd_offset);
  u16(z, comment.size());
  return z + comment;
}

}  // namespace tv::testing
