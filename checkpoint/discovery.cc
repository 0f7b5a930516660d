#include "checkpoint/discovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "checkpoint/integrity.h"
#include "common/escape.h"

namespace tv {
namespace {

// a is newer than b: run time, run, then within the run (newer_in_run).
struct Newer {
  const Tree* tree;
  const std::vector<std::int64_t>* run_ns;
  bool operator()(const Key& a, const Key& b) const {
    const std::int64_t at = (*run_ns)[a.run], bt = (*run_ns)[b.run];
    if (std::tie(at, a.run) != std::tie(bt, b.run))
      return std::tie(at, a.run) > std::tie(bt, b.run);
    return newer_in_run(*tree, a, b);
  }
};

// Keys that make up one candidate (an skrl module set) are examined once.
using CandidateId = std::tuple<std::uint8_t, std::uint32_t, std::int64_t, bool, std::uint32_t>;
CandidateId id_of(const Key& k) {
  const bool set = static_cast<Layout>(k.layout) == Layout::kSkrl;
  return {k.layout, k.dir, k.step, k.best, set ? 0 : k.name};
}

// Newest-first iteration over keys without sorting them all (a heap, O(n) to build). Used only
// when the newest key of the one-pass recognition was not complete (newest_if_complete), and for
// best_* keys, which are few.
class KeyHeap {
 public:
  // `run_ns` must outlive the heap. Keys of `done` (already examined) are skipped.
  KeyHeap(std::vector<Key> keys, const std::vector<std::int64_t>& run_ns, const Tree& tree,
          std::set<CandidateId> done)
      : keys_(std::move(keys)), done_(std::move(done)), newer_{&tree, &run_ns} {
    std::make_heap(keys_.begin(), keys_.end(), older());
  }
  std::optional<Key> next() {
    while (!keys_.empty()) {
      std::pop_heap(keys_.begin(), keys_.end(), older());
      const Key k = keys_.back();
      keys_.pop_back();
      if (!done_.insert(id_of(k)).second) continue;
      return k;
    }
    return std::nullopt;
  }

