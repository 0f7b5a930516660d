#include "launcher/plan/master_port.h"

#include "common/exit_codes.h"

namespace tv {
namespace {

// Given by trainvisor's own option `name` (flag or TRAINVISOR_* variable).
bool own_option(const std::optional<OptionValue>& v, const std::string& name,
                const std::string& var) {
  return v && (v->origin == "--" + name || v->origin == var);
}

}  // namespace

Status keep_master_port_apart(Topology& t, const std::vector<OwnPort>& own) {
  const std::string from = t.origin["master_port"];
  const bool named = from == "--master-port" || from == "TRAINVISOR_MASTER_PORT";
  for (const OwnPort& p : own) {
    if (p.port == 0 || p.port != t.master_port) continue;
    const std::string port = std::to_string(p.port);
    if (named && p.named)
      return Error{ErrorKind::kConfig,
                   from + "=\"" + port + "\" is " + p.what + " (" + p.origin +
                       "): expected another port: rank 0's worker listens on MASTER_PORT, "
                       "trainvisor on " +
                       port};
    t.master_port = 0;
    t.origin["master_port"] =
        "chosen at generation 0: a free port from the kernel on node 0, "
        "as at every restart (" +
        port + " from " + from + " is " + p.what + ", from " + p.origin + ")";
    return ok_status();
  }
  return ok_status();
}

std::vector<OwnPort> own_ports(const ListenersAsked& a) {
  std::vector<OwnPort> own;
  if (a.nnodes > 1)
    own.push_back({a.rdzv_port, "the rendezvous coordinator's port",
                   a.rdzv_option ? a.rdzv_option->origin : "default (master port + 1)",
                   own_option(a.rdzv_option, "rdzv-port", "TRAINVISOR_RDZV_PORT")});
  if (a.metrics_option)
    own.push_back({a.metrics_port, "the metrics server's port", a.metrics_option->origin,
                   own_option(a.metrics_option, "metrics-port", "TRAINVISOR_METRICS_PORT")});
  return own;
}

Status master_port_rule(Topology& t, const ListenersAsked& asked) {
  return keep_master_port_apart(t, own_ports(asked));
}

}  // namespace tv
