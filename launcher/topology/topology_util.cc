#include <arpa/inet.h>

#include <charconv>

#include "common/escape.h"
#include "common/exit_codes.h"
#include "common/parse_number.h"
#include "launcher/topology/topology_sources.h"

namespace tv::topo {

Error config_error(const std::string& message) { return Error{ErrorKind::kConfig, message}; }

Error bad_var(const std::string& name, const std::string& value, const std::string& expected) {
  return config_error(name + "=\"" + escape_control(value) + "\": expected " + expected);
}

Result<std::optional<long>> env_int(const Environment& env, const std::string& name, long min,
                                    long max, const std::string& why_range) {
  auto v = env.get(name);
  if (!v || v->empty()) return std::optional<long>();
  const auto out = parse_integer<long>(*v, min, max);
  if (!out)
    return bad_var(name, *v,
                   "an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                       (why_range.empty() ? "" : " (" + why_range + ")"));
  return std::optional<long>(*out);
}

Result<long> env_int_required(const Environment& env, const std::string& name, long min, long max,
                              const std::string& why_range, const std::string& needed_for) {
  auto v = env_int(env, name, min, max, why_range);
  if (!v) return v.error();
  if (!*v)
    return config_error(name + " is not set: expected an integer from " + std::to_string(min) +
                        " to " + std::to_string(max) + " (" + needed_for + ")");
  return **v;
}

// A DNS name or an IPv4/IPv6 address: printable ASCII without spaces, at most 255 bytes.
bool plausible_host(const std::string& s) {
  if (s.empty() || s.size() > 255) return false;
  for (unsigned char c : s)
    if (c <= ' ' || c >= 127) return false;
  if (s.front() != '[' && s.back() != ']') return true;
  in6_addr a{};
  return s.size() > 2 && s.front() == '[' && s.back() == ']' &&
         ::inet_pton(AF_INET6, s.substr(1, s.size() - 2).c_str(), &a) == 1;
}

std::string unbracketed_host(const std::string& s) {
  if (s.size() > 2 && s.front() == '[' && s.back() == ']') return s.substr(1, s.size() - 2);
  return s;
}

Topology local_source() {
  Topology t;
  t.platform = Platform::kLocal;
  t.origin["nnodes"] = "local (one node)";
  t.origin["node_rank"] = "local (one node)";
  t.origin["master_addr"] = "default";
  return t;
}

}  // namespace tv::topo
