// What `--require-transport` accepts, in one place (see docs/health.md):
//   any  whatever NCCL chose, but never an NCCL that did not initialize;
//   net  an RDMA network between nodes: EFA (aws-ofi-nccl over the efa provider), InfiniBand, or
//        libfabric over another RDMA provider; never NET/Socket nor libfabric's tcp/sockets/udp;
//   efa  only aws-ofi-nccl over libfabric's efa provider.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "health/nccl_log.h"
#include "health/preflight.h"

namespace tv {

struct TransportVerdict {
  Outcome outcome;
  std::string message;
};

// `required` is resolved (any, net or efa; never auto). The message says what NCCL used and, on
// failure, why it usually happens.
TransportVerdict judge_transport(const NcclLogSummary& log, TransportRule required);

// Why an EFA job ends up on TCP, in words a user can act on (one paragraph).
const std::string& efa_fallback_causes();

// The NCCL_NET value that makes every aws-ofi-nccl version fail at init instead of falling back:
// plugins <= 1.11 are named "AWS Libfabric"; later ones are named "Libfabric" but rename
// themselves back to "AWS Libfabric" when NCCL_NET says so (nvidia_plugin_name_fixup).
inline constexpr const char* kEfaNcclNet = "AWS Libfabric";

}  // namespace tv
