// Slurm: SLURM_JOB_ID with SLURM_NNODES (or SLURM_JOB_NUM_NODES); node_rank = SLURM_NODEID;
// master = first host of the expanded node list; the job id is "SLURM_JOB_ID.SLURM_STEP_ID" inside
// a step. Inside an srun step that uses part of the allocation, the step's SLURM_STEP_NUM_NODES +
// SLURM_STEP_NODELIST are used together. Any Slurm node variable without SLURM_JOB_ID is refused.
#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

#include "launcher/topology/slurm_hostlist.h"
#include "launcher/topology/topology_sources.h"

namespace tv::topo {
namespace {

struct SlurmNames {
  std::string nnodes, nodelist;
};

const char* first_set(const Environment& env, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (env.has(n)) return n;
  return nullptr;
}

// A step's own count and list win over the allocation's (a step may use part of it); a step count
// without the step's list is refused by slurm_hosts rather than paired with the job's list.
SlurmNames pick_names(const Environment& env) {
  const char* n = first_set(env, {"SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"});
  const char* l = first_set(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  if (n && std::string_view(n) == "SLURM_STEP_NUM_NODES") l = "SLURM_STEP_NODELIST";
  return {n ? n : "SLURM_NNODES", l ? l : "SLURM_JOB_NODELIST"};
}

Status slurm_hosts(const Environment& env, const SlurmNames& names, Topology& t) {
  auto list = env.get(names.nodelist);
  if (!list || list->empty()) {
    if (t.nnodes == 1) {
      t.origin["master_addr"] = "default (one node)";
      return ok_status();
    }
    return config_error(names.nodelist +
                        " is not set: expected the node list of the job or step (e.g. "
                        "\"gpu-[001-004]\") for " +
                        std::to_string(t.nnodes) + " nodes");
  }
  auto hosts = expand_hostlist(*list, names.nodelist, kMaxNodes);
  if (!hosts) return hosts.error();
  if (static_cast<int>(hosts->size()) != t.nnodes)
    return config_error(names.nodelist + "=\"" + *list + "\" names " +
                        std::to_string(hosts->size()) + " hosts but " + names.nnodes + "=\"" +
                        std::to_string(t.nnodes) + "\": expected the same count");
  t.hosts = std::move(*hosts);
  t.master_addr = t.hosts.front();
  t.origin["hosts"] = from_env(names.nodelist) + " (expanded)";
  t.origin["master_addr"] = from_env(names.nodelist) + " (first host)";
  return ok_status();
}

// SLURMD_NODENAME, when set, must be the host at our rank.
Status check_node_name(const Environment& env, const Topology& t) {
  auto name = env.get("SLURMD_NODENAME");
  if (!name || name->empty() || t.hosts.empty()) return ok_status();
  const std::string& mine = t.hosts[static_cast<size_t>(t.node_rank)];
  if (*name == mine) return ok_status();
  return config_error("SLURM_NODEID=\"" + std::to_string(t.node_rank) + "\" is host \"" + mine +
                      "\" in the node list but SLURMD_NODENAME=\"" + *name +
                      "\": expected SLURM_NODEID to index this node in the node list (run "
                      "trainvisor under srun, one task per node)");
}

// The largest count in a Slurm tasks-per-node list ("2(x3),1"); 0 when it cannot be read.
long max_tasks_per_node(const std::string& list) {
  long most = 0;
  size_t at = 0;
  while (at < list.size()) {
    long n = 0;
    const char* b = list.data() + at;
    auto [p, ec] = std::from_chars(b, list.data() + list.size(), n);
    if (ec != std::errc()) return 0;
    most = std::max(most, n);
    at = list.find(',', static_cast<size_t>(p - list.data()));
    if (at == std::string::npos) break;
    ++at;
  }
  return most;
}

// trainvisor is one task per node: it starts the node's workers itself.
Status check_one_task_per_node(const Environment& env) {
  const auto list = env.get("SLURM_STEP_TASKS_PER_NODE");
  const auto local = env.get("SLURM_LOCALID");
  const bool several = (list && max_tasks_per_node(*list) > 1) || (local && *local != "0");
  if (!several) return ok_status();
  return config_error(
      "SLURM_STEP_TASKS_PER_NODE=\"" + list.value_or("") + "\" (this is task SLURM_LOCALID=\"" +
      local.value_or("") +
      "\"): expected one trainvisor task per node, which starts the node's workers itself (srun "
      "--ntasks-per-node=1 trainvisor run --nproc-per-node N ...)");
}

// The batch script of a multi-node job runs on the first node only: its `run` would wait for
// nodes that never come. sbatch sets ENVIRONMENT=BATCH; only srun steps have SLURM_STEP_ID.
Status check_not_batch_script(const Environment& env, const Topology& t) {
  if (t.nnodes < 2 || env.has("SLURM_STEP_ID") || env.get("ENVIRONMENT") != "BATCH")
    return ok_status();
  return config_error("SLURM_NNODES=\"" + std::to_string(t.nnodes) +
                      "\" but no SLURM_STEP_ID and ENVIRONMENT=BATCH: this is the batch script, "
                      "which runs on the first node only; expected trainvisor on every node: "
                      "srun --ntasks-per-node=1 trainvisor run ... in the batch script");
}

// The variables that say "a Slurm job of several nodes": any one of them set means Slurm.
constexpr std::array kTopologyNames = {
    "SLURM_NNODES",   "SLURM_JOB_NUM_NODES",  "SLURM_NODEID",       "SLURM_JOB_NODELIST",
    "SLURM_NODELIST", "SLURM_STEP_NUM_NODES", "SLURM_STEP_NODELIST"};

// Without a job id every node would be a job of its own (no port, no key in common): refused.
Status check_job_id(const Environment& env) {
  const auto id = env.get("SLURM_JOB_ID");
  if (id && !id->empty()) return ok_status();
  std::string set;
  for (const char* n : kTopologyNames)
    if (env.has(n)) set += (set.empty() ? "" : ", ") + std::string(n);
  return config_error(
      std::string(id ? "SLURM_JOB_ID is empty" : "SLURM_JOB_ID is not set") +
      (set.empty()
           ? ""
           : " but " + set + (set.find(',') == std::string::npos ? " is" : " are") + " set") +
      ": expected the whole environment of a Slurm job (srun sets SLURM_JOB_ID with the node "
      "count, node id and node list); pass every SLURM_* variable through, or none");
}

// One step of a job runs one rendezvous: the step id joins the job id (the master port and the
// rendezvous key come from it), so two steps of one job on the same nodes never meet.
void set_job_id(const Environment& env, Topology& t) {
  t.job_id = *env.get("SLURM_JOB_ID");
  t.origin["job_id"] = from_env("SLURM_JOB_ID");
  const auto step = env.get("SLURM_STEP_ID");
  if (!step || step->empty()) return;
  t.job_id += "." + *step;
  t.origin["job_id"] = from_env("SLURM_JOB_ID") + " + SLURM_STEP_ID";
}

}  // namespace

bool slurm_detected(const Environment& env) {
  return env.has("SLURM_JOB_ID") || std::any_of(kTopologyNames.begin(), kTopologyNames.end(),
                                                [&](const char* n) { return env.has(n); });
}

Result<Topology> slurm_source(const Environment& env) {
  if (auto st = check_job_id(env); !st) return st.error();
  Topology t;
  t.platform = Platform::kSlurm;
  set_job_id(env, t);
  if (auto st = check_one_task_per_node(env); !st) return st.error();
  const SlurmNames names = pick_names(env);
  auto n = env_int_required(env, names.nnodes, 1, kMaxNodes, "",
                            "the job's node count (SLURM_NNODES or SLURM_JOB_NUM_NODES)");
  if (!n) return n.error();
  t.nnodes = static_cast<int>(*n);
  t.origin["nnodes"] = from_env(names.nnodes);
  if (auto st = check_not_batch_script(env, t); !st) return st.error();
  auto rank = env_int(env, "SLURM_NODEID", 0, t.nnodes - 1,
                      names.nnodes + " is " + std::to_string(t.nnodes));
  if (!rank) return rank.error();
  if (!*rank && t.nnodes > 1)
    return config_error("SLURM_NODEID is not set: expected this node's index from 0 to " +
                        std::to_string(t.nnodes - 1) + " (run trainvisor under srun)");
  t.node_rank = static_cast<int>(rank->value_or(0));
  t.origin["node_rank"] = *rank ? from_env("SLURM_NODEID") : "default (one node)";
  if (auto st = slurm_hosts(env, names, t); !st) return st.error();
  if (auto st = check_node_name(env, t); !st) return st.error();
  return t;
}

}  // namespace tv::topo
