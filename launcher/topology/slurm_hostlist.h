// Slurm's compressed hostlist syntax, expanded: "gpu-[001-004,007],head" ->
// gpu-001 gpu-002 gpu-003 gpu-004 gpu-007 head.
//
// Items are separated by commas outside brackets. An item is literal text and bracket groups;
// a group is a comma-separated list of numbers or ranges LO-HI (LO <= HI), zero-padded to the
// width of LO when LO starts with 0 ("[001-010]"). Several groups in one item multiply
// ("r[1-2]n[01-02]" -> r1n01 r1n02 r2n01 r2n02, the last group varying fastest).
// The expansion is bounded: more than `max_hosts` hosts, or a host name longer than 255
// characters, is refused before anything is built. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

inline constexpr size_t kMaxHostNameLength = 255;

// Errors are exit_code_of(ErrorKind::kConfig); the message names `what` (e.g.
// "SLURM_JOB_NODELIST"), quotes the text and says what was expected.
Result<std::vector<std::string>> expand_hostlist(const std::string& text, const std::string& what,
                                                 size_t max_hosts);

}  // namespace tv
