#include "launcher/observability/retry_metrics.h"

#include <spdlog/fmt/fmt.h>

namespace tv {

std::string render_retry_decisions(const std::map<std::string, int>& by_rule) {
  if (by_rule.empty()) return "";
  std::string out =
      "# HELP trainvisor_retry_decisions_total decisions after a failed generation, by the rule "
      "that made them (retried or gave up)\n# TYPE trainvisor_retry_decisions_total counter\n";
  // Rules are the judge's own words ([a-z_]), never text from outside: no escaping needed.
  for (const auto& [rule, n] : by_rule)
    out += fmt::format("trainvisor_retry_decisions_total{{rule=\"{}\"}} {}\n", rule, n);
  return out;
}

}  // namespace tv
