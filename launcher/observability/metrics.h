// The figures of a GoodputSnapshot as data (metric_set, job_metric_set: what /metrics and the
// OTLP push both carry) and their Prometheus text exposition (format 0.0.4): the `trainvisor_`
// metrics that docs/observability.md lists, in base units, counters ending in `_total`. Figures
// that are not known yet (no checkpoint seen, no progress line, no MTBF) are left out rather than
// sent as 0. Pure.
#pragma once

#include <string>

#include "launcher/observability/goodput.h"
#include "launcher/observability/ledger.h"
#include "launcher/observability/metric_set.h"

namespace tv {

struct MetricsIdentity {
  std::string version;
  int node_rank = 0;
  int nnodes = 1;
};

MetricSet metric_set(const GoodputSnapshot& s, const MetricsIdentity& id);
MetricSet job_metric_set(const JobTotals& t);
std::string render_metrics(const GoodputSnapshot& s, const MetricsIdentity& id);
// The job-level series (`trainvisor_job_*`) from its ledger, appended by node 0 when it keeps one.
std::string render_job_metrics(const JobTotals& t);

}  // namespace tv
