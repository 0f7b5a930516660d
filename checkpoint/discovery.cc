#include "checkpoint/discovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "checkpoint/integrity.h"

namespace tv {
namespace {

void append(std::vector<Candidate>& to, std::vector<Candidate> from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

std::optional<Checkpoint> first_complete(std::vector<Candidate*> list, CheckpointFs& fs,
                                         const SelectOptions& o) {
  const std::int64_t settle_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(o.settle).count();
  for (Candidate* c : list) {
    Judgement j;
    for (int wait = 0;; ++wait) {
      j = evaluate(*c, fs, Judge{fs.now_ns(), settle_ns, {}});
      if (j.verdict != Verdict::kSettling || wait >= o.settle_waits) break;
      fs.sleep_for(std::chrono::milliseconds(j.settle_left_ns / 1'000'000 + 1));
    }
    if (j.verdict == Verdict::kComplete) return c->checkpoint;
    if (j.verdict == Verdict::kSettling) j.reason = "still changing: " + j.reason;
    spdlog::warn("checkpoint: skipping {}: {}", c->checkpoint.path, j.reason);
  }
  return std::nullopt;
}

std::vector<Candidate*> pick(std::vector<Candidate>& all, const std::string& format, bool best) {
  std::vector<Candidate*> out;
  for (auto& c : all)
    if (c.checkpoint.format == format && c.best == best) out.push_back(&c);
  return out;
}

std::optional<Checkpoint> select_format(std::vector<Candidate>& all, const std::string& format,
                                        CheckpointFs& fs, const SelectOptions& o) {
  if (o.mode == "best") {
    auto bests = pick(all, format, true);
    if (auto c = first_complete(bests, fs, o)) return c;
    if (!pick(all, format, false).empty())
      spdlog::info("checkpoint: no complete best checkpoint ({}); using the latest", format);
  }
  return first_complete(pick(all, format, false), fs, o);
}

}  // namespace

std::vector<Candidate> discover(CheckpointFs& fs, const std::string& dir,
                                const std::string& format) {
  return discover_in(fs, walk_tree(fs, dir), format);
}

std::vector<Candidate> discover_in(CheckpointFs& fs, const Tree& tree, const std::string& format) {
  std::vector<Candidate> out;
  if (format == "auto" || format == "skrl") append(out, skrl_candidates(tree));
  if (format == "auto" || format == "dcp") append(out, dcp_candidates(tree, fs));
  if (format.starts_with("glob:")) append(out, glob_candidates(tree, format.substr(5), fs));
  return out;
}

std::optional<Checkpoint> select_checkpoint(std::vector<Candidate> candidates, CheckpointFs& fs,
                                            const SelectOptions& options) {
  std::optional<Checkpoint> chosen;
  for (const char* format : {"skrl", "dcp", "glob"}) {
    auto c = select_format(candidates, format, fs, options);
    if (c && (!chosen || c->mtime_ns > chosen->mtime_ns)) chosen = std::move(c);
  }
  return chosen;
}

}  // namespace tv
