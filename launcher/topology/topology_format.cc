// topology_to_json() and format_topology().
#include <iomanip>
#include <sstream>

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

void line(std::ostringstream& out, const std::string& field, const std::string& value,
          const std::string& origin) {
  out << std::left << std::setw(16) << field << std::setw(24) << value;
  if (!origin.empty()) out << "  " << origin;
  out << "\n";
}

}  // namespace

nlohmann::json topology_to_json(const Topology& t) {
  nlohmann::json j = {{"platform", t.platform},       {"nnodes", t.nnodes},
                      {"node_rank", t.node_rank},     {"nproc_per_node", t.nproc_per_node},
                      {"world_size", t.world_size()}, {"master_addr", t.master_addr},
                      {"master_port", t.master_port}, {"job_id", t.job_id},
                      {"worker_env", t.worker_env},   {"sources", t.origin}};
  if (!t.hosts.empty()) j["hosts"] = t.hosts;
  return j;
}

std::string format_topology(const Topology& t) {
  std::ostringstream out;
  line(out, "FIELD", "VALUE", "SOURCE");
  line(out, "platform", t.platform, origin_of(t, "platform"));
  line(out, "nnodes", std::to_string(t.nnodes), origin_of(t, "nnodes"));
  line(out, "node_rank", std::to_string(t.node_rank), origin_of(t, "node_rank"));
  line(out, "nproc_per_node", std::to_string(t.nproc_per_node), origin_of(t, "nproc_per_node"));
  line(out, "world_size", std::to_string(t.world_size()), "nnodes x nproc_per_node");
  line(out, "master_addr", t.master_addr, origin_of(t, "master_addr"));
  line(out, "master_port", std::to_string(t.master_port), origin_of(t, "master_port"));
  if (!t.hosts.empty()) line(out, "hosts", joined(t.hosts), origin_of(t, "hosts"));
  line(out, "job_id", t.job_id.empty() ? "-" : t.job_id, origin_of(t, "job_id"));
  for (const auto& [k, v] : t.worker_env) line(out, k, v, origin_of(t, "worker_env." + k));
  return out.str();
}

}  // namespace tv