 private:
  struct Older {
    Newer newer;
    bool operator()(const Key& a, const Key& b) const { return newer(b, a); }
  };
  Older older() const { return Older{newer_}; }
  std::vector<Key> keys_;
  std::set<CandidateId> done_;
  Newer newer_;
};

// One line per candidate whose newest file is dated ahead of this node's clock.
void warn_ahead(const Candidate& c, std::int64_t ahead_ns, std::chrono::milliseconds settle) {
  const std::string how =
      settle.count() > 0 ? "by looking at it again after " + std::to_string(settle.count()) + " ms"
                         : "by its content alone (no settle window here)";
  spdlog::warn(
      "checkpoint: {} is modified {:.1f} s in the future by this node's clock (written by a "
      "machine whose clock runs ahead?): whether it is still being written is decided {}, not by "
      "its age",
      escape_control(c.checkpoint.path), static_cast<double>(ahead_ns) / 1e9, how);
}

// Looks again after what is left of the settle window, at most o.settle_waits times; a file seen
// with the same size and mtime at the previous look has settled (known_stable): what this node
// observes decides, so an mtime ahead of its clock costs one window, not the skew (issue 58).
Judgement judge(Candidate& c, CheckpointFs& fs, const SelectOptions& o) {
  const std::int64_t settle_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(o.settle).count();
  std::map<std::string, std::pair<std::uint64_t, std::int64_t>> looked;
  const auto seen_before = [&looked](const std::string& path, const FileStat& st) {
    const std::pair now{st.size, st.mtime_ns};
    const auto [it, first] = looked.try_emplace(path, now);
    const bool same = !first && it->second == now;
    it->second = now;
    return same;
  };
  Judgement j;
  for (int wait = 0;; ++wait) {
    j = evaluate(c, fs, Judge{fs.now_ns(), settle_ns, seen_before});
    if (wait == 0 && j.ahead_ns > 0) warn_ahead(c, j.ahead_ns, o.settle);
    if (j.verdict != Verdict::kSettling || wait >= o.settle_waits) break;
    fs.sleep_for(std::chrono::milliseconds(j.settle_left_ns / 1'000'000 + 1));
  }
  if (j.verdict == Verdict::kComplete && o.verify) j = verify_for_resume(c, fs);
  if (j.verdict == Verdict::kSettling) j.reason = "still changing: " + j.reason;
  return j;
}

// A complete candidate that is a save the job's ledger marks poisoned.
bool stepped_over(const Candidate& c, const SelectOptions& o) {
  return std::any_of(o.step_over.begin(), o.step_over.end(), [&](const CheckpointSave& s) {
    return s.path == c.checkpoint.path && (s.mtime_ns == 0 || s.mtime_ns == c.checkpoint.mtime_ns);
  });
}

// Materializes and judges one key; the checkpoint when complete, else logs why not.
std::optional<Checkpoint> examine(CheckpointFs& fs, const Tree& tree, const Key& k,
                                  const Keys& keys, const SelectOptions& o) {
  Candidate c = materialize(tree, k, fs, &keys);
  const Judgement j = judge(c, fs, o);
  if (j.verdict == Verdict::kComplete && stepped_over(c, o)) {
    spdlog::info("checkpoint: stepping over {}: marked poisoned in the job's ledger",
                 escape_control(c.checkpoint.path));
    return std::nullopt;
  }
  if (j.verdict == Verdict::kComplete) return std::move(c.checkpoint);
  spdlog::warn("checkpoint: skipping {}: {}", c.checkpoint.path, j.reason);
  return std::nullopt;
}

std::optional<Checkpoint> first_complete_key(CheckpointFs& fs, const Tree& tree, Keys& keys,
                                             const SelectOptions& o, Key& chosen,
                                             std::set<CandidateId> done = {}) {
  KeyHeap heap(keys.keys, keys.run_ns, tree, std::move(done));
  while (auto k = fs.stopping() ? std::optional<Key>() : heap.next())  // a stop: no answer
    if (auto c = examine(fs, tree, *k, keys, o)) {
      chosen = *k;
      return c;
    }
  return std::nullopt;
}

// The usual case in one pass that stores no key per file: the newest key of each run, and of
// those the newest; when it is complete, that is the answer. `tried` gets it either way.
std::optional<Checkpoint> newest_if_complete(CheckpointFs& fs, const Tree& tree, const Keys& tops,
                                             const SelectOptions& o, std::set<CandidateId>& tried,
                                             Key& chosen) {
  if (tops.keys.empty()) return std::nullopt;
  const Newer newer{&tree, &tops.run_ns};
  const Key& newest = *std::max_element(tops.keys.begin(), tops.keys.end(),
                                        [&](const Key& a, const Key& b) { return newer(b, a); });
  tried.insert(id_of(newest));
  chosen = newest;
  return examine(fs, tree, newest, tops, o);
}

// Other runs that nothing orders against the chosen one's (the same time, from neither a stamp
// nor an mtime): the newest complete checkpoint of each.
std::vector<Checkpoint> tied_rivals(CheckpointFs& fs, const Tree& tree, const Keys& keys,
                                    const Key& chosen, const SelectOptions& o) {
  std::map<std::uint32_t, std::vector<Key>> tied;
  for (const Key& k : keys.keys)
    if (!k.best && k.run != chosen.run && keys.run_ns[k.run] == keys.run_ns[chosen.run])
      tied[k.run].push_back(k);
  std::vector<Checkpoint> rivals;
  for (auto& [run, run_keys] : tied) {
    if (fs.stopping()) break;
    std::sort(run_keys.begin(), run_keys.end(),
              [&](const Key& a, const Key& b) { return newer_in_run(tree, a, b); });
    constexpr std::size_t kMostLooks = 16;  // a run whose 16 newest are incomplete: not a rival
    for (std::size_t i = 0; i < run_keys.size() && i < kMostLooks; ++i) {
      Candidate c = materialize(tree, run_keys[i], fs, &keys);
      if (judge(c, fs, o).verdict != Verdict::kComplete || stepped_over(c, o)) continue;
      rivals.push_back(std::move(c.checkpoint));
      break;
    }
  }
  return rivals;
}

// The `global_step` of an HF Trainer checkpoint directory's trainer_state.json (transformers
// writes it last: trainer.py Trainer._save_checkpoint -> TrainerState.save_to_json), or -1.
// Other layouts (torchtune, accelerate) do not write one: theirs is not looked for.
std::int64_t trainer_global_step(CheckpointFs& fs, const Checkpoint& c) {
  if (!c.directory || c.format != "hf") return -1;
  constexpr std::uint64_t kMostBytes = 64 << 20;  // log_history grows with the run
  auto text = fs.read_range(c.path + "/trainer_state.json", 0, kMostBytes);
  if (!text) return -1;
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("global_step") || !j["global_step"].is_number_integer())
    return -1;
  return j["global_step"].get<std::int64_t>();
}

// Runs that the time does not order, by content: the one whose checkpoint has the highest
// trainer_state.json global_step, when every one has it and one alone is highest.
std::optional<Checkpoint> highest_global_step(CheckpointFs& fs, Checkpoint c,
                                              std::vector<Checkpoint>& rivals) {
  rivals.push_back(std::move(c));
  std::int64_t best = -1;
  std::size_t at = 0, ties = 0;
  for (std::size_t i = 0; i < rivals.size(); ++i) {
    const std::int64_t g = trainer_global_step(fs, rivals[i]);
    if (g < 0) return std::nullopt;
    if (g == best) ++ties;
    if (g > best) std::tie(best, at, ties) = std::tuple(g, i, 0);
  }
  if (ties > 0) return std::nullopt;
  return std::move(rivals[at]);
}

Selection found(Checkpoint c) { return {std::move(c), Selection::None::kFound, ""}; }

// The pick, unless another run is tied with its run and content does not order them either
// (then no pick, and why).
Selection unless_tied(CheckpointFs& fs, const Tree& tree, const Keys& keys, const Key& chosen,
                      Checkpoint c, const SelectOptions& o) {
  std::vector<Checkpoint> rivals = tied_rivals(fs, tree, keys, chosen, o);
  if (rivals.empty()) return found(std::move(c));
  const std::string other = rivals.front().run_dir, run_dir = c.run_dir;
  if (auto pick = highest_global_step(fs, std::move(c), rivals)) return found(std::move(*pick));
  return {std::nullopt, Selection::None::kAmbiguous,
          "cannot tell which run is newer: " + run_dir + " or " + other +
              " (no time stamp in their names, their newest checkpoints have the same mtime, and "
              "no trainer_state.json global_step tells them apart); point --checkpoint-dir at one "
              "of them"};
}

Selection select_glob(CheckpointFs& fs, const Tree& tree, const std::string& spec,
                      const SelectOptions& o) {
  auto candidates = glob_candidates(tree, spec, fs);
  for (auto& c : candidates) {
    const Judgement j = judge(c, fs, o);
    if (j.verdict == Verdict::kComplete && stepped_over(c, o)) continue;
    if (j.verdict == Verdict::kComplete) return found(std::move(c.checkpoint));
    spdlog::warn("checkpoint: skipping {}: {}", c.checkpoint.path, j.reason);
  }
  if (candidates.empty()) return {std::nullopt, Selection::None::kEmpty, ""};
  return {std::nullopt, Selection::None::kIncomplete, ""};
}

bool looks_like_checkpoint(std::string_view n) {
  static constexpr std::string_view kExts[] = {
      ".pt",     ".pth", ".ckpt", ".bin",     ".safetensors", ".distcp", ".pkl",
      ".pickle", ".zip", ".nemo", ".msgpack", ".h5",          ".npz",    ".tar"};
  for (const auto e : kExts)
    if (n.ends_with(e)) return true;
  return n == ".metadata" || n == "_CHECKPOINT_METADATA" || n == "metadata.json";
}

}  // namespace

