// Kubeflow training operator (PyTorchJob): PET_* variables, else MASTER_ADDR + RANK + WORLD_SIZE.
//
// The trap: the operator's WORLD_SIZE is replicas x nprocPerNode when nprocPerNode is set
// (PET_NPROC_PER_NODE), and the pod count only when it is not.
#include <regex>

#include "launcher/topology/topology_sources.h"

namespace tv::topo {
namespace {

constexpr long kMax = kMaxNodes;

bool set(const Environment& env, const char* name) { return env.has(name); }

// "N" or "MIN:MAX" (the elasticPolicy's minReplicas:maxReplicas): MAX, and MIN where it is
// less (elastic membership, docs/coordination.md), else 0.
Result<std::pair<long, long>> parse_pet_nnodes(const std::string& v) {
  const std::string expected = "N or MIN:MAX with 1 <= MIN <= MAX <= " + std::to_string(kMax);
  auto colon = v.find(':');
  Environment one({{"PET_NNODES", v.substr(0, colon)}});
  auto lo = env_int(one, "PET_NNODES", 1, kMax);
  if (!lo || !*lo) return bad_var("PET_NNODES", v, expected);
  if (colon == std::string::npos) return std::make_pair(**lo, 0L);
  Environment two({{"PET_NNODES", v.substr(colon + 1)}});
  auto hi = env_int(two, "PET_NNODES", 1, kMax);
  if (!hi || !*hi) return bad_var("PET_NNODES", v, expected);
  if (**hi < **lo) return bad_var("PET_NNODES", v, expected);
  return std::make_pair(**hi, **hi == **lo ? 0L : **lo);
}

// PET_NPROC_PER_NODE as a number, or nullopt ("auto", "gpu", unset).
std::optional<long> pet_nproc(const Environment& env) {
  auto v = env_int(env, "PET_NPROC_PER_NODE", 1, 1 << 20);
  if (!v || !*v) return std::nullopt;
  return **v;
}

Status check_world_size(const Environment& env, long nnodes) {
  auto ws = env_int(env, "WORLD_SIZE", 1, 1L << 40);
  if (!ws) return ws.error();
  if (!*ws) return ok_status();
  const std::string ws_text = std::to_string(**ws);
  if (!set(env, "PET_NPROC_PER_NODE")) {
    if (**ws == nnodes) return ok_status();
    return config_error("WORLD_SIZE=\"" + ws_text + "\" conflicts with PET_NNODES=\"" +
                        std::to_string(nnodes) +
                        "\": expected WORLD_SIZE = PET_NNODES (the pod count) when "
                        "PET_NPROC_PER_NODE is not set");
  }
  auto p = pet_nproc(env);
  if (!p || **ws == nnodes * *p) return ok_status();
  return config_error(
      "WORLD_SIZE=\"" + ws_text + "\" conflicts with PET_NNODES=\"" + std::to_string(nnodes) +
      "\" and PET_NPROC_PER_NODE=\"" + std::to_string(*p) +
      "\": expected WORLD_SIZE = PET_NNODES x PET_NPROC_PER_NODE = " + std::to_string(nnodes * *p));
}

// From WORLD_SIZE alone: the pod count, or replicas x nprocPerNode.
Result<long> nnodes_from_world_size(const Environment& env, std::string& origin) {
  auto ws = env_int_required(env, "WORLD_SIZE", 1, 1L << 40, "",
                             "the node count: neither PET_NNODES nor WORLD_SIZE is set");
  if (!ws) return ws.error();
  if (!set(env, "PET_NPROC_PER_NODE")) {
    if (*ws > kMax)
      return bad_var("WORLD_SIZE", std::to_string(*ws),
                     "at most " + std::to_string(kMax) + " pods");
    origin = "env WORLD_SIZE (the pod count: PET_NPROC_PER_NODE is not set)";
    return *ws;
  }
  const std::string pn = *env.get("PET_NPROC_PER_NODE");
  auto p = pet_nproc(env);
  if (!p)
    return config_error("WORLD_SIZE=\"" + std::to_string(*ws) + "\" with PET_NPROC_PER_NODE=\"" +
                        pn +
                        "\": the node count is unknown: expected PET_NNODES, or a number in "
                        "PET_NPROC_PER_NODE");
  if (*ws % *p != 0 || *ws / *p > kMax)
    return config_error("WORLD_SIZE=\"" + std::to_string(*ws) + "\" with PET_NPROC_PER_NODE=\"" +
                        pn + "\": expected WORLD_SIZE = replicas x PET_NPROC_PER_NODE");
  origin = "env WORLD_SIZE / PET_NPROC_PER_NODE (the operator's WORLD_SIZE counts processes)";
  return *ws / *p;
}

// The node count, and MIN of an elastic range (0: fixed) in `min_nnodes`. An elastic job's
// WORLD_SIZE is not checked: its node count changes.
Result<long> kubeflow_nnodes(const Environment& env, std::string& origin, int& min_nnodes) {
  if (!set(env, "PET_NNODES")) return nnodes_from_world_size(env, origin);
  auto n = parse_pet_nnodes(*env.get("PET_NNODES"));
  if (!n) return n.error();
  min_nnodes = static_cast<int>(n->second);
  if (min_nnodes == 0)
    if (auto st = check_world_size(env, n->first); !st) return st.error();
  origin = from_env("PET_NNODES");
  return n->first;
}

// "<job>-master-0" or "<job>-worker-3", optionally followed by a domain.
std::string job_name_from(const std::string& host) {
  static const std::regex re(R"(^([a-z0-9]([-a-z0-9]*[a-z0-9])?)-(master|worker)-[0-9]+(\..*)?$)");
  std::smatch m;
  return std::regex_match(host, m, re) ? m[1].str() : "";
}

Status kubeflow_master(const Environment& env, bool master_given, Topology& t) {
  const char* name = set(env, "PET_MASTER_ADDR") ? "PET_MASTER_ADDR" : "MASTER_ADDR";
  if (!set(env, name)) {
    if (t.nnodes == 1 || master_given) {
      t.origin["master_addr"] = "default (one node)";
      return ok_status();
    }
    return config_error(
        "PET_MASTER_ADDR and MASTER_ADDR are not set: expected the master pod's "
        "address for " +
        std::to_string(t.nnodes) + " nodes");
  }
  t.master_addr = *env.get(name);
  if (!plausible_host(t.master_addr)) return bad_var(name, t.master_addr, "a host name or address");
  t.origin["master_addr"] = from_env(name);
  return ok_status();
}

Status kubeflow_port(const Environment& env, Topology& t) {
  const char* name = set(env, "PET_MASTER_PORT") ? "PET_MASTER_PORT" : "MASTER_PORT";
  auto port = env_int(env, name, 1, 65535);
  if (!port) return port.error();
  if (*port) {
    t.master_port = static_cast<int>(**port);
    t.origin["master_port"] = from_env(name);
  }
  return ok_status();
}

void kubeflow_job(const Environment& env, Topology& t) {
  std::string job = job_name_from(t.master_addr);
  const char* from = "master_addr";
  if (job.empty() && env.has("HOSTNAME")) {
    job = job_name_from(*env.get("HOSTNAME"));
    from = "env HOSTNAME";
  }
  if (job.empty()) return;
  t.job_id = job;
  t.origin["job_id"] = std::string(from) + " (<job>-master-N / <job>-worker-N)";
}

}  // namespace

bool kubeflow_detected(const Environment& env) {
  return set(env, "PET_NNODES") || set(env, "PET_NODE_RANK") || set(env, "PET_MASTER_ADDR") ||
         (set(env, "MASTER_ADDR") && set(env, "RANK") && set(env, "WORLD_SIZE"));
}

Result<Topology> kubeflow_source(const Environment& env, bool master_given) {
  Topology t;
  t.platform = Platform::kKubeflow;
  std::string origin;
  auto n = kubeflow_nnodes(env, origin, t.min_nnodes);
  if (!n) return n.error();
  t.nnodes = static_cast<int>(*n);
  t.origin["nnodes"] = origin;
  const char* rank_var = set(env, "PET_NODE_RANK") ? "PET_NODE_RANK" : "RANK";
  auto rank = env_int_required(env, rank_var, 0, t.nnodes - 1,
                               "nnodes is " + std::to_string(t.nnodes) + " from " + origin,
                               "this pod's index: PET_NODE_RANK or RANK");
  if (!rank) return rank.error();
  t.node_rank = static_cast<int>(*rank);
  t.origin["node_rank"] = from_env(rank_var);
  if (auto st = kubeflow_master(env, master_given, t); !st) return st.error();
  if (auto st = kubeflow_port(env, t); !st) return st.error();
  kubeflow_job(env, t);
  return t;
}

}  // namespace tv::topo
