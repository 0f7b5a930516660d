// Resume selection: the newest complete checkpoint under a directory, for `trainvisor run` and
// `trainvisor checkpoint latest`. docs/checkpoints.md has the rules (what "complete" means for
// each format, how "latest" and "best" are ordered).
//
// Contract: these functions never throw and never stop the job over one bad entry: corrupt,
// partial, unreadable and permission-denied entries are skipped with one spdlog line each.
// Thread-safe (no shared state); they touch the file system only through CheckpointFs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

class CheckpointFs;

struct Checkpoint {
  std::string path;           // what {} in --resume-arg becomes: a file, or a checkpoint directory
  std::string format;         // skrl, rsl_rl, rl_games, dcp, cosmos-rl, cosmos-predict2, hf, ...
  std::int64_t step = -1;     // from the name (Lightning last*.ckpt: from its content); -1: none
  std::uint64_t bytes = 0;    // all files that make up the checkpoint
  std::string run;            // the run directory's name
  std::string run_dir;        // the run directory (where the framework's run lives)
  bool directory = false;     // the checkpoint is a directory (DCP, HF, DeepSpeed, ...)
  std::int64_t mtime_ns = 0;  // when it became complete (newest file / .metadata / marker)
  std::int64_t started_ns = 0;     // when writing began (birth time where known, else 0)
  std::vector<std::string> files;  // every file that makes up the checkpoint
};

// One save of a checkpoint: its path and when it became complete. A save written again at the
// same path later (a resumed run saving that step again) is another one.
struct CheckpointSave {
  std::string path;
  std::int64_t mtime_ns = 0;  // Checkpoint::mtime_ns; 0: any save at the path
};

// Which checkpoint a lookup picks: the newest complete one, or the one its format names best
// (rl_games' `nn/<name>.pth`, skrl's `best_agent.pt`, timm's `model_best.pth.tar` ...).
enum class Pick { kLatest, kBest };

struct ResumeRequest {
  std::string dir;
  std::string format = "auto";  // auto, a framework (kCheckpointFormats), or glob:PATTERN[,RULE]
  Pick mode = Pick::kLatest;    // --resume none makes no request at all
  // A file whose mtime is younger than this has not "stopped changing" yet: resume waits out
  // the rest of the window once and re-checks it (see docs/checkpoints.md).
  std::chrono::milliseconds settle = std::chrono::seconds(2);
  // When the directory holds runs of several experiments: the one this job trains, exactly
  // (--checkpoint-experiment, or the worker's --experiment_name), or the worker's --task
  // (checkpoint/experiments.h). Neither, or no match: nothing is resumed and why_none says so.
  std::string experiment = {};
  std::string task = {};
  // Set while the lookup runs: it ends early, resuming nothing (Init::stop_requested in `run`).
  const std::atomic<bool>* stop = nullptr;
  // Saves never picked: those the job's ledger marks poisoned (--resume-fallback,
  // docs/checkpoints.md "A poisoned checkpoint is stepped over").
  std::vector<CheckpointSave> step_over = {};
};

// What a lookup found: the checkpoint, or one line saying why there is none, in one of four
// kinds: nothing there yet; files that no layout recognizes (naming one); candidates none of
// which is complete; runs that cannot be ordered.
struct Selection {
  enum class None { kFound, kEmpty, kUnrecognized, kIncomplete, kAmbiguous, kOtherExperiments };
  std::optional<Checkpoint> checkpoint;
  None none = None::kEmpty;
  std::string why_none;
};

// The newest complete checkpoint, or why not (`checkpoint latest` prints it). Never throws.
Selection lookup_checkpoint(const ResumeRequest& request, CheckpointFs& fs);

// lookup_checkpoint on the real file system, ended early by request.stop; unrecognized, ambiguous
// and other experiments' checkpoints are logged (warning), so `trainvisor run` says so at every
// start (find_resume_checkpoint too). Never throws.
Selection lookup_resume_checkpoint(const ResumeRequest& request);
// Newest complete checkpoint, or nullopt (mode none, nothing there, dir missing). Never throws.
std::optional<Checkpoint> find_resume_checkpoint(const ResumeRequest& request);
// The same against any file system (unit tests pass a fake one).
std::optional<Checkpoint> find_resume_checkpoint(const ResumeRequest& request, CheckpointFs& fs);

// The --checkpoint-format names besides glob:PATTERN[,RULE] (docs/checkpoints.md).
inline constexpr const char* kCheckpointFormats =
    "auto, skrl, rsl_rl, rl_games, dcp (torchtitan), cosmos-rl, cosmos-predict2, hf "
    "(accelerate), lightning, deepspeed, megatron, nemo, torchtune, orbax, sb3 "
    "(stable-baselines3), verl, timm, fairseq, "
    "glob:PATTERN[,done=SUFFIX|marker=NAME|pointer=FILE|settle=SECONDS]";

// One of kCheckpointFormats; anything else is exit 78 naming `option` (run's --checkpoint-format,
// `checkpoint latest`'s --format) and the format nearest the word, if one is near.
Status validate_checkpoint_format(const std::string& format,
                                  const std::string& option = "--checkpoint-format");

// --resume-arg TEMPLATE for a checkpoint: split on spaces into words (each one argument), then
// in each word {} and {path} = its path, {file} = the file's name,
// {dir} = the checkpoint directory (the path itself when the checkpoint is a directory, else the
// directory holding the file), {run} = the run directory's name, {run_dir} = the run directory,
// {step} = the step ("" when unknown), {{ and }} = literal braces. A template without any
// placeholder gets the path as a separate argument after it. Unknown placeholders are an
// error (78) naming --resume-arg, found by validate_resume_arg before anything starts.
std::vector<std::string> expand_resume_arg(const std::string& tmpl, const Checkpoint& c);
Status validate_resume_arg(const std::string& tmpl);

// --link-logs PATH: PATH is the framework's log directory (e.g. logs/skrl). After the call,
// <checkpoint_dir>/<basename(PATH)> is that directory, or a symlink to it, so the logs are synced
// with the checkpoints. Safe when PATH does not exist yet (it is created), when PATH already is a
// link into the checkpoint dir (another node or an earlier start did it), and when the link is
// already there. An existing real directory at PATH is moved into the checkpoint dir first.
// Errors (exit 78) name --link-logs, the path and the reason.
Status link_logs(const std::string& spec, const std::string& checkpoint_dir);

}  // namespace tv
