// The watcher's memory between scans, without threads or inotify, so unit tests drive it with a
// fake file system and clock. A candidate is reported once each time it becomes complete (again:
// a rewritten best_agent.pt or DCP directory is reported when its new contents are complete).
// "Stopped changing" for a .pt here: the same (size, mtime) as at the previous scan, or as at an
// inotify close-after-write (note_closed), or older than the settle window.
//
// Between changes a scan costs a stat per directory that can change, not a walk
// (docs/checkpoints.md, "Watcher"): the last walk is remembered with each directory's (device,
// inode, size, mtime, ctime). A scan walks and looks at candidates again only when one of these
// differs, or a directory was listed within kRacyNs of its own mtime (a change in the same
// timestamp tick would not show), or a file of a checkpoint still being judged changed, or
// note_change() was called (inotify). Directories inside a complete directory checkpoint (a DCP
// step-N/, an HF checkpoint-N/) are stat'ed a slice per scan, every one within kColdRounds scans,
// except the kHotUnits newest, which are stat'ed every scan, as every other directory is.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/candidates.h"
#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/watcher.h"

namespace tv {

// A directory whose mtime or ctime is this close to (or after) when it was listed may have
// changed again within the same timestamp tick (ext4 and XFS take it from the kernel's coarse
// clock; NFS servers may keep whole seconds, FAT two): it is listed again at the next scan.
inline constexpr std::int64_t kRacyNs = 2'000'000'000;
// Directories inside complete directory checkpoints: every one stat'ed within this many scans.
inline constexpr std::size_t kColdRounds = 128;
// The newest complete directory checkpoints (by mtime) stay stat'ed at every scan.
inline constexpr std::size_t kHotUnits = 4;

class WatchState {
 public:
  WatchState(std::string dir, std::string format, std::int64_t settle_ns = 2'000'000'000);
  // First scan: what is complete already is remembered, not reported.
  void baseline(CheckpointFs& fs);
  std::vector<CheckpointEvent> scan(CheckpointFs& fs);
  // An inotify IN_CLOSE_WRITE for `path`: its current stat counts as stable.
  void note_closed(CheckpointFs& fs, const std::string& path);
  // Something changed under the directory (an inotify event): the next scan walks.
  void note_change() { walk_next_ = true; }
  // True when the last scan saw a checkpoint whose bytes are complete but that has not yet been
  // seen unchanged: rescan soon (a short second look) instead of a whole poll interval later.
  bool settling() const { return settling_; }
  // The checkpoints the scans since the last call saw being written (new, or rewritten after they
  // were complete) and not yet complete: each once per save. Not at the first scan (baseline).
  std::vector<Checkpoint> take_started() { return std::exchange(started_, {}); }
  // How many checkpoints the scans so far found complete (after the baseline: those already there).
  std::size_t complete() const { return done_.size(); }
  // Directories seen by the last scan (the watcher adds inotify watches for them).
  const std::vector<std::string>& directories() const { return directories_; }

 private:
  struct Sig {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const Sig&) const = default;
  };
  // What a later scan stats to see whether anything changed.
  struct Watched {
    std::string path;
    FileStat stat;
  };
  std::vector<CheckpointEvent> pass(CheckpointFs& fs, bool report);
  bool unchanged(CheckpointFs& fs);
  bool same(CheckpointFs& fs, const Watched& w, bool directory) const;
  void remember_tree(const Tree& tree, std::int64_t listed_ns);
  void keep_watching(const Candidate& c, const FileStat& primary, bool done,
                     const std::vector<Watched>& files);
  bool stable(const std::string& path, const FileStat& st) const;
  // One candidate of a pass; `key` is the path its key names.
  void remember(const std::string& key, const Candidate& c);
  void look(CheckpointFs& fs, const std::string& key, Candidate& c, bool report, std::int64_t now,
            std::map<std::string, Sig>& seen, std::vector<CheckpointEvent>& events);

  std::string dir_;
  std::string format_;
  std::int64_t settle_ns_;
  std::map<std::string, Sig> done_;      // primary -> its stat when last complete
  std::map<std::string, Sig> previous_;  // every stat'ed file -> stat at the previous scan
  std::map<std::string, Sig> closed_;    // file -> stat at its last close-after-write
  std::map<std::string, std::int64_t> first_seen_ns_;
  std::set<std::string> known_keys_;  // key and file paths of write-once checkpoints done
  std::set<std::string> logged_;      // path + reason, so each skip is logged once
  std::int64_t previous_event_ns_ = -1;
  bool settling_ = false;
  std::vector<std::string> directories_;
  bool walk_next_ = true;
  std::int64_t listed_ns_ = 0;           // when the last walk began
  std::vector<Watched> hot_;             // stat'ed at every scan
  std::vector<Watched> cold_;            // inside complete directory checkpoints: a slice
  std::size_t cold_next_ = 0;            // where the next slice of cold_ begins
  std::vector<Watched> files_;           // files of checkpoints still judged, rewritten ones
  std::vector<std::string> done_units_;  // complete directory checkpoints of the last pass
  std::set<std::string> writing_;        // primaries seen being written, not complete since
  std::vector<Checkpoint> started_;      // for take_started()
};

}  // namespace tv
