// torchrun's options onto trainvisor's. Source of each row: torch/distributed/run.py
// get_args_parser (pytorch/pytorch at 010929fd3f401c3868310396e6a91ed95aa0305b) and
// config_from_args / _parse_rendezvous_config for what the values mean.
#include "cli/torchrun_options.h"

#include <algorithm>

#include "common/escape.h"
#include "common/exit_codes.h"
#include "common/parse_number.h"

namespace tv {
namespace {

// torch's c10d rendezvous port when the endpoint names none (c10d_rendezvous_backend.py).
constexpr const char* kC10dDefaultPort = "29400";

Error usage(const std::string& msg) { return Error{ErrorKind::kUsage, msg}; }
Error config(const std::string& msg) { return Error{ErrorKind::kConfig, msg}; }

std::string shown(const OptionValue& v) {
  return v.origin + "=\"" + escape_control(v.value) + "\"";
}

bool given(const Options& o, const std::string& name) {
  auto v = o.get(name);
  return v && v->origin != "default";
}

// An option trainvisor takes only at the value that means "nothing asked": anything else is
// refused by name with why.
struct OnlyAt {
  const char* name;
  std::vector<std::string> values;
  const char* why;
};

const std::vector<OnlyAt>& only_at() {
  static const std::vector<OnlyAt> rows = {
      {"redirects", {"0"}, "per-rank output goes to --log-dir DIR (and the console) instead"},
      {"tee", {"0"}, "per-rank output goes to --log-dir DIR (and the console) instead"},
      {"local-ranks-filter", {""}, "every local rank's output is shown, prefixed with its rank"},
      {"local-addr", {}, "this node's address comes from the platform or the host"},
      {"logs-specs", {}, "trainvisor loads no torchrun.logs_specs entry point"},
      {"numa-binding", {}, "NUMA binding is not implemented"},
      {"event-log-handler", {"null"}, "trainvisor loads no torchelastic event handler"},
      {"signals-to-handle",
       {"SIGTERM,SIGINT,SIGHUP,SIGQUIT"},
       "trainvisor forwards TERM, INT and HUP to the workers' process groups"},
  };
  return rows;
}

// What an OnlyAt row accepts, for its refusal: "expected 0", "expected no --local-addr".
std::string expected_of(const OnlyAt& r) {
  if (r.values.empty() || r.values == std::vector<std::string>{""})
    return "expected no --" + std::string(r.name);
  return "expected " + r.values.front();
}

// A recognised option at a value trainvisor does not take is a bad value (78), named with why.
Status refuse_unsupported(const Options& o) {
  for (const auto& r : only_at()) {
    auto v = o.get(r.name);
    if (!v || std::find(r.values.begin(), r.values.end(), v->value) != r.values.end()) continue;
    return config(shown(*v) + ": not supported by trainvisor (" + r.why + "): " + expected_of(r));
  }
  // torchrun's -r/-t take a value, which a short option here cannot: name them, do not run them.
  if (!o.positional.empty() && o.positional[0].size() > 1 && o.positional[0][0] == '-' &&
      o.positional[0] != "--")
    return usage("unknown option " + o.positional[0] +
                 " (torchrun's -r/-t: spell them --redirects/--tee; see --help)");
  return ok_status();
}

Status map_backend(const Options& o) {
  auto v = o.get("rdzv-backend");
  if (!v || v->value == "c10d" || v->value == "static") return ok_status();
  return config(shown(*v) +
                ": trainvisor runs its own rendezvous (node rank 0's coordinator) and talks to no "
                "etcd: expected c10d or static, with --rdzv-endpoint HOST:PORT naming node rank 0");
}

struct Endpoint {
  std::string host, port;
};

// HOST, HOST:PORT, [V6], [V6]:PORT (run.py: "IPv6 should have the pattern [0:0:0:0:0:0:0:1]").
Result<Endpoint> split_endpoint(const OptionValue& v) {
  const std::string& s = v.value;
  const std::string want = ": expected HOST[:PORT] or [IPv6][:PORT], port from 1 to 65535";
  Endpoint e;
  std::string rest;
  if (s.starts_with("[")) {
    const auto close = s.find(']');
    if (close == std::string::npos || close == 1) return config(shown(v) + want);
    e.host = s.substr(1, close - 1);
    rest = s.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(":")) return config(shown(v) + want);
    if (!rest.empty()) rest = rest.substr(1);
  } else {
    const auto colon = s.find(':');
    if (colon != std::string::npos && s.find(':', colon + 1) != std::string::npos)
      return config(shown(v) + ": an IPv6 address goes in brackets" + want);
    e.host = s.substr(0, colon);
    if (colon != std::string::npos) rest = s.substr(colon + 1);
    if (colon != std::string::npos && rest.empty()) return config(shown(v) + want);
  }
  if (e.host.empty()) return config(shown(v) + want);
  e.port = rest.empty() ? kC10dDefaultPort : rest;
  if (!parse_integer<long>(e.port, 1, 65535)) return config(shown(v) + want);
  return e;
}

// The endpoint is where node rank 0's coordinator listens: its host is the master address, its
// port the coordinator's (--rdzv-port). An explicit --master-addr must name the same host.
Status map_endpoint(Options& o) {
  auto v = o.get("rdzv-endpoint");
  if (!v || v->value.empty()) return ok_status();
  auto e = split_endpoint(*v);
  if (!e) return e.error();
  // PET_RDZV_ENDPOINT (torchrun's env action) gives way to a --master-addr flag; its values are
  // explicit ones ("env PET_RDZV_ENDPOINT"), not the Kubeflow source's PET_ values.
  const bool from_pet = v->origin.starts_with("PET_");
  const std::string from = from_pet ? "env " + v->origin : v->origin;
  if (given(o, "master-addr") && !o.get("master-addr")->origin.starts_with("PET_")) {
    const OptionValue m = *o.get("master-addr");
    if (m.value != e->host && !from_pet)
      return config(shown(*v) + " conflicts with " + shown(m) +
                    ": expected one address of node rank 0, or only one of them");
  } else {
    o.set("master-addr", OptionValue{e->host, from});
  }
  if (!given(o, "rdzv-port")) o.set("rdzv-port", OptionValue{e->port, from});
  return ok_status();
}

// rdzv_conf: k=v,k=v (run.py _parse_rendezvous_config). The join timeout is ours; the read
// timeout is how long a silent node is waited for; last_call is elastic membership's window
// (--rdzv-last-call); close is accepted, no effect.
Status map_conf(Options& o) {
  auto v = o.get("rdzv-conf");
  if (!v || v->value.empty()) return ok_status();
  size_t at = 0;
  while (at <= v->value.size()) {
    const size_t comma = std::min(v->value.find(',', at), v->value.size());
    const std::string item = v->value.substr(at, comma - at);
    at = comma + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == item.npos ? "" : item.substr(eq + 1);
    if (eq == item.npos || key.empty())
      return config(shown(*v) + ": \"" + escape_control(item) + "\" is not KEY=VALUE");
    const char* ours = key == "join_timeout"        ? "rdzv-timeout"
                       : key == "read_timeout"      ? "peer-timeout"
                       : key == "last_call_timeout" ? "rdzv-last-call"
                                                    : nullptr;
    if (!ours && key != "close_timeout")
      return config(shown(*v) + ": key " + escape_control(key) +
                    " is not supported (expected join_timeout, read_timeout, last_call_timeout, "
                    "close_timeout)");
    if (!parse_finite(value, 0, 7 * 86400.0))
      return config(shown(*v) + ": " + escape_control(key) + "=\"" + escape_control(value) +
                    "\": expected seconds from 0 to 604800");
    if (ours && !given(o, ours)) o.set(ours, OptionValue{value, v->origin + " " + key});
  }
  return ok_status();
}

// --nnodes N:N is N; MIN:MAX with MIN < MAX stays as given: elastic membership, read by the
// topology (launcher/topology/topology.cc, nnodes_range). PET_NNODES stays the Kubeflow source's
// (launcher/topology/topology_kubeflow.cc).
Status map_nnodes(Options& o) {
  auto v = o.get("nnodes");
  if (!v || v->origin.starts_with("PET_") || v->value.find(':') == std::string::npos)
    return ok_status();
  const auto colon = v->value.find(':');
  const auto lo = parse_integer<long>(v->value.substr(0, colon), 1, 100000);
  const auto hi = parse_integer<long>(v->value.substr(colon + 1), 1, 100000);
  if (!lo || !hi || *lo > *hi)
    return config(shown(*v) + ": expected N or MIN:MAX with 1 <= MIN <= MAX <= 100000");
  if (*lo != *hi) return ok_status();
  o.set("nnodes", OptionValue{std::to_string(*hi), v->origin});
  return ok_status();
}

}  // namespace

