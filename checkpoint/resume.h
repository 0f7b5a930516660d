// Resume selection: the newest complete checkpoint under a directory, for `trainvisor run` and
// `trainvisor checkpoint latest`. docs/checkpoints.md has the rules (what "complete" means for
// each format, how "latest" and "best" are ordered).
//
// Contract: these functions never throw and never stop the job over one bad entry: corrupt,
// partial, unreadable and permission-denied entries are skipped with one spdlog line each.
// Thread-safe (no shared state); they touch the file system only through CheckpointFs.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

class CheckpointFs;

struct Checkpoint {
  std::string path;    // what {} in --resume-arg becomes: a .pt file, a DCP directory, a glob match
  std::string format;  // "skrl", "dcp" or "glob"
  std::int64_t step = -1;       // from the name; -1 when the name has none
  std::uint64_t bytes = 0;      // all files that make up the checkpoint
  std::string run;              // skrl: the run directory's name ("" when not in a timestamped run)
  std::int64_t mtime_ns = 0;    // when it became complete (newest file / .metadata / marker)
  std::int64_t started_ns = 0;  // when writing began (birth time where known, else 0)
  std::vector<std::string> files;  // every file that makes up the checkpoint
};

struct ResumeRequest {
  std::string dir;
  std::string format = "auto";  // auto|skrl|dcp|glob:PATTERN
  std::string mode = "latest";  // latest|best|none
  // A file whose mtime is younger than this has not "stopped changing" yet: resume waits out
  // the rest of the window once and re-checks it (see docs/checkpoints.md).
  std::chrono::milliseconds settle = std::chrono::seconds(2);
};

// Newest complete checkpoint, or nullopt (mode none, nothing there, dir missing). Never throws.
std::optional<Checkpoint> find_resume_checkpoint(const ResumeRequest& request);
// The same against any file system (unit tests pass a fake one).
std::optional<Checkpoint> find_resume_checkpoint(const ResumeRequest& request, CheckpointFs& fs);

// "auto|skrl|dcp|glob:PATTERN"; anything else is exit 78 naming --checkpoint-format.
Status validate_checkpoint_format(const std::string& format);

// --link-logs PATH: PATH is the framework's log directory (e.g. logs/skrl). After the call,
// <checkpoint_dir>/<basename(PATH)> is that directory, or a symlink to it, so the logs are synced
// with the checkpoints. Safe when PATH does not exist yet (it is created), when PATH already is a
// link into the checkpoint dir (another node or an earlier start did it), and when the link is
// already there. An existing real directory at PATH is moved into the checkpoint dir first.
// Errors (exit 78) name --link-logs, the path and the reason.
Status link_logs(const std::string& spec, const std::string& checkpoint_dir);

}  // namespace tv
