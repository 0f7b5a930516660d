// The workers' MASTER_PORT is never a port trainvisor itself listens on (docs/topology.md,
// "Master port"). torchrun's meaning: with c10d rendezvous the endpoint's port hosts the
// rendezvous store and the workers' MASTER_PORT is another free port the agent picks, so a
// launcher line `--rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT` under an operator that also sets
// PET_MASTER_PORT (training-operator v1.7+: the same port in both) names one port twice. Rank 0's
// TCPStore would fail with EADDRINUSE on the coordinator's socket.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/options.h"
#include "common/result.h"
#include "launcher/topology/topology.h"

namespace tv {

// A port trainvisor listens on.
struct OwnPort {
  int port = 0;        // 0: nothing listens
  std::string what;    // "the rendezvous coordinator's port"
  std::string origin;  // "--rdzv-endpoint", "default (master port + 1)", "--metrics-port"
  bool named = false;  // given by trainvisor's own option for it (--rdzv-port, --metrics-port)
};

// When t.master_port is one of `own`: 78 when both ports were named by trainvisor's own options
// (--master-port or TRAINVISOR_MASTER_PORT, and the other's own option: one port asked for two
// things); else t.master_port becomes 0, which JobStateMachine reads as "generation 0 takes a fresh
// port from the kernel, as every restart does", with its origin saying why.
Status keep_master_port_apart(Topology& t, const std::vector<OwnPort>& own);

// The ports this node's trainvisor listens on: the rendezvous coordinator's (on several nodes
// only) and the metrics server's (when --metrics-port has a value). Each is `named` when its value
// came from trainvisor's own option for it (--rdzv-port or TRAINVISOR_RDZV_PORT, --metrics-port or
// TRAINVISOR_METRICS_PORT), not from torchrun's --rdzv-endpoint, a default or PET_*.
struct ListenersAsked {
  int nnodes = 1;
  int rdzv_port = 0;                          // rendezvous_port_rule's
  std::optional<OptionValue> rdzv_option;     // --rdzv-port's value, where it has one
  int metrics_port = 0;                       // read_observability_options's
  std::optional<OptionValue> metrics_option;  // --metrics-port's value, where it has one
};
std::vector<OwnPort> own_ports(const ListenersAsked& asked);

// The ports rule: the workers' MASTER_PORT kept apart from own_ports(asked).
Status master_port_rule(Topology& t, const ListenersAsked& asked);

}  // namespace tv