void each_candidate_oldest_first(CheckpointFs& fs, const Tree& tree, const std::string& format,
                                 const KnownKey& known, const EachCandidate& each) {
  if (format.starts_with("glob:")) {
    auto candidates = glob_candidates(tree, format.substr(5), fs);
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it)
      if (!known(it->checkpoint.path)) each(it->checkpoint.path, *it);
    return;
  }
  Keys keys = recognize(tree, layouts_of_format(format), fs);
  const Newer newer{&tree, &keys.run_ns};
  std::sort(keys.keys.begin(), keys.keys.end(),
            [&](const Key& a, const Key& b) { return newer(b, a); });
  std::set<CandidateId> done;
  for (const Key& k : keys.keys) {
    if (fs.stopping()) return;
    const ListedDir& d = tree.dirs[k.dir];
    const std::string path = k.name == kNoDir ? d.path : join_path(d.path, d.files[k.name]);
    if (known(path) || !done.insert(id_of(k)).second) continue;
    // A set already reported was skipped above; a new one is put together from the modules
    // recognition saw, one stat per module (reading every name of its directory for each of
    // 30,000 new candidates, as the first scan has, was quadratic: seconds of CPU per scan).
    Candidate c = materialize(tree, k, fs, &keys);
    each(path, c);
  }
}

