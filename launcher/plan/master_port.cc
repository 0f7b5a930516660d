#include "launcher/plan/master_port.h"

#include "common/exit_codes.h"

namespace tv {

Status keep_master_port_apart(Topology& t, const std::vector<OwnPort>& own) {
  const std::string from = t.origin["master_port"];
  const bool named = from == "--master-port" || from == "TRAINVISOR_MASTER_PORT";
  for (const OwnPort& p : own) {
    if (p.port == 0 || p.port != t.master_port) continue;
    const std::string port = std::to_string(p.port);
    if (named && p.named)
      return Error{exit_code::kConfig,
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

}  // namespace tv
