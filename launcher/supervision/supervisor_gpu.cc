// The Supervisor's side of the GPU health watch (launcher/supervision/gpu_health_watch.h): each
// condition logged once, a fatal fault ending this node with exit_code::kNodeFault (the failure
// file names the GPU, the Xid and its meaning), `--gpu-health on` without NVML ending it with 69.
#include <spdlog/spdlog.h>

#include "common/exit_codes.h"
#include "launcher/supervision/supervisor.h"

namespace tv {

void Supervisor::on_gpu_health(const GpuHealthEvent& e) {
  using Kind = GpuHealthEvent::Kind;
  if (node_run_.ending()) return;
  if (cfg_.observer) cfg_.observer->gpu_health(e);
  switch (e.kind) {
    case Kind::kWatching:
      return spdlog::info("GPU health watch: watching this node's GPUs (pid {})",
                          gpu_watch_->pid());
    case Kind::kUnavailable:
      if (!cfg_.gpu_health_required)
        return spdlog::info("GPU health watch off (--gpu-health auto): {}", e.message);
      spdlog::error("--gpu-health on: the GPUs cannot be watched: {}", e.message);
      return node_run_.refuse(
          node_failure(plan_.generation, cfg_.layout.node_rank, exit_code::kPreflightFailed,
                       "--gpu-health on: the GPUs cannot be watched: " + e.message));
    case Kind::kNote:
      return spdlog::warn("GPU health watch: {}", e.message);
    case Kind::kXid:
    case Kind::kCondition:
      break;
    default:
      return;
  }
  if (e.fatal && e.active) return node_fault(e);
  const std::string key = std::to_string(e.gpu) + "/" +
                          (e.kind == Kind::kXid ? "xid" + std::to_string(e.xid) : e.condition);
  if (e.active && gpu_logged_.insert(key).second)
    spdlog::warn("GPU health: {} (logged once; on /metrics)", describe_gpu_event(e));
}

void Supervisor::node_fault(const GpuHealthEvent& e) {
  const std::string what = "node fault: " + describe_gpu_event(e) +
                           (e.kind == GpuHealthEvent::Kind::kXid ? "" : " (" + e.condition + ")");
  spdlog::error("{}: stopping this node's workers; exiting {} so that the node is replaced", what,
                exit_code::kNodeFault);
  node_run_.node_fault(
      node_failure(plan_.generation, cfg_.layout.node_rank, exit_code::kNodeFault, what),
      "node " + std::to_string(cfg_.layout.node_rank) + ": " + what +
          "; this node's GPU must be reset or the node replaced");
}

}  // namespace tv
