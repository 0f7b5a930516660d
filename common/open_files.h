// The open-file limit (RLIMIT_NOFILE). Node 0 of a multi-node job holds one connection per node
// (launcher/rendezvous/rdzv_coordinator.h), more than a default `ulimit -n` of 1024 allows at
// 1,024 nodes, so it raises its soft limit to the hard one (raise_open_file_limit). Children do
// not inherit that: Init's spawner gives every child the limits trainvisor started with
// (initial_open_file_limit), so a worker on node 0 runs as workers on every other node do.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace tv {

struct OpenFileLimit {
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
};

OpenFileLimit open_file_limit();

// Soft := hard. Returns the limits before (unchanged when soft was already the hard limit, or
// when setrlimit failed: then `after` equals `before`).
struct OpenFileRaise {
  OpenFileLimit before;
  OpenFileLimit after;
};
OpenFileRaise raise_open_file_limit();

}  // namespace tv
