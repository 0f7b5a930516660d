#include "launcher/observability/gpu_health_metrics.h"

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

MetricSet GpuHealthMetrics::families() const {
  if (!said_anything_ && !watching_) return {};
  MetricSetWriter w;
  w.single("trainvisor_gpu_health_watching", false, "1 while the GPU health watch reads NVML.",
           watching_ ? 1 : 0);
  w.family("trainvisor_gpu_condition", false,
           "1 while a GPU shows the condition (ecc_uncorrected, remap_pending, hw_thermal ...), 0 "
           "once it cleared.");
  for (const auto& [key, s] : conditions_)
    w.sample(s.value,
             {{"gpu", std::to_string(key.first)}, {"uuid", s.uuid}, {"condition", key.second}});
  w.family("trainvisor_gpu_xid_events_total", true, "Xid events NVML reported for a GPU.");
  for (const auto& [key, s] : xids_)
    w.sample(s.value, {{"gpu", std::to_string(key.first)},
                       {"uuid", s.uuid},
                       {"xid", std::to_string(key.second)}});
  return w.take();
}

}  // namespace tv
