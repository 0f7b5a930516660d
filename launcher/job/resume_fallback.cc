#include "launcher/job/resume_fallback.h"

#include "common/escape.h"

namespace tv {

std::optional<PoisonedCheckpoint> poisoned_checkpoint(const NodeFailure& now,
                                                      const NodeFailure* before, int used,
                                                      int limit) {
  if (limit <= 0 || used >= limit || !before || now.resumed_from.empty()) return std::nullopt;
  if (before->generation != now.generation - 1 || before->resumed_from != now.resumed_from)
    return std::nullopt;
  // No exception to compare (a signal, an exit code alone): never "the same way".
  if (now.signature.type.empty() || now.signature != before->signature) return std::nullopt;
  std::string line = "checkpoint " + escape_control(now.resumed_from) + " poisoned: generations " +
                     std::to_string(before->generation) + " and " + std::to_string(now.generation) +
                     " resumed from it and failed the same way (" + now.signature.text() +
                     "); the next generation resumes from the newest complete checkpoint before "
                     "it (--resume-fallback: " +
                     std::to_string(used + 1) + " of " + std::to_string(limit) + ")";
  return PoisonedCheckpoint{now.resumed_from, std::move(line)};
}

}  // namespace tv
