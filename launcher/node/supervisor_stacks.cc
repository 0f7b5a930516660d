// The Supervisor's stacks side (docs/supervision.md, "Evidence on hang"): which workers a stacks
// collection signals (the collection itself: stacks_collection.h) and the lines a failure report
// carries (the stacks taken on its hang, the evidence files: evidence_files.h).
#include "launcher/node/supervisor.h"

namespace tv {

void Supervisor::stacks_then(const std::string& why, std::function<void()> then) {
  if (!cfg_.stacks) return then();
  stacks_.hang_then(why, workers_.group().generation(), workers_.roster().stack_targets(),
                    evidence_.hooked(), std::move(then));
}

void Supervisor::collect_stacks(const std::string& why) {
  stacks_.collect(why, workers_.group().generation(), workers_.roster().stack_targets(),
                  evidence_.hooked(), nullptr, false);
}

// The lines a failure report of `generation` carries: the stacks taken on its hang, and, with
// --log-dir, every file of evidence this node's ranks left in attempt_<g>/ (error files, stacks,
// NCCL flight-recorder dumps), listed by path.
std::string Supervisor::evidence_of(int generation) const {
  return stacks_.hang_report(generation) + evidence_.listing(generation);
}

}  // namespace tv
