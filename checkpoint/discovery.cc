#include "checkpoint/discovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "checkpoint/integrity.h"

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

Judgement judge(Candidate& c, CheckpointFs& fs, const SelectOptions& o) {
  const std::int64_t settle_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(o.settle).count();
  Judgement j;
  for (int wait = 0;; ++wait) {
    j = evaluate(c, fs, Judge{fs.now_ns(), settle_ns, {}});
    if (j.verdict != Verdict::kSettling || wait >= o.settle_waits) break;
    fs.sleep_for(std::chrono::milliseconds(j.settle_left_ns / 1'000'000 + 1));
  }
  if (j.verdict == Verdict::kComplete && o.verify) j = verify_for_resume(c, fs);
  if (j.verdict == Verdict::kSettling) j.reason = "still changing: " + j.reason;
  return j;
}

// Materializes and judges one key; the checkpoint when complete, else logs why not.
std::optional<Checkpoint> examine(CheckpointFs& fs, const Tree& tree, const Key& k,
                                  const Keys& keys, const SelectOptions& o) {
  Candidate c = materialize(tree, k, fs, &keys.skrl_modules);
  const Judgement j = judge(c, fs, o);
  if (j.verdict == Verdict::kComplete) return std::move(c.checkpoint);
  spdlog::warn("checkpoint: skipping {}: {}", c.checkpoint.path, j.reason);
  return std::nullopt;
}

std::optional<Checkpoint> first_complete_key(CheckpointFs& fs, const Tree& tree, Keys& keys,
                                             const SelectOptions& o,
                                             std::set<CandidateId> done = {}) {
  KeyHeap heap(std::move(keys.keys), keys.run_ns, tree, std::move(done));
  while (auto k = heap.next())
    if (auto c = examine(fs, tree, *k, keys, o)) return c;
  return std::nullopt;
}

// The usual case in one pass that stores no key per file: the newest key of each run, and of
// those the newest; when it is complete, that is the answer. `tried` gets it either way.
std::optional<Checkpoint> newest_if_complete(CheckpointFs& fs, const Tree& tree,
                                             std::uint32_t layouts, const SelectOptions& o,
                                             std::set<CandidateId>& tried) {
  const Keys tops = recognize(tree, layouts, fs, KeysWanted::kNewestPerRun);
  if (tops.keys.empty()) return std::nullopt;
  const Newer newer{&tree, &tops.run_ns};
  const Key& newest = *std::max_element(tops.keys.begin(), tops.keys.end(),
                                        [&](const Key& a, const Key& b) { return newer(b, a); });
  tried.insert(id_of(newest));
  return examine(fs, tree, newest, tops, o);
}

std::optional<Checkpoint> select_glob(CheckpointFs& fs, const Tree& tree, const std::string& spec,
                                      const SelectOptions& o) {
  for (auto& c : glob_candidates(tree, spec, fs)) {
    const Judgement j = judge(c, fs, o);
    if (j.verdict == Verdict::kComplete) return std::move(c.checkpoint);
    spdlog::warn("checkpoint: skipping {}: {}", c.checkpoint.path, j.reason);
  }
  return std::nullopt;
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
    const ListedDir& d = tree.dirs[k.dir];
    const std::string path = k.name == kNoDir ? d.path : join_path(d.path, d.files[k.name]);
    if (known(path) || !done.insert(id_of(k)).second) continue;
    // A set already reported was skipped above; a new one is put together from the modules
    // recognition saw, one stat per module (reading every name of its directory for each of
    // 30,000 new candidates, as the first scan has, was quadratic: seconds of CPU per scan).
    Candidate c = materialize(tree, k, fs, &keys.skrl_modules);
    each(path, c);
  }
}

std::optional<Checkpoint> select_checkpoint(CheckpointFs& fs, const Tree& tree,
                                            const std::string& format, const SelectOptions& o) {
  if (format.starts_with("glob:")) return select_glob(fs, tree, format.substr(5), o);
  const std::uint32_t layouts = layouts_of_format(format);
  std::set<CandidateId> tried;
  if (o.mode != "best") {
    if (auto c = newest_if_complete(fs, tree, layouts, o, tried)) return c;
    if (tried.empty()) return std::nullopt;  // no candidate at all
  }
  Keys keys = recognize(tree, layouts, fs);  // every key: the newest was not complete
  if (o.mode == "best") {
    Keys bests{{}, keys.run_ns, keys.skrl_modules};
    for (const Key& k : keys.keys)
      if (k.best) bests.keys.push_back(k);
    if (auto c = first_complete_key(fs, tree, bests, o)) return c;
    spdlog::info("checkpoint: no complete best checkpoint under {}; using the latest", tree.root);
  }
  std::erase_if(keys.keys, [](const Key& k) { return k.best; });
  return first_complete_key(fs, tree, keys, o, std::move(tried));
}

}  // namespace tv
