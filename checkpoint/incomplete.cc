#include "checkpoint/incomplete.h"

#include "checkpoint/discovery.h"
#include "checkpoint/integrity.h"
#include "checkpoint/tree_walk.h"

namespace tv {

std::vector<IncompleteCheckpoint> incomplete_checkpoints(CheckpointFs& fs, const std::string& root,
                                                         const std::string& format) {
  std::vector<IncompleteCheckpoint> out;
  try {
    const Tree tree = walk_tree(fs, root);
    const Judge judge{fs.now_ns(), 0, {}};  // the writer has ended: no settle window
    each_candidate_oldest_first(
        fs, tree, format, [](const std::string&) { return false; },
        [&](const std::string&, Candidate& c) {
          const Judgement j = evaluate(c, fs, judge);
          if (j.verdict != Verdict::kIncomplete) return;
          IncompleteCheckpoint i{c.checkpoint.path, {}, j.reason};
          for (const auto& p : c.parts) i.parts.push_back(p.path);
          out.push_back(std::move(i));
        });
  } catch (const std::exception&) {  // e.g. bad_alloc: nothing is left out
    out.clear();
  }
  return out;
}

}  // namespace tv
