// Slurm: SLURM_JOB_ID with SLURM_NNODES (or SLURM_JOB_NUM_NODES); node_rank = SLURM_NODEID;
// master = first host of the expanded node list. Inside an srun step that uses part of the
// allocation, the step's SLURM_STEP_NUM_NODES + SLURM_STEP_NODELIST are used together.
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

SlurmNames pick_names(const Environment& env) {
  if (env.has("SLURM_STEP_NUM_NODES") && env.has("SLURM_STEP_NODELIST"))
    return {"SLURM_STEP_NUM_NODES", "SLURM_STEP_NODELIST"};
  const char* n = first_set(env, {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"});
  const char* l = first_set(env, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"});
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
                        " is not set: expected the job's node list (e.g. "
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

}  // namespace

bool slurm_detected(const Environment& env) {
  return env.has("SLURM_JOB_ID") && (env.has("SLURM_NNODES") || env.has("SLURM_JOB_NUM_NODES"));
}

Result<Topology> slurm_source(const Environment& env) {
  if (!env.has("SLURM_JOB_ID"))
    return config_error("SLURM_JOB_ID is not set: expected to run inside a Slurm job");
  Topology t;
  t.platform = "slurm";
  t.job_id = *env.get("SLURM_JOB_ID");
  t.origin["job_id"] = from_env("SLURM_JOB_ID");
  const SlurmNames names = pick_names(env);
  auto n = env_int_required(env, names.nnodes, 1, kMaxNodes, "",
                            "the job's node count (SLURM_NNODES or SLURM_JOB_NUM_NODES)");
  if (!n) return n.error();
  t.nnodes = static_cast<int>(*n);
  t.origin["nnodes"] = from_env(names.nnodes);
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
