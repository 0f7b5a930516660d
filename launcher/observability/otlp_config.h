// The OpenTelemetry SDK's variables for the OTLP metrics push (opentelemetry-specification,
// protocol/exporter.md and configuration/sdk-environment-variables.md), read from an Environment
// snapshot. Pure. As the specification asks of an SDK, a bad value never stops the job: it costs
// one warning naming the variable and what was expected, and the setting's default is used (an
// interval, a timeout), or the variable is ignored (headers, resource attributes), or, when there
// is nothing to push to (an endpoint without http://, grpc, https), the push is off.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/environment.h"
#include "common/options.h"
#include "launcher/observability/otlp_encode.h"

namespace tv {

struct OtlpConfig {
  std::string url;   // <endpoint>/v1/metrics, or the metrics endpoint as it is
  std::string host;  // of url: http only
  std::string port;
  std::string target;                         // path and query, "/v1/metrics"
  bool protobuf = true;                       // http/protobuf (the default), else http/json
  OtlpAttributes headers;                     // sent with every request
  OtlpAttributes resource;                    // service.name first, then OTEL_RESOURCE_ATTRIBUTES
  std::chrono::milliseconds interval{60000};  // OTEL_METRIC_EXPORT_INTERVAL
  std::chrono::milliseconds timeout{10000};   // OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT
};

struct OtlpSetup {
  std::optional<OtlpConfig> config;   // nullopt: no push
  std::vector<std::string> warnings;  // one line each, naming the variable
  std::string refused;                // --otlp-endpoint is not a URL trainvisor can push to
};

// `own`: --otlp-endpoint (TRAINVISOR_OTLP_ENDPOINT), trainvisor's own endpoint over the OTEL_*
// ones: a base URL as OTEL_EXPORTER_OTLP_ENDPOINT, OTLP/HTTP whatever the workers' protocol
// variable says (http/json when it says so), the SDK switches ignored (they are the workers'); a
// bad one is `refused`, the run's exit 78.
OtlpSetup read_otlp_config(const Environment& env, const std::optional<OptionValue>& own = {});

// What trainvisor knows of this node (service.version, host.name, trainvisor.job.id, node rank
// ...), added to the resource after OTEL_RESOURCE_ATTRIBUTES' own keys unless those name them.
void add_identity(OtlpAttributes& resource, const OtlpAttributes& identity);

// The push's deadline at exit: the timeout, at most this (docs/observability.md, "OTLP push").
inline constexpr std::chrono::milliseconds kOtlpExitDeadline{1000};

}  // namespace tv
