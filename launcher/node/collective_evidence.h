// The flight recorder's part of a rank's evidence (docs/supervision.md, "The culprit"): what
// nccl_trace_summary.py's `--evidence` lines say each rank last entered, merged into the ranks'
// RankEvidence. Pure: text in, values out.
#pragma once

#include <map>
#include <string_view>
#include <vector>

#include "launcher/job/cluster.h"

namespace tv {

// One JSON object a line, {"rank": N, "seq": S, "op", "group", "state"}; a line that is not
// well-formed (an unreadable dump's, a truncated last line) is left out.
std::map<int, LastCollective> collectives_from(std::string_view output);

// Each rank of `found` gets its last collective: on its entry in `ranks`, or on a new entry of
// node `node_rank` (a rank whose stacks were not taken).
void add_collectives(std::vector<RankEvidence>& ranks, const std::map<int, LastCollective>& found,
                     int node_rank);

}  // namespace tv
