// Discovery = walk + recognize + order + integrity: the pieces resume.cc, the watcher and the
// `checkpoint` command share. Everything goes through CheckpointFs.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/candidates.h"
#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/experiments.h"
#include "checkpoint/resume.h"

namespace tv {

// The watcher's pass: candidates of `format`, oldest first (events come out in the order the
// checkpoints were written). `known` is asked with the path a key names (its file, or its
// directory) before the key is materialized; true skips it, so a scan over 100,000 checkpoints
// already reported builds none of them. `each` gets that path and the candidate.
// `format` must have passed validate_checkpoint_format.
using KnownKey = std::function<bool(const std::string& key_path)>;
using EachCandidate = std::function<void(const std::string& key_path, Candidate& candidate)>;
void each_candidate_oldest_first(CheckpointFs& fs, const Tree& tree, const std::string& format,
                                 const KnownKey& known, const EachCandidate& each);

struct SelectOptions {
  Pick mode = Pick::kLatest;
  std::chrono::milliseconds settle = std::chrono::seconds(2);
  int settle_waits = 3;  // a settling candidate is waited for at most this many times
  bool verify = true;    // CRC-check the zip files of the chosen candidate (verify_for_resume)
  ExperimentWanted experiment = {};            // runs of other experiments are never picked
  std::vector<CheckpointSave> step_over = {};  // never picked (ResumeRequest::step_over)
};

// The newest complete candidate, or why there is none (Selection::why_none, one line). Keys are
// ordered lazily (a heap): only the candidates examined are materialized. Each candidate skipped
// on the way is logged once.
Selection select_checkpoint(CheckpointFs& fs, const Tree& tree, const std::string& format,
                            const SelectOptions& options);

// Nothing recognized: the file that looks most like a checkpoint (by its name) that no layout of
// `format` claims, as "<path> matches no known layout; see --checkpoint-format", or "" when the
// tree holds nothing that looks like one.
std::string unrecognized(const Tree& tree, const std::string& format);

}  // namespace tv