std::vector<OptionSpec> torchrun_option_specs() {
  using T = OptionType;
  const char* only_default = "torchrun's; refused unless at its default";
  return {
      {.name = "rdzv-backend",
       .type = T::kChoice,
       .help = "torchrun's; c10d and static are trainvisor's own rendezvous, etcd is refused",
       .words = {"c10d", "static", "etcd", "etcd-v2"},
       .from_pet = true},
      {.name = "rdzv-endpoint",
       .help = "node rank 0's coordinator: HOST sets --master-addr, PORT (default 29400) "
               "--rdzv-port",
       .from_pet = true,
       .metavar = "HOST[:PORT]"},
      {.name = "rdzv-id",
       .help = "the job id (and TORCHELASTIC_RUN_ID)",
       .from_pet = true,
       .metavar = "ID"},
      {.name = "rdzv-conf",
       .help = "join_timeout sets --rdzv-timeout, read_timeout --peer-timeout, "
               "last_call_timeout --rdzv-last-call; close_timeout has no effect; other keys are "
               "refused",
       .from_pet = true,
       .metavar = "K=V,..."},
      {.name = "start-method",
       .type = T::kChoice,
       .help = "accepted; every worker is a fresh process (fork and exec: spawn's meaning)",
       .words = {"spawn", "fork", "forkserver"}},
      {.name = "run-path",
       .type = T::kFlag,
       .help = "accepted; the script runs as with python3 -u SCRIPT"},
      {.name = "redirects", .help = only_default + std::string(" 0; use --log-dir")},
      {.name = "tee", .help = only_default + std::string(" 0; use --log-dir")},
      {.name = "local-ranks-filter", .help = "torchrun's; refused", .metavar = "R,R"},
      {.name = "local-addr", .help = "torchrun's; refused", .metavar = "HOST"},
      {.name = "logs-specs", .help = "torchrun's; refused", .metavar = "NAME"},
      {.name = "numa-binding", .help = "torchrun's; refused", .metavar = "MODE"},
      {.name = "event-log-handler", .help = only_default + std::string(" null")},
      {.name = "signals-to-handle", .help = only_default + std::string(" list")},
  };
}

Status apply_torchrun_options(Options& opts) {
  for (auto step : {refuse_unsupported, map_backend})
    if (auto s = step(opts); !s) return s;
  for (auto step : {map_endpoint, map_conf, map_nnodes})
    if (auto s = step(opts); !s) return s;
  if (auto id = opts.get("rdzv-id"); id && id->value != "none" && !given(opts, "run-id"))
    opts.set("run-id", *id);
  return ok_status();
}

}  // namespace tv
