// The culprit of a hang (or of a failure the flight recorder saw) for the whole job
// (docs/supervision.md, "The culprit"): from where every rank of every node was when its stacks
// were taken, and the last collective each entered, the one rank (or the few) the others wait
// for. Pure: the ranks' evidence in, one line or nothing out.
//
// Rules, in order:
//   0. where the ranks' NCCL flight-recorder dumps say which collective each last entered: the
//      ranks of a process group behind the furthest collective any of its ranks entered;
//   1. ranks that were signalled and wrote no stack (SIGSTOPped, stuck outside Python) while the
//      others did are the culprits;
//   2. otherwise, when most ranks are in one place (the collective they all wait in) and a
//      minority is elsewhere, that minority is;
//   3. otherwise nobody is named (every rank in one place, or no majority): nullopt.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launcher/job/cluster.h"

namespace tv {

// "rank 5 on node 2 is in load_batch (/x/train.py:30); every other rank waits in all_reduce
// (/x/train.py:12)"; nullopt when the evidence names no single place the job waited for.
std::optional<std::string> decide_culprit(const std::vector<RankEvidence>& ranks);

}  // namespace tv
