// One OTLP ExportMetricsServiceRequest (opentelemetry-proto, collector/metrics/v1) of a MetricSet:
// one ResourceMetrics (the resource's attributes), one ScopeMetrics (scope "trainvisor"), one
// Metric per family named as on /metrics, its HELP as the description; a counter is a Sum
// (monotonic, cumulative, from trainvisor's start), a gauge a Gauge; each sample one
// NumberDataPoint (asDouble) with its labels as string attributes. Two encodings: the protobuf
// wire format (http/protobuf) and the OTLP JSON mapping (http/json: camelCase names, 64-bit
// integers as strings, enums as numbers). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "launcher/observability/metric_set.h"

namespace tv {

using OtlpAttributes = std::vector<std::pair<std::string, std::string>>;

struct OtlpBatch {
  OtlpAttributes resource;  // service.name first
  std::string scope_version;
  std::uint64_t start_unix_nano = 0;  // the counters' start: trainvisor's start
  std::uint64_t time_unix_nano = 0;   // when the figures were read
  MetricSet metrics;
};

// Field numbers of opentelemetry-proto's metrics.proto, common.proto, resource.proto and
// metrics_service.proto (each message's numbers beside its writer in otlp_encode.cc).
std::string otlp_protobuf(const OtlpBatch& b);
std::string otlp_json(const OtlpBatch& b);

}  // namespace tv
