#include "launcher/run/start_banner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/log.h"

namespace tv {
namespace {

std::string from(const Topology& t, const std::string& key) {
  auto it = t.origin.find(key);
  return it == t.origin.end() ? "" : " (from " + it->second + ")";
}

std::string plural(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string describe(const GpuIdentity& g) {
  return "GPU " + std::to_string(g.index) + ": " + (g.name.empty() ? "unnamed" : g.name) +
         " (UUID: " + (g.uuid.empty() ? "unknown" : g.uuid) +
         (g.pci_bus_id.empty() ? "" : ", PCI " + g.pci_bus_id) + ")";
}

}  // namespace

BannerGpus banner_gpus(const std::optional<Result<GpuHealthSnapshot>>& read,
                       const std::string& read_by, const GpuVisibility& devices, int workers) {
  BannerGpus b;
  const std::string nodes = "device nodes: " + devices.describe;
  const bool listed = read && *read && !(*read)->gpus.empty();
  if (!listed) {
    b.state = devices.count > 0 ? BannerGpus::State::kUnknown : BannerGpus::State::kNone;
    if (b.state == BannerGpus::State::kNone) {
      b.from = devices.describe;
    } else {
      const std::string why = !read   ? "not read"
                              : *read ? "NVML: " + (*read)->error
                                      : (*read).error().message;
      b.from = why + "; " + nodes;
    }
    return b;
  }
  const auto& all = (*read)->gpus;
  const int visible = static_cast<int>(all.size());
  const int used = std::clamp(workers, 0, visible);
  b.state = BannerGpus::State::kListed;
  b.gpus.assign(all.begin(), all.begin() + used);
  b.unused = visible - used;
  b.missing = std::max(0, workers - visible);
  b.from = read_by + "; " + nodes;
  if (b.unused > 0) b.from += "; " + plural(b.unused, "more visible GPU") + " not used";
  if (b.missing > 0)
    b.from += "; only " + plural(visible, "GPU") + " for " + plural(workers, "worker");
  return b;
}

std::string gpus_text(const BannerGpus& g) {
  if (g.state == BannerGpus::State::kNone) return "none (" + g.from + ")";
  if (g.state == BannerGpus::State::kUnknown) return "unknown (" + g.from + ")";
  std::string out;
  for (const auto& d : g.gpus) out += (out.empty() ? "" : "; ") + describe(d);
  return (out.empty() ? "none used" : out) + " (from " + g.from + ")";
}

nlohmann::json gpus_json(const BannerGpus& g) {
  static const char* const kStates[] = {"listed", "none", "unknown"};
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : g.gpus)
    list.push_back(
        {{"index", d.index}, {"name", d.name}, {"uuid", d.uuid}, {"pci_bus_id", d.pci_bus_id}});
  return {{"gpus", g.state == BannerGpus::State::kUnknown ? nlohmann::json(nullptr) : list},
          {"gpus_state", kStates[static_cast<int>(g.state)]},
          {"gpus_from", g.from}};
}

BannerItem gpus_item(const BannerGpus& g) { return {"gpus", gpus_text(g), gpus_json(g)}; }

std::vector<BannerItem> banner_items(const BannerFacts& f) {
  const Topology& t = f.topology;
  std::vector<BannerItem> items = {
      {"host", f.host, nullptr},
      {"platform",
       std::string(platform_name(t.platform)) + from(t, "platform") +
           (t.job_id.empty() ? "" : ", job " + t.job_id + from(t, "job_id")),
       nullptr},
      {"node rank", std::to_string(t.node_rank) + from(t, "node_rank"), nullptr},
      {"nodes",
       std::to_string(t.nnodes) + from(t, "nnodes") +
           (t.spare_nodes > 0
                ? ", and " + std::to_string(t.spare_nodes) + " spare(s)" + from(t, "spare_nodes") +
                      (t.node_rank >= t.nnodes ? ": this node starts as one" : "")
                : std::string()),
       nullptr},
      {"master",
       t.master_addr + from(t, "master_addr") + ", port " +
           (t.master_port == 0 && t.origin.count("master_port")
                ? t.origin.at("master_port")
                : std::to_string(t.master_port) + from(t, "master_port")),
       nullptr},
      {"workers",
       std::to_string(t.nproc_per_node) + " per node" + from(t, "nproc_per_node") + ", world " +
           std::to_string(t.world_size()),
       nullptr},
  };
  if (f.gpus) items.push_back(gpus_item(*f.gpus));
  items.push_back({"command", f.command, nullptr});
  if (!f.interpreter.empty()) items.push_back({"interpreter", f.interpreter, nullptr});
  if (!f.torch.empty()) items.push_back({"torch", f.torch, nullptr});
  items.push_back({"resume", f.resume, nullptr});
  if (!f.exported.empty()) items.push_back({"export", f.exported, nullptr});
  return items;
}

void log_banner_item(const BannerItem& item) {
  const std::string line = "start: " + item.name + ": " + item.text;
  if (item.fields.is_object())
    log_info_with_fields(line, item.fields);
  else
    spdlog::info("{}", line);
}

void log_banner(const BannerFacts& f) {
  for (const auto& item : banner_items(f)) log_banner_item(item);
}

}  // namespace tv
