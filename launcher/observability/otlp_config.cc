#include "launcher/observability/otlp_config.h"

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/pct_string_view.hpp>
#include <cctype>
#include <tuple>

#include "common/parse_number.h"

namespace tv {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// The signal's own variable, else the general one: {name, value}; value empty when neither.
std::pair<std::string, std::string> either(const Environment& env, const std::string& metrics,
                                           const std::string& general) {
  for (const auto& name : {metrics, general})
    if (auto v = env.get(name); v && !trim(*v).empty()) return {name, trim(*v)};
  return {"", ""};
}

std::string quoted(const std::string& name, const std::string& value) {
  std::string out = name;
  out += "=\"";
  out += value;
  out += '"';
  return out;
}

// A list of key=value pairs (the W3C Baggage form: values percent-encoded), as
// OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES spell them; nullopt when an entry has no
// '=' or no key, or a value is not percent-encoding.
std::optional<OtlpAttributes> key_values(const std::string& text) {
  OtlpAttributes out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string entry = trim(std::string_view(text).substr(start, end - start));
    start = end + 1;
    if (entry.empty()) continue;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) return std::nullopt;
    std::string key = trim(std::string_view(entry).substr(0, eq));
    // The view refers to `raw`, which must outlive it (a temporary here was a use after scope).
    const std::string raw = trim(std::string_view(entry).substr(eq + 1));
    auto value = boost::urls::make_pct_string_view(raw);
    if (key.empty() || !value) return std::nullopt;
    out.emplace_back(std::move(key), value->decode());
  }
  return out;
}

std::chrono::milliseconds millis(const Environment& env, const std::string& name,
                                 std::chrono::milliseconds fallback, OtlpSetup& s) {
  auto v = env.get(name);
  if (!v || trim(*v).empty()) return fallback;
  if (auto ms = parse_integer<long long>(trim(*v), 1, 24LL * 3600 * 1000))
    return std::chrono::milliseconds(*ms);
  std::string w = "OTLP push: ";
  w += quoted(name, *v);
  w += ": expected milliseconds, a whole number from 1 to 86400000; using ";
  w += std::to_string(fallback.count());
  s.warnings.push_back(std::move(w));
  return fallback;
}

// The URL: http:// only (docs/observability.md says why); false with a warning otherwise.
// `value`: the variable's own, for the message.
bool read_url(const std::string& name, const std::string& value, const std::string& url,
              OtlpConfig& c, OtlpSetup& s) {
  auto u = boost::urls::parse_uri(url);
  std::string w = "OTLP push off: ";
  w += quoted(name, value);
  if (!u || u->scheme_id() != boost::urls::scheme::http || u->host_address().empty()) {
    w += lower(url).starts_with("https://")
             ? ": https is not supported; expected http://HOST[:PORT] (a collector on the node "
               "or in the pod, OTLP/HTTP's port 4318)"
             : ": expected a URL http://HOST[:PORT][/PATH]";
    s.warnings.push_back(std::move(w));
    return false;
  }
  c.url = url;
  c.host = u->host_address();
  c.port = u->port().empty() ? "80" : std::string(u->port());
  c.target = u->encoded_path().empty() ? "/" : std::string(u->encoded_path());
  if (u->has_query()) {
    c.target += '?';
    c.target += u->encoded_query();
  }
  return true;
}

bool read_protocol(const Environment& env, OtlpConfig& c, OtlpSetup& s) {
  auto [name, value] =
      either(env, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
  if (value.empty() || value == "http/protobuf") return true;
  if (value == "http/json") {
    c.protobuf = false;
    return true;
  }
  std::string w = "OTLP push off: ";
  w += quoted(name, value);
  w += value == "grpc" ? ": grpc is not supported; expected http/protobuf or http/json (OTLP/HTTP, "
                         "a collector's port 4318)"
                       : ": expected http/protobuf or http/json";
  s.warnings.push_back(std::move(w));
  return false;
}

// An HTTP field: the name a token (RFC 9110), the value without control characters (a decoded
// %0D%0A never starts a header of its own).
bool http_field(const std::pair<std::string, std::string>& kv) {
  auto token = [](unsigned char c) {
    return std::isalnum(c) ||
           std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  };
  auto visible = [](unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); };
  return std::all_of(kv.first.begin(), kv.first.end(), token) &&
         std::all_of(kv.second.begin(), kv.second.end(), visible);
}

