#include "checkpoint/discovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "checkpoint/integrity.h"

namespace tv {
namespace {

// a is newer than b: run time, run, step, tie-break rank, then path.
struct Newer {
  const Tree* tree;
  const std::vector<std::int64_t>* run_ns;
  bool operator()(const Key& a, const Key& b) const {
    const std::int64_t at = (*run_ns)[a.run], bt = (*run_ns)[b.run];
    if (std::tie(at, a.run, a.step, a.rank) != std::tie(bt, b.run, b.step, b.rank))
      return std::tie(at, a.run, a.step, a.rank) > std::tie(bt, b.run, b.step, b.rank);
    if (a.dir != b.dir) return tree->dirs[a.dir].path > tree->dirs[b.dir].path;
    if (a.name == kNoDir || b.name == kNoDir) return a.name < b.name;
    return tree->dirs[a.dir].files[a.name] > tree->dirs[b.dir].files[b.name];
  }
};

// Keys that make up one candidate (an skrl module set) are examined once.
using CandidateId = std::tuple<std::uint8_t, std::uint32_t, std::int64_t, bool, std::uint32_t>;
CandidateId id_of(const Key& k) {
  const bool set = static_cast<Layout>(k.layout) == Layout::kSkrl;
  return {k.layout, k.dir, k.step, k.best, set ? 0 : k.name};
}

// Newest-first iteration over keys without sorting them all: the newest by one linear scan
// (usually the only one examined), a heap of the rest only when more are asked for.
class KeyHeap {
 public:
  // `run_ns` must outlive the heap.
  KeyHeap(std::vector<Key> keys, const std::vector<std::int64_t>& run_ns, const Tree& tree)
      : keys_(std::move(keys)), newer_{&tree, &run_ns} {}
  std::optional<Key> next() {
    while (!keys_.empty()) {
      if (!scanned_) {
        scanned_ = true;
        std::iter_swap(std::max_element(keys_.begin(), keys_.end(), older()), keys_.end() - 1);
      } else {
        if (!heaped_) std::make_heap(keys_.begin(), keys_.end(), older());
        heaped_ = true;
        std::pop_heap(keys_.begin(), keys_.end(), older());
      }
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
  bool scanned_ = false;
  bool heaped_ = false;
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

std::optional<Checkpoint> first_complete_key(CheckpointFs& fs, const Tree& tree,
                                             std::vector<Key> keys,
                                             const std::vector<std::int64_t>& run_ns,
                                             const SelectOptions& o) {
  KeyHeap heap(std::move(keys), run_ns, tree);
  while (auto k = heap.next()) {
    Candidate c = materialize(tree, *k, fs);
    const Judgement j = judge(c, fs, o);
    if (j.verdict == Verdict::kComplete) return std::move(c.checkpoint);
    spdlog::warn("checkpoint: skipping {}: {}", c.checkpoint.path, j.reason);
  }
  return std::nullopt;
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
    Candidate c = materialize(tree, k, fs);
    each(path, c);
  }
}

std::optional<Checkpoint> select_checkpoint(CheckpointFs& fs, const Tree& tree,
                                            const std::string& format, const SelectOptions& o) {
  if (format.starts_with("glob:")) return select_glob(fs, tree, format.substr(5), o);
  Keys keys = recognize(tree, layouts_of_format(format), fs);
  if (o.mode == "best") {
    std::vector<Key> bests;
    for (const Key& k : keys.keys)
      if (k.best) bests.push_back(k);
    if (auto c = first_complete_key(fs, tree, bests, keys.run_ns, o)) return c;
    spdlog::info("checkpoint: no complete best checkpoint under {}; using the latest", tree.root);
  }
  std::erase_if(keys.keys, [](const Key& k) { return k.best; });
  return first_complete_key(fs, tree, std::move(keys.keys), keys.run_ns, o);
}

}  // namespace tv
