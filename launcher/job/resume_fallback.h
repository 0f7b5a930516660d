// The resume fallback (--resume-fallback N): when the generations that resumed from checkpoint K
// fail the same way, K is poisoned, and the next generation resumes from the newest complete
// checkpoint before it instead of failing from K again (Megatron-LM#5281: 44 identical restart
// cycles from one bad checkpoint). Pure: the RootCauseJudge asks it once per failed generation;
// what "the same way" and "soon after resuming" mean is docs/checkpoints.md, "A poisoned
// checkpoint is stepped over".
//
//   poisoned: kPoisonRepeats (2) consecutive generations resumed from the same K (so no complete
//             checkpoint newer than K appeared before the second one started), both failed with
//             an exception of one signature (root_cause_judge.h: failure_signature), and the job
//             has stepped over fewer than N checkpoints (its ledger's marks count).
//   soon:     the lookup for the next generation still finds K newest (cli's resume hook, which
//             then marks K in the ledger): a checkpoint newer than K completed before the failure
//             is resumed instead and nothing is marked.
#pragma once

#include <optional>
#include <string>

#include "launcher/job/cluster.h"

namespace tv {

inline constexpr int kPoisonRepeats = 2;  // consecutive generations failing the same way from K

struct PoisonedCheckpoint {
  std::string checkpoint;  // K, as the resume lookup named it
  std::string line;        // the reason, one line, for the log and the failure file
};

// `now`: the generation just judged; `before`: the one before it (null when it did not fail, or
// was not the previous generation); `used`: checkpoints the job has stepped over so far; `limit`:
// --resume-fallback. nullopt: not poisoned (or the fallback is off, or used up).
std::optional<PoisonedCheckpoint> poisoned_checkpoint(const NodeFailure& now,
                                                      const NodeFailure* before, int used,
                                                      int limit);

}  // namespace tv
