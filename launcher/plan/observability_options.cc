#include "launcher/plan/observability_options.h"

#include "common/exit_codes.h"

namespace tv {

Result<ObservabilityConfig> read_observability_options(const Options& o, bool in_kubernetes) {
  ObservabilityConfig c;
  auto port = o.get_int("metrics-port");
  if (!port) return port.error();
  c.metrics_port = static_cast<int>(*port);
  c.metrics_address = o.value_or("metrics-address", in_kubernetes ? "0.0.0.0" : "127.0.0.1");
  if (auto v = o.get("progress-regex")) c.progress_regex = v->value;
  if (auto v = o.get("summary-file")) c.summary_file = v->value;
  if (auto v = o.get("mtbf-hours")) {
    auto h = o.get_double("mtbf-hours");
    if (!h) return h.error();
    if (*h <= 0)
      return Error{ErrorKind::kConfig,
                   v->origin + "=\"" + v->value + "\": expected a number of hours above 0"};
    c.goodput.mtbf_hours = *h;
  }
  if (o.get("flops-per-step")) {
    auto f = o.get_double("flops-per-step");
    if (!f) return f.error();
    c.goodput.flops_per_step = *f;
  }
  auto interval = o.get_double("ledger-interval");
  if (!interval) return interval.error();
  c.ledger_interval = *interval;
  auto every = o.get_double("metrics-log-interval");
  if (!every) return every.error();
  c.metrics_log_interval = *every;
  return c;
}

}  // namespace tv
