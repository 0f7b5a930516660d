#include "launcher/workers/worker_env.h"

namespace tv {
namespace {

// What torchrun of that torch sets besides the layout (torch/distributed/elastic/agent/server/
// local_elastic_agent.py, `_start_workers`; torch/distributed/launcher/api.py, `launch_agent`):
// up to 2.1 NCCL_ASYNC_ERROR_HANDLING, from 2.2 TORCH_NCCL_ASYNC_ERROR_HANDLING (the old name
// prints a deprecation warning in every worker there), each "1" when unset; from 2.9 launch_agent
// (pytorch/pytorch#160690) exports TORCHELASTIC_SIGNALS_TO_HANDLE (--signals-to-handle, whose
// default is all trainvisor takes). An unknown torch gets both names, as before the version was
// known.
void torch_defaults(const std::optional<std::pair<int, int>>& torch,
                    std::map<std::string, std::string>& defaults) {
  const bool old_name = !torch || *torch < std::pair{2, 2};
  const bool new_name = !torch || *torch >= std::pair{2, 2};
  if (old_name) defaults.emplace("NCCL_ASYNC_ERROR_HANDLING", "1");
  if (new_name) defaults.emplace("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
}

}  // namespace

Environment build_worker_env(const Environment& base, const WorkerLayout& l,
                             const WorkerAttempt& a) {
  Environment env = base;
  const int world = l.nnodes * l.nproc_per_node;
  const std::string rank = std::to_string(global_rank(l, a.local_rank));
  const std::map<std::string, std::string> vars = {
      {"RANK", rank},
      {"LOCAL_RANK", std::to_string(a.local_rank)},
      {"GROUP_RANK", std::to_string(l.node_rank)},
      {"ROLE_RANK", rank},
      {"ROLE_NAME", l.role},
      {"LOCAL_WORLD_SIZE", std::to_string(l.nproc_per_node)},
      {"WORLD_SIZE", std::to_string(world)},
      {"GROUP_WORLD_SIZE", std::to_string(l.nnodes)},
      {"ROLE_WORLD_SIZE", std::to_string(world)},
      {"MASTER_ADDR", l.master_addr},
      {"MASTER_PORT", std::to_string(a.master_port)},
      {"TORCHELASTIC_RESTART_COUNT", std::to_string(a.generation)},
      {"TORCHELASTIC_MAX_RESTARTS", std::to_string(l.max_restarts)},
      {"TORCHELASTIC_RUN_ID", l.run_id},
      {"TORCHELASTIC_USE_AGENT_STORE", "False"},
      {"TORCHELASTIC_ERROR_FILE", a.error_file},
      {"TRAINVISOR_HEARTBEAT_FILE", a.heartbeat_file},
  };
  for (const auto& [k, v] : vars) env.set(k, v);
  if (l.torch && *l.torch >= std::pair{2, 9})
    env.set("TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGTERM,SIGINT,SIGHUP,SIGQUIT");
  // Set by torchrun when unset; the user's own value wins.
  std::map<std::string, std::string> defaults = l.extra;
  torch_defaults(l.torch, defaults);
  if (l.nproc_per_node > 1) defaults.emplace("OMP_NUM_THREADS", "1");
  if (!a.nccl_trace_prefix.empty()) {
    // torch 2.11 reads TORCH_FR_*; TORCH_NCCL_TRACE_BUFFER_SIZE / _DEBUG_INFO_TEMP_FILE are its
    // deprecated aliases (a warning on every rank when set): a user's value under either wins.
    if (!env.get("TORCH_NCCL_TRACE_BUFFER_SIZE"))
      defaults.emplace("TORCH_FR_BUFFER_SIZE", kNcclTraceBufferSize);
    if (!env.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE"))
      defaults.emplace("TORCH_FR_DUMP_TEMP_FILE", a.nccl_trace_prefix);
    defaults.emplace("TORCH_NCCL_DUMP_ON_TIMEOUT", "1");
  }
  for (const auto& [k, v] : defaults)
    if (!env.get(k)) env.set(k, v);
  if (a.resume_checkpoint)
    env.set("TRAINVISOR_RESUME_CHECKPOINT", *a.resume_checkpoint);
  else
    env.erase("TRAINVISOR_RESUME_CHECKPOINT");
  if (!a.stacks_file.empty() && !a.python_hook_dir.empty()) {
    env.set("TRAINVISOR_STACKS_FILE", a.stacks_file);
    env.set("TRAINVISOR_STACKS_SIGNAL", std::to_string(a.stacks_signal));
    const auto path = env.get("PYTHONPATH");
    env.set("PYTHONPATH", path ? a.python_hook_dir + ":" + *path : a.python_hook_dir);
  }
  return env;
}

}  // namespace tv
