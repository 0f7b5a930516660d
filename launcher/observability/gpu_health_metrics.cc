#include "launcher/observability/gpu_health_metrics.h"

#include <spdlog/fmt/fmt.h>

namespace tv {

void GpuHealthMetrics::condition(int gpu, const std::string& uuid, const std::string& name,
                                 bool active) {
  said_anything_ = true;
  conditions_[{gpu, name}] = {uuid, active ? 1.0 : 0.0};
}

void GpuHealthMetrics::xid(int gpu, const std::string& uuid, unsigned xid) {
  said_anything_ = true;
  auto& s = xids_[{gpu, xid}];
  s.uuid = uuid;
  s.value += 1;
}

std::string GpuHealthMetrics::render() const {
  if (!said_anything_ && !watching_) return "";
  std::string out =
      "# HELP trainvisor_gpu_health_watching 1 while the GPU health watch reads NVML.\n"
      "# TYPE trainvisor_gpu_health_watching gauge\n";
  out += fmt::format("trainvisor_gpu_health_watching {}\n", watching_ ? 1 : 0);
  out +=
      "# HELP trainvisor_gpu_condition 1 while a GPU shows the condition (ecc_uncorrected, "
      "remap_pending, hw_thermal ...), 0 once it cleared.\n"
      "# TYPE trainvisor_gpu_condition gauge\n";
  for (const auto& [key, s] : conditions_)
    out += fmt::format("trainvisor_gpu_condition{{gpu=\"{}\",uuid=\"{}\",condition=\"{}\"}} {}\n",
                       key.first, s.uuid, key.second, s.value);
  out +=
      "# HELP trainvisor_gpu_xid_events_total Xid events NVML reported for a GPU.\n"
      "# TYPE trainvisor_gpu_xid_events_total counter\n";
  for (const auto& [key, s] : xids_)
    out += fmt::format("trainvisor_gpu_xid_events_total{{gpu=\"{}\",uuid=\"{}\",xid=\"{}\"}} {}\n",
                       key.first, s.uuid, key.second, s.value);
  return out;
}

}  // namespace tv
