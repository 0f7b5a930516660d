#include "health/efa_check.h"

#include <algorithm>
#include <cctype>

#include "common/bounded_read.h"

namespace tv {
namespace {

constexpr const char* kClass = "/sys/class/infiniband";

std::string basename_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A sysfs attribute: one short line (at most kSmallFileCap read), trailing whitespace removed.
std::optional<std::string> read_attribute(const FileSystem& fs, const std::string& path) {
  auto text = fs.read(path, kSmallFileCap);
  if (!text) return std::nullopt;
  while (!text->empty() && std::isspace(static_cast<unsigned char>(text->back()))) text->pop_back();
  return text;
}

RdmaDevice read_device(const FileSystem& fs, const std::string& name) {
  RdmaDevice d;
  d.name = name;
  const std::string dev = std::string(kClass) + "/" + name + "/device";
  if (auto link = fs.read_link(dev + "/driver")) d.driver = basename_of(*link);
  d.vendor = read_attribute(fs, dev + "/vendor").value_or("");
  for (const auto& uv : fs.list(dev + "/infiniband_verbs")) {
    d.uverbs.push_back(uv);
    if (!fs.exists("/dev/infiniband/" + uv)) d.missing_nodes.push_back("/dev/infiniband/" + uv);
  }
  return d;
}

nlohmann::json device_json(const RdmaDevice& d) {
  return {{"name", d.name},
          {"driver", d.driver},
          {"vendor", d.vendor},
          {"uverbs", d.uverbs},
          {"missing_nodes", d.missing_nodes}};
}

std::string names(const std::vector<RdmaDevice>& devs) {
  std::string out;
  for (const auto& d : devs) out += (out.empty() ? "" : ", ") + d.name;
  return out;
}

}  // namespace

RdmaInventory find_rdma_devices(const FileSystem& fs) {
  RdmaInventory inv;
  for (const auto& name : fs.list(kClass)) {
    RdmaDevice d = read_device(fs, name);
    (d.is_efa() ? inv.efa : inv.other).push_back(std::move(d));
  }
  return inv;
}

bool efa_devices_present() { return !find_rdma_devices(RealFileSystem{}).efa.empty(); }

CheckResult efa_devices_check(const RdmaInventory& inv, TransportRule required) {
  nlohmann::json details = {{"efa", nlohmann::json::array()}, {"other", nlohmann::json::array()}};
  for (const auto& d : inv.efa) details["efa"].push_back(device_json(d));
  for (const auto& d : inv.other) details["other"].push_back(device_json(d));
  CheckResult r{"efa-devices", Outcome::kPass, "", details};
  if (inv.efa.empty()) {
    r.outcome = required == TransportRule::kEfa ? Outcome::kFail : Outcome::kSkip;
    r.message = "no EFA device in /sys/class/infiniband (none with driver efa or vendor 0x1d0f)";
    if (required == TransportRule::kEfa)
      r.message += ", but --require-transport efa: run on an EFA-enabled instance";
    return r;
  }
  std::vector<std::string> missing;
  for (const auto& d : inv.efa)
    for (const auto& m : d.missing_nodes) missing.push_back(m);
  r.message = std::to_string(inv.efa.size()) + " EFA device(s): " + names(inv.efa);
  if (!missing.empty()) {
    r.outcome = Outcome::kFail;
    r.message +=
        "; but " + std::to_string(missing.size()) +
        " uverbs node(s) are missing in this container (" + missing.front() +
        (missing.size() > 1 ? ", ..." : "") +
        "): pass /dev/infiniband/uverbs* into the container (Kubernetes: request the "
        "vpc.amazonaws.com/efa resource; docker: --device /dev/infiniband/uverbs0 ...), or "
        "libfabric will find no efa provider and NCCL will fall back to TCP";
  }
  if (!inv.other.empty()) {
    if (r.outcome == Outcome::kPass) r.outcome = Outcome::kWarn;
    r.message += "; non-EFA RDMA devices are exposed beside them (" + names(inv.other) +
                 "): NCCL's IB transport may pick those; expose only the EFA devices";
  }
  return r;
}

}  // namespace tv
