// Discovery = walk + recognize + order + integrity: the pieces resume.cc, the watcher and the
// `checkpoint` command share. Everything goes through CheckpointFs.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/candidates.h"
#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/resume.h"

namespace tv {

// Every candidate of `format` under the tree, newest first (the watcher looks at all of them).
// `format` must have passed validate_checkpoint_format.
std::vector<Candidate> discover_in(CheckpointFs& fs, const Tree& tree, const std::string& format);
std::vector<Candidate> discover(CheckpointFs& fs, const std::string& dir,
                                const std::string& format);

struct SelectOptions {
  std::string mode = "latest";  // latest|best
  std::chrono::milliseconds settle = std::chrono::seconds(2);
  int settle_waits = 3;  // a settling candidate is waited for at most this many times
  bool verify = true;    // CRC-check the zip files of the chosen candidate (verify_for_resume)
};

// The newest complete candidate. Keys are ordered lazily (a heap): only the candidates examined
// are materialized. Each candidate skipped on the way is logged once.
std::optional<Checkpoint> select_checkpoint(CheckpointFs& fs, const Tree& tree,
                                            const std::string& format,
                                            const SelectOptions& options);

}  // namespace tv