std::string unrecognized(const Tree& tree, const std::string& format) {
  std::string first;
  std::size_t count = 0;
  for (const auto& d : tree.dirs)
    for (std::size_t i = 0; i < d.files.size(); ++i) {
      const std::string_view n = d.files[i];
      if (!looks_like_checkpoint(n)) continue;
      std::string rel = d.rel.empty() ? std::string(n) : d.rel + "/" + std::string(n);
      if (count++ == 0 || rel < first) first = std::move(rel);
    }
  if (count == 0) return "";
  std::string line = escape_control(first);
  if (count > 1) line += " (and " + std::to_string(count - 1) + " more such files)";
  return line +
         (format == "auto" ? " matches no known layout"
                           : " matches no layout of --checkpoint-format " + format) +
         "; see --checkpoint-format (docs/checkpoints.md lists the layouts, glob: writes one)";
}

Selection select_checkpoint(CheckpointFs& fs, const Tree& tree, const std::string& format,
                            const SelectOptions& o) {
  if (format.starts_with("glob:")) return select_glob(fs, tree, format.substr(5), o);
  const std::uint32_t layouts = layouts_of_format(format);
  std::string other_experiments;
  // The keys of this job's experiment only (checkpoint/experiments.h), every time.
  auto keys_of = [&](KeysWanted wanted) {
    Keys keys = recognize(tree, layouts, fs, wanted);
    other_experiments = keep_experiment(tree, keys, o.experiment);
    return keys;
  };
  auto none = [&]() -> Selection {
    if (!other_experiments.empty())
      return {std::nullopt, Selection::None::kOtherExperiments, other_experiments};
    std::string why = unrecognized(tree, format);
    if (why.empty()) return {std::nullopt, Selection::None::kEmpty, ""};
    return {std::nullopt, Selection::None::kUnrecognized, std::move(why)};
  };
  std::set<CandidateId> tried;
  Key chosen;
  if (o.mode != Pick::kBest) {
    const Keys tops = keys_of(KeysWanted::kNewestPerRun);
    if (tops.keys.empty()) return none();
    if (auto c = newest_if_complete(fs, tree, tops, o, tried, chosen)) {
      const bool tie = std::any_of(tops.keys.begin(), tops.keys.end(), [&](const Key& k) {
        return k.run != chosen.run && tops.run_ns[k.run] == tops.run_ns[chosen.run];
      });
      if (!tie) return found(std::move(*c));
      return unless_tied(fs, tree, keys_of(KeysWanted::kAll), chosen, std::move(*c), o);
    }
  }
  Keys keys = keys_of(KeysWanted::kAll);  // every key: the newest was not complete
  if (keys.keys.empty()) return none();
  if (o.mode == Pick::kBest) {
    Keys bests{{}, keys.run_ns, keys.skrl_modules, keys.facts};
    for (const Key& k : keys.keys)
      if (k.best) bests.keys.push_back(k);
    if (auto c = first_complete_key(fs, tree, bests, o, chosen)) return found(std::move(*c));
    spdlog::info("checkpoint: no complete best checkpoint under {}; using the latest", tree.root);
  }
  std::erase_if(keys.keys, [](const Key& k) { return k.best; });
  if (auto c = first_complete_key(fs, tree, keys, o, chosen, std::move(tried)))
    return unless_tied(fs, tree, keys, chosen, std::move(*c), o);
  return {std::nullopt, Selection::None::kIncomplete, ""};
}

}  // namespace tv
