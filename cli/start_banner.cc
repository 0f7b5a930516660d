#include "cli/start_banner.h"

#include <spdlog/spdlog.h>

namespace tv {
namespace {

std::string from(const Topology& t, const std::string& key) {
  auto it = t.origin.find(key);
  return it == t.origin.end() ? "" : " (from " + it->second + ")";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> banner_items(const BannerFacts& f) {
  const Topology& t = f.topology;
  std::vector<std::pair<std::string, std::string>> items = {
      {"host", f.host},
      {"platform", t.platform + from(t, "platform") +
                       (t.job_id.empty() ? "" : ", job " + t.job_id + from(t, "job_id"))},
      {"node rank", std::to_string(t.node_rank) + from(t, "node_rank")},
      {"nodes", std::to_string(t.nnodes) + from(t, "nnodes")},
      {"master", t.master_addr + from(t, "master_addr") + ", port " +
                     std::to_string(t.master_port) + from(t, "master_port")},
      {"workers", std::to_string(t.nproc_per_node) + " per node" + from(t, "nproc_per_node") +
                      ", world " + std::to_string(t.world_size())},
      {"gpus", f.gpus},
      {"command", f.command},
  };
  if (!f.interpreter.empty()) items.emplace_back("interpreter", f.interpreter);
  if (!f.torch.empty()) items.emplace_back("torch", f.torch);
  items.emplace_back("resume", f.resume);
  if (!f.exported.empty()) items.emplace_back("export", f.exported);
  return items;
}

void log_banner(const BannerFacts& f) {
  for (const auto& [item, text] : banner_items(f)) spdlog::info("start: {}: {}", item, text);
}

}  // namespace tv
