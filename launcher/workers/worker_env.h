// The worker environment: torchrun's contract (docs/worker-environment.md), so existing training
// scripts run unchanged. A pure function of the node's layout, the generation and the base
// environment; no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "common/environment.h"

namespace tv {

struct WorkerLayout {
  int nnodes = 1;
  int node_rank = 0;
  int nproc_per_node = 1;
  std::string master_addr = "127.0.0.1";
  std::string role = "default";
  std::string run_id = "none";
  int max_restarts = 3;
  std::map<std::string, std::string> extra;  // topology/transport additions, set only when unset
  // (major, minor) of the torch the workers import (health/torch_version.h); nullopt: unknown.
  // torchrun of that torch decides the version-dependent variables (docs/worker-environment.md).
  std::optional<std::pair<int, int>> torch;
};

struct WorkerAttempt {
  int local_rank = 0;
  int generation = 0;  // its outside spelling: TORCHELASTIC_RESTART_COUNT
  int master_port = 29500;
  std::string error_file;
  std::string heartbeat_file;
  std::optional<std::string> resume_checkpoint;
  // Evidence on hang (docs/supervision.md): with a stacks file, a Python worker gets the worker
  // hook's directory first on PYTHONPATH (launcher/workers/worker_hook.py removes it again)
  // and TRAINVISOR_STACKS_FILE / TRAINVISOR_STACKS_SIGNAL; empty: none of them.
  std::string stacks_file;
  std::string python_hook_dir;
  int stacks_signal = 0;
  // PyTorch's NCCL flight recorder, each variable only when the user left it (and its old name)
  // unset: TORCH_FR_BUFFER_SIZE, TORCH_NCCL_DUMP_ON_TIMEOUT=1 and TORCH_FR_DUMP_TEMP_FILE (this
  // prefix; torch appends the global rank). Empty: none.
  std::string nccl_trace_prefix;
};

// The flight recorder's ring size trainvisor asks for (torch's default is 0: off).
inline constexpr const char* kNcclTraceBufferSize = "2000";

Environment build_worker_env(const Environment& base, const WorkerLayout& layout,
                             const WorkerAttempt& attempt);

inline int global_rank(const WorkerLayout& l, int local_rank) {
  return l.node_rank * l.nproc_per_node + local_rank;
}

}  // namespace tv
