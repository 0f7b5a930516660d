// Is a candidate complete? (docs/checkpoints.md, "What complete means") Every part is checked
// by its content (candidates.h PartKind):
//   torch file (.pt/.pth/.ckpt/.bin/.pkl/.pickle): a zip's end-of-central-directory record
//     intact and the central directory where it says, or a pickle that parses to STOP at the
//     very end; and its size has stopped changing: mtime at least `settle` old, or
//     `known_stable` says this exact (size, mtime) was already seen (the watcher, the lookup's
//     second look). An mtime ahead of `now` (a writer whose clock runs ahead, on a shared file
//     system) says nothing about its age: settling for one whole window of this node's own time,
//     then settled when `known_stable` saw it unchanged; `ahead_ns` says how far ahead.
//   DCP directory: `.metadata` parses (safe pickle subset) and every storage file it names
//     exists and is at least as long as the furthest offset + length referring to it.
//   safetensors: the header parses and every tensor's data lies inside the file.
//   JSON marker (trainer_state.json): parses. Marker files: present.
//   Sharded-weights index (HF `*.safetensors.index.json`, `*.bin.index.json`): parses, and every
//     shard file its weight_map names is in its directory (plain names only).
// Then the framework's own rules: the parts the listing found missing, and a pointer written
// after every part (DeepSpeed `latest`, cosmos latest_checkpoint.txt) naming this step or later.
// verify_for_resume is the expensive last check of the candidate about to be resumed from:
// every zip part against its central directory with CRC-32 (zip_verify.h).
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
  std::int64_t ahead_ns = 0;        // the furthest a part's mtime is ahead of Judge::now_ns
};

struct Judge {
  std::int64_t now_ns = 0;
  std::int64_t settle_ns = 2'000'000'000;
  std::function<bool(const std::string& path, const FileStat&)> known_stable;  // may be empty
};

Judgement evaluate(Candidate& candidate, CheckpointFs& fs, const Judge& judge);

// CRC-32 and local headers of every zip part (reads every byte once). Complete or incomplete.
// `hash_data` false: local headers and bounds only (cheap; the watcher, before reporting).
Judgement verify_for_resume(const Candidate& candidate, CheckpointFs& fs, bool hash_data = true);

}  // namespace tv
