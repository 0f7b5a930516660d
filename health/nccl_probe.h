// The NCCL probe: one `trainvisor __probe-rank` process per local GPU, an all-reduce through the
// libnccl the workers will load, each rank's NCCL log (NCCL_DEBUG=INFO, SUBSYS INIT,NET) in a
// file, and that log classified.
//
// The seam for several nodes: ranks never make their own ncclUniqueId. The coordinator calls
// ncclGetUniqueId (make_unique_id below) and hands the 128 bytes, hex-encoded, to every rank in
// TV_PROBE_UNIQUE_ID, with TV_PROBE_RANK / TV_PROBE_NRANKS (global) and TV_PROBE_DEVICE (local
// GPU). Across nodes, node 0's `run` makes the id (make_probe_unique_id) and the rendezvous
// coordinator hands it to every node (docs/coordination.md, "Preflight phase"); each node then
// calls spawn_probe_ranks with its own first_rank (PreflightConfig::group). The process that called
// ncclGetUniqueId runs NCCL's bootstrap root thread and must live until every rank has initialized.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/environment.h"
#include "health/dynamic_library.h"
#include "health/nccl_log.h"

namespace tv {

struct ProbeSpec {
  std::string self_exe;          // the trainvisor binary (/proc/self/exe)
  std::string nccl_library;      // path or soname, loaded by the coordinator and every rank
  std::string unique_id_hex;     // from make_unique_id
  int nranks = 0;                // global
  int first_rank = 0;            // this node's first global rank
  int local_ranks = 0;           // ranks (GPUs) on this node
  bool single_node_net = false;  // NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
  size_t bytes = 64u << 20;      // all-reduce size (float32)
  int timeout_s = 120;           // per rank: init + all-reduces
  std::string log_dir;
  Environment env;  // base environment of the ranks
};

struct RankOutcome {
  int rank = 0;
  int exit_code = -1;
  bool timed_out = false;
  nlohmann::json result;  // the rank's JSON line (ok, busbw_GBps, ...), null when none
  std::string log_path;   // NCCL_DEBUG_FILE
};

struct UniqueIdResult {
  std::string hex;
  std::string library_path;
  std::string version;  // "2.28.9"
  std::string error;
};

// Loads the library in this process: path and version (hex stays empty).
UniqueIdResult load_nccl(const LibraryLoader& loader, const std::string& nccl_library);
// Loads the library in this process and calls ncclGetUniqueId.
UniqueIdResult make_unique_id(const LibraryLoader& loader, const std::string& nccl_library);

// The environment of one probe rank (exposed for tests).
Environment probe_rank_env(const ProbeSpec& spec, int local_rank);

// Starts this node's ranks and waits for them (timeout_s + 30 s at most).
std::vector<RankOutcome> spawn_probe_ranks(const ProbeSpec& spec);

}  // namespace tv
