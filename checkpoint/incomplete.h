// The checkpoints under a directory that are not complete (docs/checkpoints.md, "What complete
// means"): what `--export` leaves out of the model directory (docs/export.md), so a save cut by
// the SIGTERM that ended the job, which trainvisor itself would never resume from, is not uploaded
// as part of the model. A checkpoint still in its settle window (written in the last 2 s, its
// content whole) is complete here: the run that wrote it has ended.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/checkpoint_fs.h"

namespace tv {

struct IncompleteCheckpoint {
  std::string path;                // the checkpoint: a file or a directory, as root + "/" + rel
  std::vector<std::string> parts;  // its files the listing found
  std::string reason;              // why it is not complete
};

// Every candidate of `format` (auto, or a framework's name) under `root` that is incomplete.
// Never throws; an unreadable tree gives none.
std::vector<IncompleteCheckpoint> incomplete_checkpoints(CheckpointFs& fs, const std::string& root,
                                                         const std::string& format = "auto");

}  // namespace tv
