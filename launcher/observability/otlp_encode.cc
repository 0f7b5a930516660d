#include "launcher/observability/otlp_encode.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "launcher/observability/proto_writer.h"

namespace tv {
namespace {

using nlohmann::json;

constexpr std::uint64_t kCumulative = 2;  // AGGREGATION_TEMPORALITY_CUMULATIVE
const char* const kScope = "trainvisor";

// common.v1.KeyValue {key = 1; AnyValue value = 2}, AnyValue {string_value = 1}.
ProtoWriter key_value(const std::string& key, const std::string& value) {
  ProtoWriter any, kv;
  any.bytes(1, value);
  kv.bytes(1, key);
  kv.message(2, any);
  return kv;
}

// metrics.v1.NumberDataPoint {attributes = 7; start_time_unix_nano = 2; time_unix_nano = 3;
// as_double = 4}; a gauge has no start time.
ProtoWriter data_point(const OtlpBatch& b, const MetricSample& s, bool counter) {
  ProtoWriter p;
  for (const auto& [k, v] : s.labels) p.message(7, key_value(k, v));
  if (counter) p.fixed64(2, b.start_unix_nano);
  p.fixed64(3, b.time_unix_nano);
  p.float64(4, s.value);
  return p;
}

// metrics.v1.Metric {name = 1; description = 2; gauge = 5; sum = 7}; Gauge {data_points = 1};
// Sum {data_points = 1; aggregation_temporality = 2; is_monotonic = 3}. A family with no
// sample yet (no worker exit) is left out: a metric without a point says nothing.
ProtoWriter metric(const OtlpBatch& b, const MetricFamily& f) {
  ProtoWriter data;
  for (const auto& s : f.samples) data.message(1, data_point(b, s, f.counter));
  if (f.counter) {
    data.varint(2, kCumulative);
    data.varint(3, 1);
  }
  ProtoWriter m;
  m.bytes(1, f.name);
  m.bytes(2, f.help);
  m.message(f.counter ? 7 : 5, data);
  return m;
}

json attributes_json(const OtlpAttributes& attrs) {
  json a = json::array();
  for (const auto& [k, v] : attrs) a.push_back({{"key", k}, {"value", {{"stringValue", v}}}});
  return a;
}

// Proto3's JSON form of a double: a number, or "NaN" / "Infinity" / "-Infinity".
json double_json(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

json metric_json(const OtlpBatch& b, const MetricFamily& f) {
  json points = json::array();
  for (const auto& s : f.samples) {
    json p = {{"timeUnixNano", std::to_string(b.time_unix_nano)},
              {"asDouble", double_json(s.value)}};
    if (!s.labels.empty()) p["attributes"] = attributes_json(s.labels);
    if (f.counter) p["startTimeUnixNano"] = std::to_string(b.start_unix_nano);
    points.push_back(std::move(p));
  }
  json m = {{"name", f.name}, {"description", f.help}};
  if (f.counter)
    m["sum"] = {
        {"dataPoints", points}, {"aggregationTemporality", kCumulative}, {"isMonotonic", true}};
  else
    m["gauge"] = {{"dataPoints", points}};
  return m;
}

}  // namespace

// ExportMetricsServiceRequest {resource_metrics = 1}; ResourceMetrics {resource = 1;
// scope_metrics = 2}; Resource {attributes = 1}; ScopeMetrics {scope = 1; metrics = 2};
// InstrumentationScope {name = 1; version = 2}.
std::string otlp_protobuf(const OtlpBatch& b) {
  ProtoWriter resource, scope, scope_metrics, resource_metrics, request;
  for (const auto& [k, v] : b.resource) resource.message(1, key_value(k, v));
  scope.bytes(1, kScope);
  scope.bytes(2, b.scope_version);
  scope_metrics.message(1, scope);
  for (const auto& f : b.metrics)
    if (!f.samples.empty()) scope_metrics.message(2, metric(b, f));
  resource_metrics.message(1, resource);
  resource_metrics.message(2, scope_metrics);
  request.message(1, resource_metrics);
  return request.data();
}

std::string otlp_json(const OtlpBatch& b) {
  json metrics = json::array();
  for (const auto& f : b.metrics)
    if (!f.samples.empty()) metrics.push_back(metric_json(b, f));
  json scope = {{"scope", {{"name", kScope}, {"version", b.scope_version}}}, {"metrics", metrics}};
  json rm = {{"resource", {{"attributes", attributes_json(b.resource)}}},
             {"scopeMetrics", json::array({scope})}};
  return json{{"resourceMetrics", json::array({rm})}}.dump(-1, ' ', false,
                                                           json::error_handler_t::replace);
}

}  // namespace tv
