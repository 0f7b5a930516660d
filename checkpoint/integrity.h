// Is a candidate complete? (docs/checkpoints.md, "What complete means")
//   zip (.pt): its end-of-central-directory record is intact, the central directory starts where
//     the record says, and its size has stopped changing: mtime at least `settle` old, or
//     `known_stable` says this exact (size, mtime) was already seen earlier (the watcher: the
//     previous poll, or an inotify close-after-write).
//   dcp: every DCP directory has `.metadata` whose mtime is >= that of every other file in it.
//   glob: the marker exists and is not older than the match.
// Fills the candidate's bytes, mtime_ns and started_ns. Never throws; reasons are for log lines.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "checkpoint/candidates.h"
#include "checkpoint/checkpoint_fs.h"

namespace tv {

enum class Verdict { kComplete, kSettling, kIncomplete };

struct Judgement {
  Verdict verdict = Verdict::kIncomplete;
  std::string reason;               // why not complete
  std::int64_t settle_left_ns = 0;  // kSettling: how much longer until the window has passed
};

struct Judge {
  std::int64_t now_ns = 0;
  std::int64_t settle_ns = 2'000'000'000;
  std::function<bool(const std::string& path, const FileStat&)> known_stable;  // may be empty
};

Judgement evaluate(Candidate& candidate, CheckpointFs& fs, const Judge& judge);

}  // namespace tv
