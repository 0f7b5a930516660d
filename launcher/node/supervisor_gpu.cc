// The Supervisor's side of the GPU health watch (launcher/node/gpu_health_watch.h): each
// event told to the observer and read by GpuEventReader (gpu_verdict.h), whose verdict NodeRun
// carries out: a refusal (69) or a node fault (exit_code_of(ErrorKind::kNodeFault)).
#include "launcher/node/supervisor.h"

namespace tv {

void Supervisor::on_gpu_health(const GpuHealthEvent& e) {
  if (node_run_.ending()) return;
  if (cfg_.observer) cfg_.observer->gpu_health(e);
  const GpuVerdict v = gpu_events_.read(e, beside_.gpu_watch_pid());
  if (v.kind == GpuVerdict::Kind::kGoOn) return;
  const NodeFailure f =
      node_failure(plan_.generation, cfg_.layout.node_rank, v.exit_code, v.summary);
  if (v.kind == GpuVerdict::Kind::kRefuse) return node_run_.refuse(f);
  node_run_.node_fault(f, v.detail);
}

}  // namespace tv
