// The OTLP encoders (pure): the protobuf bytes against hand-computed wire format, field by field
// (the field numbers of opentelemetry-proto), and the JSON form's names and types. The whole
// messages are decoded with OpenTelemetry's own definitions in tests/integration/test_otlp.py.
#include "launcher/observability/otlp_encode.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "launcher/observability/proto_writer.h"

namespace tv {
namespace {

using nlohmann::json;

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

TEST(ProtoWriter, VarintsFixedAndLengthDelimited) {
  ProtoWriter w;
  w.varint(1, 150);  // protobuf.dev's example: 08 96 01
  EXPECT_EQ(w.data(), bytes({0x08, 0x96, 0x01}));
  ProtoWriter f;
  f.fixed64(2, 1);
  EXPECT_EQ(f.data(), bytes({0x11, 1, 0, 0, 0, 0, 0, 0, 0}));
  ProtoWriter d;
  d.float64(4, 1.0);  // 0x3ff0000000000000 little-endian
  EXPECT_EQ(d.data(), bytes({0x21, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
  ProtoWriter s;
  s.bytes(2, "testing");  // protobuf.dev: 12 07 74 65 73 74 69 6e 67
  EXPECT_EQ(s.data(), bytes({0x12, 0x07}) + "testing");
  ProtoWriter big;
  big.bytes(1, std::string(300, 'x'));  // a length of two varint bytes: ac 02
  EXPECT_EQ(big.data().substr(0, 3), bytes({0x0a, 0xac, 0x02}));
  ProtoWriter hi;
  hi.varint(16, 0);  // field 16: a two-byte tag 80 01
  EXPECT_EQ(hi.data(), bytes({0x80, 0x01, 0x00}));
}

OtlpBatch one_counter_one_gauge() {
  OtlpBatch b;
  b.resource = {{"service.name", "svc"}};
  b.scope_version = "1.0";
  b.start_unix_nano = 1;
  b.time_unix_nano = 2;
  b.metrics = {{"c_total", true, "h", {{{{"k", "v"}}, 3.0}}}, {"g", false, "", {{{}, 0.5}}}};
  return b;
}

TEST(OtlpProtobuf, EveryFieldNumberAndWireType) {
  const OtlpBatch b = one_counter_one_gauge();
  auto kv = [](const std::string& k, const std::string& v) {
    ProtoWriter any, w;
    any.bytes(1, v);
    w.bytes(1, k);
    w.message(2, any);
    return w;
  };
  ProtoWriter resource, scope, sum_point, sum, counter, gauge_point, gauge, g, sm, rm, req;
  resource.message(1, kv("service.name", "svc"));
  scope.bytes(1, "trainvisor");
  scope.bytes(2, "1.0");
  sum_point.message(7, kv("k", "v"));
  sum_point.fixed64(2, 1);
  sum_point.fixed64(3, 2);
  sum_point.float64(4, 3.0);
  sum.message(1, sum_point);
  sum.varint(2, 2);  // AGGREGATION_TEMPORALITY_CUMULATIVE
  sum.varint(3, 1);  // is_monotonic
  counter.bytes(1, "c_total");
  counter.bytes(2, "h");
  counter.message(7, sum);    // Metric.sum = 7
  gauge_point.fixed64(3, 2);  // a gauge has no start time
  gauge_point.float64(4, 0.5);
  gauge.message(1, gauge_point);
  g.bytes(1, "g");
  g.bytes(2, "");
  g.message(5, gauge);  // Metric.gauge = 5
  sm.message(1, scope);
  sm.message(2, counter);
  sm.message(2, g);
  rm.message(1, resource);
  rm.message(2, sm);
  req.message(1, rm);
  EXPECT_EQ(otlp_protobuf(b), req.data());
  // The outermost bytes by hand: field 1, wire type 2 (0x0a), then the length as a two-byte
  // varint (the request is 128 bytes or more, less than 16 KiB).
  const std::string out = otlp_protobuf(b);
  ASSERT_GE(out.size(), 3u);
  EXPECT_EQ(out[0], 0x0a);
  const auto b1 = static_cast<unsigned char>(out[1]), b2 = static_cast<unsigned char>(out[2]);
  EXPECT_TRUE(b1 & 0x80);
  EXPECT_EQ((b1 & 0x7fu) | (static_cast<unsigned>(b2) << 7), out.size() - 3);
}

TEST(OtlpJson, CamelCaseStringIntegersAndNumericEnums) {
  const json j = json::parse(otlp_json(one_counter_one_gauge()));
  const json& rm = j["resourceMetrics"][0];
  EXPECT_EQ(rm["resource"]["attributes"][0],
            json({{"key", "service.name"}, {"value", {{"stringValue", "svc"}}}}));
  const json& sm = rm["scopeMetrics"][0];
  EXPECT_EQ(sm["scope"], json({{"name", "trainvisor"}, {"version", "1.0"}}));
  const json& c = sm["metrics"][0];
  EXPECT_EQ(c["name"], "c_total");
  EXPECT_EQ(c["description"], "h");
  EXPECT_EQ(c["sum"]["aggregationTemporality"], 2);
  EXPECT_EQ(c["sum"]["isMonotonic"], true);
  const json& p = c["sum"]["dataPoints"][0];
  EXPECT_EQ(p["startTimeUnixNano"], "1");  // 64-bit integers are strings in the JSON mapping
  EXPECT_EQ(p["timeUnixNano"], "2");
  EXPECT_EQ(p["asDouble"], 3.0);
  EXPECT_EQ(p["attributes"][0]["value"]["stringValue"], "v");
  const json& g = sm["metrics"][1]["gauge"]["dataPoints"][0];
  EXPECT_FALSE(g.contains("startTimeUnixNano"));
  EXPECT_FALSE(g.contains("attributes"));
  EXPECT_EQ(g["asDouble"], 0.5);
}

TEST(OtlpJson, NonFiniteDoublesAreProto3Strings) {
  OtlpBatch b = one_counter_one_gauge();
  b.metrics[1].samples[0].value = std::numeric_limits<double>::quiet_NaN();
  b.metrics[0].samples[0].value = std::numeric_limits<double>::infinity();
  const json j = json::parse(otlp_json(b));
  const json& m = j["resourceMetrics"][0]["scopeMetrics"][0]["metrics"];
  EXPECT_EQ(m[0]["sum"]["dataPoints"][0]["asDouble"], "Infinity");
  EXPECT_EQ(m[1]["gauge"]["dataPoints"][0]["asDouble"], "NaN");
}

TEST(OtlpEncode, AFamilyWithoutSamplesIsLeftOut) {
  OtlpBatch b = one_counter_one_gauge();
  b.metrics.push_back({"empty_total", true, "none yet", {}});
  const json j = json::parse(otlp_json(b));
  EXPECT_EQ(j["resourceMetrics"][0]["scopeMetrics"][0]["metrics"].size(), 2u);
  EXPECT_EQ(otlp_protobuf(b), otlp_protobuf(one_counter_one_gauge()));
}

TEST(OtlpJson, TextThatIsNotUtf8IsReplacedNotThrown) {
  OtlpBatch b = one_counter_one_gauge();
  b.metrics[0].samples[0].labels[0].second = "\xff";
  EXPECT_NO_THROW(json::parse(otlp_json(b)));
}

}  // namespace
}  // namespace tv
