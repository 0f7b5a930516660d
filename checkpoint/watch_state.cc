#include "checkpoint/watch_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "checkpoint/discovery.h"
#include "checkpoint/integrity.h"

namespace tv {
namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

bool same_stat(const FileStat& a, const FileStat& b) {
  return a.device == b.device && a.inode == b.inode && a.size == b.size &&
         a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns;
}

}  // namespace

WatchState::WatchState(std::string dir, std::string format, std::int64_t settle_ns)
    : dir_(std::move(dir)), format_(std::move(format)), settle_ns_(settle_ns) {}

void WatchState::baseline(CheckpointFs& fs) { pass(fs, false); }

std::vector<CheckpointEvent> WatchState::scan(CheckpointFs& fs) {
  if (!walk_next_ && !settling_ && unchanged(fs)) return {};
  return pass(fs, true);
}

bool WatchState::same(CheckpointFs& fs, const Watched& w, bool directory) const {
  auto st = fs.stat(w.path);
  if (!st || !same_stat(*st, w.stat)) return false;
  return !directory || std::max(st->mtime_ns, st->ctime_ns) < listed_ns_ - kRacyNs;
}

// The directories that can change and the files still judged, every one; a slice of the cold
// ones. Stops at the first difference.
bool WatchState::unchanged(CheckpointFs& fs) {
  for (const auto& w : hot_)
    if (!same(fs, w, true)) return false;
  for (const auto& w : files_)
    if (!same(fs, w, false)) return false;
  const std::size_t slice = (cold_.size() + kColdRounds - 1) / kColdRounds;
  for (std::size_t i = 0; i < slice; ++i, ++cold_next_)
    if (!same(fs, cold_[cold_next_ % cold_.size()], true)) return false;
  return true;
}

// Which directories the next scans stat: the complete directory checkpoints (and everything in
// them) are cold but for the kHotUnits newest; every other directory is hot.
void WatchState::remember_tree(const Tree& tree, std::int64_t listed_ns) {
  listed_ns_ = listed_ns;
  std::set<std::string> units(done_units_.begin(), done_units_.end());
  std::vector<std::uint32_t> unit_dirs;
  for (std::uint32_t i = 0; i < tree.dirs.size(); ++i)
    if (units.contains(tree.dirs[i].path) || known_keys_.contains(tree.dirs[i].path))
      unit_dirs.push_back(i);
  const std::size_t hot_units = std::min(kHotUnits, unit_dirs.size());
  std::partial_sort(unit_dirs.begin(), unit_dirs.begin() + hot_units, unit_dirs.end(),
                    [&](std::uint32_t a, std::uint32_t b) {
                      return tree.dirs[a].stat.mtime_ns > tree.dirs[b].stat.mtime_ns;
                    });
  std::vector<char> cold(tree.dirs.size(), 0);
  for (std::size_t u = hot_units; u < unit_dirs.size(); ++u) cold[unit_dirs[u]] = 1;
  hot_.clear();
  cold_.clear();
  for (std::uint32_t i = 0; i < tree.dirs.size(); ++i) {
    const ListedDir& d = tree.dirs[i];
    if (d.parent != kNoDir && cold[d.parent]) cold[i] = 1;  // parents come first in a Tree
    (cold[i] ? cold_ : hot_).push_back({d.path, d.stat});
  }
}

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
  const std::int64_t listed = fs.now_ns();
  const Tree tree = walk_tree(fs, dir_);
  directories_.clear();
  for (const auto& d : tree.dirs) directories_.push_back(d.path);
  const std::int64_t now = fs.now_ns();
  std::map<std::string, Sig> seen;
  settling_ = false;
  std::vector<CheckpointEvent> events;
  files_.clear();
  done_units_.clear();
  // Oldest first, so events come out in the order the checkpoints were written. A write-once
  // checkpoint already done is not even materialized again (known_keys_).
  auto known = [this](const std::string& key_path) { return known_keys_.contains(key_path); };
  each_candidate_oldest_first(fs, tree, format_, known, [&](const std::string& key, Candidate& c) {
    look(fs, key, c, report, now, seen, events);
  });
  for (auto& [path, sig] : seen) previous_[path] = sig;
  remember_tree(tree, listed);
  // A walk cut short by a stop request, or a directory that is not there (yet): walk again.
  walk_next_ = fs.stopping() || tree.dirs.empty();
  return events;
}

// Every file of a write-once checkpoint stands for it: whichever of an skrl set's module files
// comes first in a later scan, the set is not put together (and stat'ed) again.
void WatchState::remember(const std::string& key, const Candidate& c) {
  known_keys_.insert(key);
  for (const auto& f : c.checkpoint.files) known_keys_.insert(f);
}

// What later scans stat for this candidate: nothing for a complete directory checkpoint (its
// directory's stat stands for it) or a write-once one; the primary of a complete one that can be
// rewritten in place (best_agent.pt); every file of one not complete (yet).
void WatchState::keep_watching(const Candidate& c, const FileStat& primary, bool done,
                               const std::vector<Watched>& files) {
  if (done && c.checkpoint.directory) return done_units_.push_back(c.checkpoint.path);
  if (done && c.write_once) return;
  files_.push_back({c.primary, primary});
  if (!done) files_.insert(files_.end(), files.begin(), files.end());
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
  if (!st) return;  // not there yet (e.g. DCP .metadata): its directory changes when it comes
  const Sig sig{st->size, st->mtime_ns};
  if (done != done_.end() && done->second == sig) return keep_watching(c, *st, true, {});
  first_seen_ns_.try_emplace(c.primary, now);
  std::vector<Watched> files;
  for (const auto& f : c.checkpoint.files)
    if (auto fst = fs.stat(f); fst && fst->is_regular) {
      seen[f] = Sig{fst->size, fst->mtime_ns};
      files.push_back({f, *fst});
    }
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
    return keep_watching(c, *st, true, files);
  }
  settling_ = settling_ || j.verdict == Verdict::kSettling;
  keep_watching(c, *st, j.verdict == Verdict::kComplete, files);
  // A save under way: told once per save; one incomplete at the first scan is not news.
  if (j.verdict != Verdict::kComplete && writing_.insert(c.primary).second && report)
    started_.push_back(c.checkpoint);
  if (j.verdict == Verdict::kComplete) {
    writing_.erase(c.primary);
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