void read_headers(const Environment& env, OtlpConfig& c, OtlpSetup& s) {
  auto [name, value] =
      either(env, "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS");
  if (value.empty()) return;
  auto h = key_values(value);
  if (!h || !std::all_of(h->begin(), h->end(), http_field)) {
    s.warnings.push_back("OTLP push: " + name +
                         ": expected key=value pairs separated by commas, values "
                         "percent-encoded, keys HTTP field names, no control characters; the "
                         "variable is ignored");
    return;
  }
  c.headers = std::move(*h);
}

void read_resource(const Environment& env, OtlpConfig& c, OtlpSetup& s) {
  OtlpAttributes attrs;
  if (auto v = env.get("OTEL_RESOURCE_ATTRIBUTES"); v && !trim(*v).empty()) {
    if (auto a = key_values(*v))
      attrs = std::move(*a);
    else
      s.warnings.push_back(
          "OTLP push: OTEL_RESOURCE_ATTRIBUTES: expected key=value pairs separated by commas, "
          "values percent-encoded; the variable is ignored");
  }
  std::string service = "trainvisor";
  for (const auto& [k, v] : attrs)
    if (k == "service.name") service = v;
  if (auto v = env.get("OTEL_SERVICE_NAME"); v && !trim(*v).empty()) service = trim(*v);
  c.resource.emplace_back("service.name", service);
  for (auto& kv : attrs)
    if (kv.first != "service.name") c.resource.push_back(std::move(kv));
}

bool wanted(const Environment& env, OtlpSetup& s) {
  if (lower(trim(env.get("OTEL_SDK_DISABLED").value_or(""))) == "true") return false;
  const std::string exporters = lower(trim(env.get("OTEL_METRICS_EXPORTER").value_or("")));
  if (exporters.empty() || exporters.find("otlp") != std::string::npos) return true;
  if (exporters != "none")
    s.warnings.push_back(quoted("OTEL_METRICS_EXPORTER", exporters) +
                         ": trainvisor pushes otlp only (or none); no push");
  return false;
}

// The base URL's signal path (the specification's rule for OTEL_EXPORTER_OTLP_ENDPOINT).
std::string with_signal_path(std::string url) {
  while (url.ends_with('/')) url.pop_back();
  url += "/v1/metrics";
  return url;
}

// --otlp-endpoint: trainvisor's own, over the OTEL_* endpoints and whatever the SDK switches say
// (they are the workers' too); OTLP/HTTP whatever protocol the workers' variables name (http/json
// when they name it, else http/protobuf). A bad URL refuses the run: it is trainvisor's option.
bool read_own_endpoint(const Environment& env, const OptionValue& own, OtlpConfig& c,
                       OtlpSetup& s) {
  if (!read_url(own.origin, own.value, with_signal_path(own.value), c, s)) {
    s.refused = s.warnings.back().substr(std::string("OTLP push off: ").size());
    s.warnings.pop_back();
    return false;
  }
  auto protocol = either(env, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
  c.protobuf = protocol.second != "http/json";
  return true;
}

bool read_endpoint(const Environment& env, OtlpConfig& c, OtlpSetup& s) {
  auto [name, value] = either(env, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "");
  std::string url = value;  // the signal's own endpoint, as it is
  if (url.empty()) {
    std::tie(name, value) = either(env, "OTEL_EXPORTER_OTLP_ENDPOINT", "");
    if (value.empty()) return false;  // nothing asked for
    url = with_signal_path(value);
  }
  return read_url(name, value, url, c, s) && read_protocol(env, c, s);
}

}  // namespace

void add_identity(OtlpAttributes& resource, const OtlpAttributes& identity) {
  for (const auto& kv : identity)
    if (std::none_of(resource.begin(), resource.end(),
                     [&kv](const auto& r) { return r.first == kv.first; }))
      resource.push_back(kv);
}

OtlpSetup read_otlp_config(const Environment& env, const std::optional<OptionValue>& own) {
  OtlpSetup s;
  OtlpConfig c;
  if (own ? !read_own_endpoint(env, *own, c, s) : !wanted(env, s) || !read_endpoint(env, c, s))
    return s;
  read_headers(env, c, s);
  read_resource(env, c, s);
  c.interval = millis(env, "OTEL_METRIC_EXPORT_INTERVAL", c.interval, s);
  const auto timeout =
      either(env, "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT");
  if (!timeout.first.empty()) c.timeout = millis(env, timeout.first, c.timeout, s);
  s.config = std::move(c);
  return s;
}

}  // namespace tv
