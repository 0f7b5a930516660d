// The OpenTelemetry variables of the OTLP push (pure): endpoints, protocols, headers, resource,
// interval and timeout, and one warning naming the variable for every bad value.
#include "launcher/observability/otlp_config.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

OtlpSetup read(std::map<std::string, std::string> vars) {
  return read_otlp_config(Environment(std::move(vars)));
}

TEST(OtlpConfig, NothingWithoutAnEndpointAndNoWarning) {
  const auto s = read({{"OTEL_SERVICE_NAME", "x"}});
  EXPECT_FALSE(s.config);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(OtlpConfig, TheBaseEndpointGetsTheSignalPathAndDefaults) {
  const auto s = read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"}});
  ASSERT_TRUE(s.config);
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(s.config->url, "http://collector:4318/v1/metrics");
  EXPECT_EQ(s.config->host, "collector");
  EXPECT_EQ(s.config->port, "4318");
  EXPECT_EQ(s.config->target, "/v1/metrics");
  EXPECT_TRUE(s.config->protobuf);  // http/protobuf is the specification's default
  EXPECT_EQ(s.config->interval.count(), 60000);
  EXPECT_EQ(s.config->timeout.count(), 10000);
  EXPECT_EQ(s.config->resource, (OtlpAttributes{{"service.name", "trainvisor"}}));
  const auto sub = read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://10.0.0.1/otlp"}});
  EXPECT_EQ(sub.config->target, "/otlp/v1/metrics");
  EXPECT_EQ(sub.config->port, "80");
}

TEST(OtlpConfig, TheMetricsEndpointIsUsedAsItIsAndWins) {
  const auto s = read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"},
                       {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://[::1]:4318/m?x=1"},
                       {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"},
                       {"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json"},
                       {"OTEL_EXPORTER_OTLP_TIMEOUT", "500"},
                       {"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "700"},
                       {"OTEL_METRIC_EXPORT_INTERVAL", "250"}});
  ASSERT_TRUE(s.config);
  EXPECT_EQ(s.config->target, "/m?x=1");
  EXPECT_EQ(s.config->host, "::1");
  EXPECT_FALSE(s.config->protobuf);
  EXPECT_EQ(s.config->timeout.count(), 700);
  EXPECT_EQ(s.config->interval.count(), 250);
}

TEST(OtlpConfig, HeadersAndResourceArePercentDecodedAndServiceNameWins) {
  const auto s = read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                       {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b, x=1"},
                       {"OTEL_EXPORTER_OTLP_METRICS_HEADERS", "authorization=Bearer%20t"},
                       {"OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,team=robots,k=%3D"},
                       {"OTEL_SERVICE_NAME", "cosmos3"}});
  ASSERT_TRUE(s.config);
  EXPECT_EQ(s.config->headers, (OtlpAttributes{{"authorization", "Bearer t"}}));
  EXPECT_EQ(s.config->resource,
            (OtlpAttributes{{"service.name", "cosmos3"}, {"team", "robots"}, {"k", "="}}));
  OtlpAttributes r = s.config->resource;
  add_identity(r, {{"team", "ignored"}, {"host.name", "n1"}});
  EXPECT_EQ(r.back(), (std::pair<std::string, std::string>{"host.name", "n1"}));
  EXPECT_EQ(r[1].second, "robots");  // the user's own attribute stays
  const auto attrs = read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                           {"OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs"}});
  EXPECT_EQ(attrs.config->resource[0].second, "from-attrs");
}

