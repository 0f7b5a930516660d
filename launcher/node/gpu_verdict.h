// What a GPU health event (gpu_health_watch.h) means for this node's run: the one owner of that
// decision (docs/health.md, "While training"). A fatal condition or Xid that became active ends
// the node with exit_code_of(ErrorKind::kNodeFault), its failure file naming the GPU, the fault and
// its meaning;
// `--gpu-health on` with GPUs that cannot be watched refuses the run (69); every other condition is
// logged once (it is on /metrics) and the run goes on. Pure but for its log lines.
#pragma once

#include <sys/types.h>

#include <set>
#include <string>

#include "launcher/node/gpu_health_watch.h"

namespace tv {

struct GpuVerdict {
  enum class Kind { kGoOn, kRefuse, kNodeFault };
  Kind kind = Kind::kGoOn;
  int exit_code = 0;
  std::string summary;  // the node's failure, one line
  std::string detail;   // a node fault's text for the failure file
};

class GpuEventReader {
 public:
  // `required`: --gpu-health on.
  GpuEventReader(bool required, int node_rank) : required_(required), node_rank_(node_rank) {}
  // `watch_pid`: the watch child's, for its "watching" line.
  GpuVerdict read(const GpuHealthEvent& e, pid_t watch_pid);

 private:
  GpuVerdict node_fault(const GpuHealthEvent& e) const;

  bool required_;
  int node_rank_;
  std::set<std::string> logged_;  // the conditions logged already (once each)
};

}  // namespace tv
