// topology_to_json() and format_topology().
#include <algorithm>
#include <iomanip>
#include <sstream>
#include <vector>

#include "launcher/topology/topology.h"

namespace tv {
namespace {

std::string origin_of(const Topology& t, const std::string& field) {
  auto it = t.origin.find(field);
  return it == t.origin.end() ? "" : it->second;
}

std::string joined(const std::vector<std::string>& hosts) {
  std::string out;
  const size_t shown = std::min<size_t>(hosts.size(), 8);
  for (size_t i = 0; i < shown; ++i) out += (i ? "," : "") + hosts[i];
  if (hosts.size() > shown) out += ",... (" + std::to_string(hosts.size()) + " hosts)";
  return out;
}

struct Row {
  std::string field, value, origin;
};

// FIELD, VALUE and SOURCE columns; the field column is as wide as its longest name (a worker_env
// variable such as NCCL_SOCKET_IFNAME is longer than the usual 16) plus two spaces, so a name is
// never run into its value.
std::string table(const std::vector<Row>& rows) {
  size_t width = 16;
  for (const auto& r : rows) width = std::max(width, r.field.size() + 2);
  std::ostringstream out;
  for (const auto& r : rows) {
    out << std::left << std::setw(static_cast<int>(width)) << r.field << std::setw(24) << r.value;
    if (!r.origin.empty()) out << "  " << r.origin;
    out << "\n";
  }
  return out.str();
}

}  // namespace

nlohmann::json topology_to_json(const Topology& t) {
  nlohmann::json j = {{"platform", platform_name(t.platform)},
                      {"nnodes", t.nnodes},
                      {"node_rank", t.node_rank},
                      {"nproc_per_node", t.nproc_per_node},
                      {"world_size", t.world_size()},
                      {"master_addr", t.master_addr},
                      {"master_port", t.master_port},
                      {"job_id", t.job_id},
                      {"worker_env", t.worker_env},
                      {"sources", t.origin}};
  if (!t.hosts.empty()) j["hosts"] = t.hosts;
  if (t.min_nnodes > 0) j["min_nnodes"] = t.min_nnodes;  // elastic: nnodes is the MAX
  if (t.spare_nodes > 0) j["spare_nodes"] = t.spare_nodes;
  if (!t.instance_type.empty()) j["instance_type"] = t.instance_type;
  if (!t.not_training.empty()) j["not_training"] = t.not_training;
  return j;
}

std::string format_topology(const Topology& t) {
  std::vector<Row> rows = {
      {"FIELD", "VALUE", "SOURCE"},
      {"platform", std::string(platform_name(t.platform)), origin_of(t, "platform")},
      {"nnodes",
       t.min_nnodes > 0 ? std::to_string(t.min_nnodes) + ":" + std::to_string(t.nnodes)
                        : std::to_string(t.nnodes),
       origin_of(t, "nnodes")},
      {"node_rank", std::to_string(t.node_rank), origin_of(t, "node_rank")}};
  if (t.spare_nodes > 0)
    rows.push_back({"spare_nodes", std::to_string(t.spare_nodes), origin_of(t, "spare_nodes")});
  rows.insert(rows.end(),
              {{"nproc_per_node", std::to_string(t.nproc_per_node), origin_of(t, "nproc_per_node")},
               {"world_size", std::to_string(t.world_size()), "nnodes x nproc_per_node"},
               {"master_addr", t.master_addr, origin_of(t, "master_addr")},
               {"master_port", std::to_string(t.master_port), origin_of(t, "master_port")}});
  if (!t.hosts.empty()) rows.push_back({"hosts", joined(t.hosts), origin_of(t, "hosts")});
  rows.push_back({"job_id", t.job_id.empty() ? "-" : t.job_id, origin_of(t, "job_id")});
  if (!t.instance_type.empty())
    rows.push_back({"instance_type", t.instance_type, origin_of(t, "instance_type")});
  if (!t.not_training.empty()) rows.push_back({"not_training", t.not_training, "this node"});
  for (const auto& [k, v] : t.worker_env) rows.push_back({k, v, origin_of(t, "worker_env." + k)});
  return table(rows);
}

}  // namespace tv
