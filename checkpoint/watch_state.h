// The watcher's memory between scans, without threads or inotify, so unit tests drive it with a
// fake file system and clock. A candidate is reported once each time it becomes complete (again:
// a rewritten best_agent.pt or DCP directory is reported when its new contents are complete).
// "Stopped changing" for a .pt here: the same (size, mtime) as at the previous scan, or as at an
// inotify close-after-write (note_closed), or older than the settle window.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/candidates.h"
#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/watcher.h"

namespace tv {

class WatchState {
 public:
  WatchState(std::string dir, std::string format, std::int64_t settle_ns = 2'000'000'000);
  // First scan: what is complete already is remembered, not reported.
  void baseline(CheckpointFs& fs);
  std::vector<CheckpointEvent> scan(CheckpointFs& fs);
  // An inotify IN_CLOSE_WRITE for `path`: its current stat counts as stable.
  void note_closed(CheckpointFs& fs, const std::string& path);
  // True when the last scan saw a checkpoint whose bytes are complete but that has not yet been
  // seen unchanged: rescan soon (a short second look) instead of a whole poll interval later.
  bool settling() const { return settling_; }
  // Directories seen by the last scan (the watcher adds inotify watches for them).
  const std::vector<std::string>& directories() const { return directories_; }

 private:
  struct Sig {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const Sig&) const = default;
  };
  std::vector<CheckpointEvent> pass(CheckpointFs& fs, bool report);
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
};

}  // namespace tv
