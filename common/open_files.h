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

// The fewest descriptors a `run` with `workers` local workers needs: its own (stdio, the event
// loop's epoll and eventfd, timers, /dev/null, the GPU health child's pipe, sockets) and per
// worker its two pipes, two log files and its rank directory, with the spawn's transient ones.
// Measured with `prlimit --nofile=N trainvisor run --no-python -- /bin/true`: 20 for one worker,
// 22 for two, 26 for four (each generation's first spawn fails below); this keeps a margin.
constexpr std::uint64_t kOpenFilesBase = 24;
constexpr std::uint64_t kOpenFilesPerWorker = 4;
inline std::uint64_t open_files_needed(int workers) {
  return kOpenFilesBase +
         kOpenFilesPerWorker * static_cast<std::uint64_t>(workers > 0 ? workers : 1);
}

}  // namespace tv
