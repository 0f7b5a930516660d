// What `run`'s observability options ask for (docs/observability.md), read before anything
// starts: the metrics port and address, the progress regex, the summary file, the goodput's MTBF
// and FLOPs, the ledger's and the metrics line's intervals. plan_run fills the rest (the topology's
// goodput fields, the ledger's place and job, the OTLP push); launcher/run/observability.h's
// Observability wires what this asks for.
#pragma once

#include <optional>
#include <string>

#include "common/options.h"
#include "common/result.h"
#include "launcher/observability/goodput.h"
#include "launcher/observability/otlp_exporter.h"

namespace tv {

struct ObservabilityConfig {
  GoodputConfig goodput;
  int metrics_port = 0;  // 0 = off
  std::string metrics_address = "0.0.0.0";
  std::optional<std::string> progress_regex;
  std::optional<std::string> summary_file;
  // The job's ledger (docs/observability.md, "The job's ledger"): kept by node 0 in the checkpoint
  // dir when the job has an id; rewritten every ledger_interval seconds (0: no ledger) and at exit.
  std::optional<std::string> ledger_dir;
  std::string job_id;  // "" or "none": no ledger
  double ledger_interval = 30;
  // Node 0 logs format_metrics_line every metrics_log_interval seconds and at the end; 0: never.
  double metrics_log_interval = 0;
  // The OTLP push (OTEL_EXPORTER_OTLP_*: read_otlp_config); nullopt: none.
  std::optional<OtlpConfig> otlp;
};

// The options of the Observability section, checked (exit 64/78 naming the option); `goodput`
// fields other than mtbf_hours are left for the caller (they come from the topology). Without
// --metrics-address the port listens on loopback only, except in a Kubernetes pod
// (`in_kubernetes`: KUBERNETES_SERVICE_HOST), where the kubelet's probes and Prometheus reach it
// on the pod's address (docs/observability.md).
Result<ObservabilityConfig> read_observability_options(const Options& o, bool in_kubernetes);

}  // namespace tv
