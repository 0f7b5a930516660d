// Candidates: what a directory listing says could be a checkpoint, per format, newest first.
// Pure functions of a Tree (plus stat/reads through CheckpointFs where the order needs them);
// whether a candidate is complete is decided later, lazily, by integrity.h.
//
// skrl: `<name>_<step>.pt` and `best_<name>.pt`. A directory with several names for one step
//   (skrl's store_separately: policy_100.pt, value_100.pt, ...) holds per-module checkpoints:
//   one candidate per step, made of all its files. Ordered by run directory
//   (YYYY-MM-DD_HH-MM-SS..., the nearest such ancestor; none sorts oldest), then step.
// dcp: a directory with `.metadata`, `.metadata.tmp` or `*.distcp` files; a step-less one inside
//   a stepped directory (cosmos: iter_000001000/model) belongs to its parent. Ordered by step,
//   then the framework's latest pointer (latest_checkpoint.txt / latest), then .metadata mtime.
// glob: matches of PATTERN (relative to the root, fnmatch with FNM_PATHNAME), each complete only
//   with a marker `<match>.done`; ordered by the marker's mtime (when it became complete).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/resume.h"
#include "checkpoint/tree_walk.h"

namespace tv {

enum class CandidateKind { kZip, kDcp, kGlob };

struct Candidate {
  Checkpoint checkpoint;  // path, format, step, run, files (zip files / DCP directories / match)
  CandidateKind kind = CandidateKind::kZip;
  bool best = false;       // skrl best_*.pt
  bool write_once = true;  // false when the same path is rewritten (best_*.pt, DCP, glob)
  std::string primary;     // the file whose stat stands for the checkpoint (watcher)
  std::string marker;      // glob: the completion marker
  std::string missing;     // already known incomplete from the listing: why
  std::int64_t order_ns = 0;
  bool pointed = false;  // named by the framework's latest pointer
};

std::vector<Candidate> skrl_candidates(const Tree& tree);
std::vector<Candidate> dcp_candidates(const Tree& tree, CheckpointFs& fs);
std::vector<Candidate> glob_candidates(const Tree& tree, const std::string& pattern,
                                       CheckpointFs& fs);

// The step in a name: the last run of digits ("iter_000001000" -> 1000), or -1.
std::int64_t step_in_name(const std::string& name);
// The YYYY-MM-DD_HH-MM-SS run directory nearest to the end of a relative path, or "".
std::string run_in_path(const std::string& rel);

}  // namespace tv
