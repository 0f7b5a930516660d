// Discovery = walk + candidates + integrity: the pieces resume.cc, the watcher and the
// `checkpoint` command share. Everything goes through CheckpointFs.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/candidates.h"
#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/resume.h"

namespace tv {

// Candidates of `format` (auto = skrl and dcp) under `dir`; within one format newest first.
// `format` must have passed validate_checkpoint_format.
std::vector<Candidate> discover(CheckpointFs& fs, const std::string& dir,
                                const std::string& format);
// The same over a tree already walked.
std::vector<Candidate> discover_in(CheckpointFs& fs, const Tree& tree, const std::string& format);

struct SelectOptions {
  std::string mode = "latest";  // latest|best
  std::chrono::milliseconds settle = std::chrono::seconds(2);
  int settle_waits = 3;  // a settling candidate is waited for at most this many times
};

// The newest complete candidate (per format, then the one that completed last across formats).
// Each candidate skipped on the way is logged once.
std::optional<Checkpoint> select_checkpoint(std::vector<Candidate> candidates, CheckpointFs& fs,
                                            const SelectOptions& options);

}  // namespace tv
