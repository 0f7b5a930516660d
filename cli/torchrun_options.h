// torchrun's own options (torch/distributed/run.py: get_args_parser) that `trainvisor run` takes
// so a torchrun line moves over by changing its first word: their rows, and what each one means
// here (apply_torchrun_options). docs/torchrun.md lists every option and its meaning.
#pragma once

#include <vector>

#include "common/options.h"
#include "common/result.h"

namespace tv {

// The rows: --rdzv-backend --rdzv-endpoint --rdzv-id --rdzv-conf --start-method
// --event-log-handler --run-path --redirects --tee --local-ranks-filter --local-addr
// --logs-specs --numa-binding --signals-to-handle.
std::vector<OptionSpec> torchrun_option_specs();

// Maps the torchrun options onto trainvisor's (the endpoint's host becomes --master-addr, its
// port the coordinator's --rdzv-port, rdzv_conf's timeouts ours, --nnodes N:N becomes N) and
// refuses, naming the option, what trainvisor does not do (etcd, --numa-binding,
// --logs-specs, redirects to files ...). Exit 64 for a refused option, 78 for a bad value.
Status apply_torchrun_options(Options& opts);

}  // namespace tv
