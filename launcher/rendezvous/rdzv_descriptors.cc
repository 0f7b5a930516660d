#include "launcher/rendezvous/rdzv_descriptors.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/exit_codes.h"
#include "launcher/rendezvous/rdzv_pending.h"

namespace tv {
namespace {

const char* const kHowToRaise =
    "docker/podman --ulimit nofile=N:N, systemd LimitNOFILE=N, /etc/security/limits.conf";

}  // namespace

CoordinatorDescriptors coordinator_descriptors(int nnodes, int workers) {
  const auto nodes = static_cast<std::uint64_t>(std::max(nnodes, 1));
  return {open_files_needed(workers) + nodes + 2, nodes + rdzv::pending_limits(nnodes).total + 64};
}

Status coordinator_descriptor_verdict(int nnodes, int workers, const OpenFileLimit& limit) {
  const CoordinatorDescriptors need = coordinator_descriptors(nnodes, workers);
  if (limit.soft == 0 || limit.soft >= need.least) return ok_status();
  return Error{ErrorKind::kOsError,
               "rdzv: node 0's open-file limit (RLIMIT_NOFILE) is " + std::to_string(limit.soft) +
                   " (hard limit " + std::to_string(limit.hard) + "), below the " +
                   std::to_string(need.least) + " descriptors that " + std::to_string(nnodes) +
                   " nodes need on node 0 at the least (a connection per node; about " +
                   std::to_string(need.comfortable) +
                   " while they all join): raise the hard limit (" + kHowToRaise + ")"};
}

Status reserve_coordinator_descriptors(int nnodes, int workers) {
  const OpenFileRaise r = raise_open_file_limit();
  const CoordinatorDescriptors need = coordinator_descriptors(nnodes, workers);
  if (r.after.soft != r.before.soft)
    spdlog::info(
        "rdzv: node 0 raised its soft open-file limit (RLIMIT_NOFILE) from {} to the hard limit "
        "{}: it holds a connection per node ({} nodes: up to about {} descriptors); its workers "
        "keep {}",
        r.before.soft, r.after.soft, nnodes, need.comfortable, r.before.soft);
  if (auto s = coordinator_descriptor_verdict(nnodes, workers, r.after); !s) return s;
  if (r.after.soft < need.comfortable)
    spdlog::warn(
        "rdzv: node 0's open-file limit is {} (hard limit {}), below the about {} descriptors "
        "that {} nodes need here: raise the hard limit ({})",
        r.after.soft, r.after.hard, need.comfortable, nnodes, kHowToRaise);
  return ok_status();
}

Status coordinator_descriptors_possible(int nnodes, int workers) {
  const OpenFileLimit now = open_file_limit();
  return coordinator_descriptor_verdict(nnodes, workers, {std::max(now.soft, now.hard), now.hard});
}

}  // namespace tv
