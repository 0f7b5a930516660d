// Node 0's descriptors for the rendezvous: its own run's (common/open_files.h) and a connection per
// node, its agent's side and the listener, at the least; while every node joins at once, the
// unjoined ones of a join flood on top (rdzv::pending_limits) and a margin. Known from --nnodes
// before anything listens, so a limit below the least is refused (71, docs/exit-codes.md) before
// the rendezvous opens, never waited out to --rdzv-timeout (issue 58); one below the comfortable
// figure is one warning (a join flood may have to wait for descriptors: accept_later).
#pragma once

#include <cstdint>

#include "common/open_files.h"
#include "common/result.h"

namespace tv {

struct CoordinatorDescriptors {
  std::uint64_t least = 0;        // the run's own + a connection per node + agent + listener
  std::uint64_t comfortable = 0;  // every node joining at once, strangers' room, a margin
};
CoordinatorDescriptors coordinator_descriptors(int nnodes, int workers);

// The decision, pure: ok when the soft limit `limit` (already raised to the hard one where it
// could be) holds the least; else 71, one line naming the limit, the need and how to raise it.
// A limit of 0 (unknown) is not refused.
Status coordinator_descriptor_verdict(int nnodes, int workers, const OpenFileLimit& limit);

// Raises the soft limit to the hard one (one info line when it did: its workers keep the limit
// trainvisor started with), then decides (coordinator_descriptor_verdict); below the comfortable
// figure but not the least: one warning.
Status reserve_coordinator_descriptors(int nnodes, int workers);

// The same decision on the hard limit, changing nothing: `run` asks before anything starts
// (the coordinator's listen() raises and decides again).
Status coordinator_descriptors_possible(int nnodes, int workers);

}  // namespace tv
