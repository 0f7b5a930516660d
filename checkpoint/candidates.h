// Candidates: what a directory listing says could be a checkpoint, per framework layout
// (docs/checkpoints.md has the table and the sources). Recognition is one pass over the walked
// tree that emits a small fixed-size Key per candidate (no allocation per candidate); keys are
// ordered (runs by the time in their name, else by the time of their newest checkpoint; within
// a run by step) and only the ones examined are turned into a full Candidate (materialize).
// Whether a candidate is complete is decided by integrity.h.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/catalog.h"
#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/resume.h"
#include "checkpoint/tree_walk.h"

namespace tv {

// How a part of a checkpoint is checked.
enum class PartKind : std::uint8_t {
  kTorch,        // torch.save output: zip (end record, settle; CRC when chosen) or legacy pickle
  kDcp,          // a DCP directory: .metadata parsed, every storage file long enough
  kSafetensors,  // header length and data offsets within the file
  kJson,         // must parse (trainer_state.json)
  kShardIndex,   // HF *.safetensors.index.json / *.bin.index.json: every weight_map shard present
  kExists,       // a marker or config file: present
};

struct Part {
  std::string path;
  PartKind kind = PartKind::kTorch;
};

// 24 bytes: a directory of 100,000 checkpoints costs 2.4 MB of keys.
struct Key {
  std::int64_t step = -1;
  std::uint32_t dir = 0;        // index in Tree::dirs
  std::uint32_t name = kNoDir;  // index in that dir's files; kNoDir: the directory itself
  std::uint32_t run = 0;        // run directory index
  std::uint8_t layout = 0;      // Layout
  std::uint8_t rank = 0;        // tie-break within a step (pointer, Lightning last-vN, ...)
  bool best = false;
};

// What recognition learnt about a directory that materializing needs again. The counts are what
// a save is held to by the other saves beside it: counted once per tree, not once per save.
struct DirFacts {
  bool unfinished = false;  // holds a NeMo `<name>-unfinished` marker
  // Megatron legacy: the most mp_rank_* directories one of its subdirectories has.
  std::uint32_t most_mp_ranks = 0;
  // cosmos-rl: the most .rank_<r>_complete markers of one policy/ directory two levels below it.
  std::uint32_t most_rank_markers = 0;
};

// How many subdirectories of dirs[d] are named mp_rank_* (Megatron legacy's rank directories).
std::uint32_t mp_rank_dirs(const Tree& tree, std::uint32_t d);
// The ranks r of the .rank_<r>_complete markers in `d` (cosmos-rl policy saves).
std::set<std::int64_t> rank_markers(const ListedDir& d);

// The skrl modules the files of one directory name (agent, policy, value, <uid>_policy, ...):
// what a set of that directory must hold, known from recognition, so that materializing a set
// need not read every name again. `overflow`: more than kMost, not recorded.
struct SkrlModule {
  std::string name;
  std::string_view ext;  // ".pt" or ".pickle"
  bool best = false;
};
struct SkrlModules {
  static constexpr std::size_t kMost = 64;
  std::vector<SkrlModule> modules;
  bool overflow = false;
};

struct Keys {
  std::vector<Key> keys;
  // By run directory index: when the run started (the time in its name), else when its
  // highest-step checkpoint was written (mtime).
  std::vector<std::int64_t> run_ns;
  std::vector<SkrlModules> skrl_modules;  // by directory index
  std::vector<DirFacts> facts;            // by directory index
};

// Which keys recognize keeps: every one, or only each run's newest (no best_* keys): one pass
// that stores no key per file, enough when the newest checkpoint is complete (the usual case).
enum class KeysWanted : std::uint8_t { kAll, kNewestPerRun };

// a is newer than b within one run: step, tie-break rank, then directory path and file name.
bool newer_in_run(const Tree& tree, const Key& a, const Key& b);

struct Candidate {
  Checkpoint checkpoint;  // path, format, step, run, run_dir, files
  Layout layout = Layout::kSkrl;
  std::vector<Part> parts;
  bool best = false;
  bool write_once = true;  // false when the same path is rewritten (best_*.pt, DCP, glob)
  std::string primary;     // the file whose stat stands for the checkpoint (watcher)
  std::string marker;      // glob: the completion marker
  std::string missing;     // already known incomplete from the listing: why
  // A pointer file written after every part (DeepSpeed `latest`, cosmos latest_checkpoint.txt):
  // the candidate is complete only if the pointer names this step or a later one.
  std::string pointer;
  std::string glob_rule;  // glob: marker/pointer/settle rule (see glob_candidates.cc)
  std::int64_t order_ns = 0;
};

// Keys of the candidates of the selected layouts, unordered.
Keys recognize(const Tree& tree, std::uint32_t layouts, CheckpointFs& fs,
               KeysWanted wanted = KeysWanted::kAll);
// The full candidate for a key (lists, paths, parts). Reads pointer files through fs. With
// `recognized` (what recognize returned), an skrl set is put together from the modules recognition
// saw and one stat per module, not from every name of the directory again.
Candidate materialize(const Tree& tree, const Key& key, CheckpointFs& fs,
                      const Keys* recognized = nullptr);

// glob:PATTERN[,rule]: candidates, already ordered newest first (see glob_candidates.cc).
std::vector<Candidate> glob_candidates(const Tree& tree, const std::string& spec, CheckpointFs& fs);
bool valid_glob_spec(const std::string& spec, std::string* why);

// Shared by the layouts.
std::string base_of(const std::string& path);
std::string parent_of(const std::string& path);
// The step a pointer file names (its content's last path component's last digits), or -1.
std::int64_t read_pointer_step(CheckpointFs& fs, const std::string& pointer);

}  // namespace tv
