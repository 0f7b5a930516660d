#include "launcher/observability/retry_metrics.h"

namespace tv {

MetricSet retry_decision_set(const std::map<std::string, int>& by_rule) {
  if (by_rule.empty()) return {};
  MetricSetWriter w;
  w.family("trainvisor_retry_decisions_total", true,
           "decisions after a failed generation, by the rule that made them (retried or gave up)");
  for (const auto& [rule, n] : by_rule) w.sample(n, {{"rule", rule}});
  return w.take();
}

std::string render_retry_decisions(const std::map<std::string, int>& by_rule) {
  return prometheus_text(retry_decision_set(by_rule));
}

}  // namespace tv
