#include "launcher/node/gpu_verdict.h"

#include <spdlog/spdlog.h>

#include "common/exit_codes.h"

namespace tv {

GpuVerdict GpuEventReader::read(const GpuHealthEvent& e, pid_t watch_pid) {
  using Kind = GpuHealthEvent::Kind;
  switch (e.kind) {
    case Kind::kWatching:
      spdlog::info("GPU health watch: watching this node's GPUs (pid {})", watch_pid);
      return {};
    case Kind::kUnavailable: {
      if (!required_) {
        spdlog::info("GPU health watch off (--gpu-health auto): {}", e.message);
        return {};
      }
      const std::string what = "--gpu-health on: the GPUs cannot be watched: " + e.message;
      spdlog::error("{}", what);
      return {GpuVerdict::Kind::kRefuse, exit_code_of(ErrorKind::kPreflightFailed), what, ""};
    }
    case Kind::kNote:
      spdlog::warn("GPU health watch: {}", e.message);
      return {};
    case Kind::kXid:
    case Kind::kCondition:
      break;
    default:
      return {};
  }
  if (e.fatal && e.active) return node_fault(e);
  const std::string key = std::to_string(e.gpu) + "/" +
                          (e.kind == Kind::kXid ? "xid" + std::to_string(e.xid) : e.condition);
  if (e.active && logged_.insert(key).second)
    spdlog::warn("GPU health: {} (logged once; on /metrics)", describe_gpu_event(e));
  return {};
}

GpuVerdict GpuEventReader::node_fault(const GpuHealthEvent& e) const {
  const std::string what = "node fault: " + describe_gpu_event(e) +
                           (e.kind == GpuHealthEvent::Kind::kXid ? "" : " (" + e.condition + ")");
  spdlog::error("{}: stopping this node's workers; exiting {} so that the node is replaced", what,
                exit_code_of(ErrorKind::kNodeFault));
  return {GpuVerdict::Kind::kNodeFault, exit_code_of(ErrorKind::kNodeFault), what,
          "node " + std::to_string(node_rank_) + ": " + what +
              "; this node's GPU must be reset or the node replaced"};
}

}  // namespace tv
