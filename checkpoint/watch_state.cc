#include "checkpoint/watch_state.h"

#include <spdlog/spdlog.h>

#include "checkpoint/discovery.h"
#include "checkpoint/integrity.h"

namespace tv {
namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

WatchState::WatchState(std::string dir, std::string format, std::int64_t settle_ns)
    : dir_(std::move(dir)), format_(std::move(format)), settle_ns_(settle_ns) {}

void WatchState::baseline(CheckpointFs& fs) { pass(fs, false); }

std::vector<CheckpointEvent> WatchState::scan(CheckpointFs& fs) { return pass(fs, true); }

void WatchState::note_closed(CheckpointFs& fs, const std::string& path) {
  if (auto st = fs.stat(path)) closed_[path] = Sig{st->size, st->mtime_ns};
}

bool WatchState::stable(const std::string& path, const FileStat& st) const {
  const Sig s{st.size, st.mtime_ns};
  auto p = previous_.find(path);
  auto c = closed_.find(path);
  return (p != previous_.end() && p->second == s) || (c != closed_.end() && c->second == s);
}

std::vector<CheckpointEvent> WatchState::pass(CheckpointFs& fs, bool report) {
  const Tree tree = walk_tree(fs, dir_);
  directories_.clear();
  for (const auto& d : tree.dirs) directories_.push_back(d.path);
  const std::int64_t now = fs.now_ns();
  std::map<std::string, Sig> seen;
  settling_ = false;
  std::vector<CheckpointEvent> events;
  // Oldest first, so events come out in the order the checkpoints were written. A write-once
  // checkpoint already done is not even materialized again (known_keys_).
  auto known = [this](const std::string& key_path) { return known_keys_.contains(key_path); };
  each_candidate_oldest_first(fs, tree, format_, known, [&](const std::string& key, Candidate& c) {
    look(fs, key, c, report, now, seen, events);
  });
  for (auto& [path, sig] : seen) previous_[path] = sig;
  return events;
}

// Every file of a write-once checkpoint stands for it: whichever of an skrl set's module files
// comes first in a later scan, the set is not put together (and stat'ed) again.
void WatchState::remember(const std::string& key, const Candidate& c) {
  known_keys_.insert(key);
  for (const auto& f : c.checkpoint.files) known_keys_.insert(f);
}

void WatchState::look(CheckpointFs& fs, const std::string& key, Candidate& c, bool report,
                      std::int64_t now, std::map<std::string, Sig>& seen,
                      std::vector<CheckpointEvent>& events) {
  auto done = done_.find(c.primary);
  if (done != done_.end() && c.write_once) {
    remember(key, c);
    return;
  }
  auto st = fs.stat(c.primary);
  if (!st) return;  // not there yet (e.g. DCP .metadata): nothing to say
  const Sig sig{st->size, st->mtime_ns};
  if (done != done_.end() && done->second == sig) return;
  first_seen_ns_.try_emplace(c.primary, now);
  for (const auto& f : c.checkpoint.files)
    if (auto fst = fs.stat(f); fst && fst->is_regular) seen[f] = Sig{fst->size, fst->mtime_ns};
  Judge judge{now, settle_ns_,
              [this](const std::string& p, const FileStat& s) { return stable(p, s); }};
  Judgement j = evaluate(c, fs, judge);
  // A file written tail-first (parallel multipart downloads) has its end record before its body:
  // not complete until every local header is where its central directory says. At start, a file
  // still inside the settle window is looked at so (then it is being written: reported once
  // complete, not taken as there already); older ones are not (100,000 of them would cost
  // seconds of reads).
  if (report ? j.verdict == Verdict::kComplete : j.verdict == Verdict::kSettling) {
    if (Judgement h = verify_for_resume(c, fs, false); h.verdict != Verdict::kComplete)
      j = {report ? Verdict::kSettling : Verdict::kIncomplete, h.reason, 0};
  }
  if (!report && j.verdict != Verdict::kIncomplete) {
    done_[c.primary] = sig;  // already there at start (settling or not): not news
    if (c.write_once) remember(key, c);
    return;
  }
  settling_ = settling_ || j.verdict == Verdict::kSettling;
  if (j.verdict == Verdict::kComplete) {
    done_[c.primary] = sig;
    if (c.write_once) remember(key, c);
    const Checkpoint& k = c.checkpoint;
    const std::int64_t begun = k.started_ns > 0 ? k.started_ns : first_seen_ns_[c.primary];
    const double write = begun > 0 && begun <= k.mtime_ns ? seconds(k.mtime_ns - begun) : -1;
    const double since = previous_event_ns_ < 0 ? -1 : seconds(k.mtime_ns - previous_event_ns_);
    previous_event_ns_ = k.mtime_ns;
    events.push_back({k, write, since});
  } else if (j.verdict == Verdict::kIncomplete && report &&
             logged_.insert(c.checkpoint.path + "\n" + j.reason).second) {
    spdlog::info("checkpoint: not complete (yet): {}: {}", c.checkpoint.path, j.reason);
  }
}

}  // namespace tv
