// The GPU health watch's figures on /metrics (docs/observability.md): whether the watch runs, each
// condition of each GPU now (1 active, 0 cleared), the Xid events counted per GPU and Xid. Fed on
// the Supervisor's event loop (launcher/run/observability.cc); pure.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "launcher/observability/metric_set.h"

namespace tv {

class GpuHealthMetrics {
 public:
  void watching(bool on) { watching_ = on; }
  void condition(int gpu, const std::string& uuid, const std::string& name, bool active);
  void xid(int gpu, const std::string& uuid, unsigned xid);
  // The figures (none before the watch said anything) and their Prometheus text.
  MetricSet families() const;
  std::string render() const { return prometheus_text(families()); }

 private:
  struct Series {
    std::string uuid;
    double value = 0;
  };
  bool said_anything_ = false;
  bool watching_ = false;
  std::map<std::pair<int, std::string>, Series> conditions_;
  std::map<std::pair<int, unsigned>, Series> xids_;
};

}  // namespace tv