// Each bad value: one line naming the variable and what was expected.
TEST(OtlpConfig, BadValuesWarnOnceNamingTheVariable) {
  const std::string ep = "OTEL_EXPORTER_OTLP_ENDPOINT";
  struct Case {
    std::map<std::string, std::string> vars;
    bool pushes;
    std::string warning;
  };
  const std::vector<Case> cases = {
      {{{ep, "http://c:4318"}, {"OTEL_METRIC_EXPORT_INTERVAL", "abc"}},
       true,
       "OTEL_METRIC_EXPORT_INTERVAL=\"abc\": expected milliseconds"},
      {{{ep, "http://c:4318"}, {"OTEL_EXPORTER_OTLP_TIMEOUT", "-5"}},
       true,
       "OTEL_EXPORTER_OTLP_TIMEOUT=\"-5\": expected milliseconds"},
      {{{ep, "collector:4318"}},
       false,
       "OTEL_EXPORTER_OTLP_ENDPOINT=\"collector:4318\": expected a URL"},
      {{{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "c:4318/v1/metrics"}},
       false,
       "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=\"c:4318/v1/metrics\": expected a URL"},
      {{{ep, "https://c:4318"}}, false, "https is not supported"},
      {{{ep, "http://c:4318"}, {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}},
       false,
       "OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\": grpc is not supported"},
      {{{ep, "http://c:4318"}, {"OTEL_EXPORTER_OTLP_HEADERS", "novalue"}},
       true,
       "OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs"},
      {{{ep, "http://c:4318"}, {"OTEL_EXPORTER_OTLP_HEADERS", "k=%zz"}},
       true,
       "OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs"},
      {{{ep, "http://c:4318"}, {"OTEL_EXPORTER_OTLP_HEADERS", "k=a%0D%0AHost: evil"}},
       true,
       "OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs"},
      {{{ep, "http://c:4318"}, {"OTEL_EXPORTER_OTLP_HEADERS", "bad key=v"}},
       true,
       "OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs"},
      {{{ep, "http://c:4318"}, {"OTEL_RESOURCE_ATTRIBUTES", "=x"}},
       true,
       "OTEL_RESOURCE_ATTRIBUTES: expected key=value pairs"},
  };
  for (const auto& c : cases) {
    const auto s = read(c.vars);
    EXPECT_EQ(s.config.has_value(), c.pushes) << c.warning;
    ASSERT_EQ(s.warnings.size(), 1u) << c.warning;
    EXPECT_NE(s.warnings[0].find(c.warning), std::string::npos) << s.warnings[0];
    if (s.config) {
      EXPECT_EQ(s.config->interval.count(), 60000);
      EXPECT_TRUE(s.config->headers.empty());
    }
  }
}

TEST(OtlpConfig, TheSdkSwitchesTurnItOff) {
  const std::string ep = "OTEL_EXPORTER_OTLP_ENDPOINT";
  EXPECT_FALSE(read({{ep, "http://c:4318"}, {"OTEL_SDK_DISABLED", "TRUE"}}).config);
  EXPECT_TRUE(read({{ep, "http://c:4318"}, {"OTEL_SDK_DISABLED", "false"}}).config);
  const auto none = read({{ep, "http://c:4318"}, {"OTEL_METRICS_EXPORTER", "none"}});
  EXPECT_FALSE(none.config);
  EXPECT_TRUE(none.warnings.empty());
  const auto console = read({{ep, "http://c:4318"}, {"OTEL_METRICS_EXPORTER", "console"}});
  EXPECT_FALSE(console.config);
  EXPECT_EQ(console.warnings.size(), 1u);
  EXPECT_TRUE(read({{ep, "http://c:4318"}, {"OTEL_METRICS_EXPORTER", "otlp"}}).config);
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// --otlp-endpoint: trainvisor's own endpoint; the workers' grpc and SDK switches stay theirs.
TEST(OtlpConfig, TheOwnEndpointWinsOverTheWorkersVariables) {
  const Environment env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"},
                         {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
                         {"OTEL_SDK_DISABLED", "true"},
                         {"OTEL_SERVICE_NAME", "cosmos3"}});
  const auto s = read_otlp_config(env, OptionValue{"http://collector:4318", "--otlp-endpoint"});
  ASSERT_TRUE(s.config);
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_TRUE(s.refused.empty());
  EXPECT_EQ(s.config->url, "http://collector:4318/v1/metrics");
  EXPECT_TRUE(s.config->protobuf);
  EXPECT_EQ(s.config->resource[0].second, "cosmos3");
  Environment json = env;
  json.set("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json");
  EXPECT_FALSE(
      read_otlp_config(json, OptionValue{"http://c:4318", "--otlp-endpoint"}).config->protobuf);
}

TEST(OtlpConfig, ABadOwnEndpointIsRefusedNamingItsOrigin) {
  const auto s =
      read_otlp_config(Environment(), OptionValue{"collector:4318", "TRAINVISOR_OTLP_ENDPOINT"});
  EXPECT_FALSE(s.config);
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(
      s.refused,
      "TRAINVISOR_OTLP_ENDPOINT=\"collector:4318\": expected a URL http://HOST[:PORT][/PATH]");
}

}  // namespace
}  // namespace tv
